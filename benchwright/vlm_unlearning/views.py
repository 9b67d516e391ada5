"""The three views of an example (no Beam): multimodal, text-only (image described in the prompt),
image-only (the instruction rendered into an image, FigStep-style), and their LLaVA conversations.

**The typographic render** is FigStep's ``text_to_image`` (ThuCCSLab/FigStep
``src/generate_prompts.py``) by default (style ``figstep``): ``FreeMonoBold.ttf`` at size 80 on an RGB
760x760 white canvas, black text drawn from (20, 10) with 11 px between lines, the text wrapped at 15
characters (``textwrap.fill``). FigStep lets text longer than the canvas run off it (clipped); here
only such a text is drawn smaller, at the largest size that fits inside the canvas with FigStep's
margins (x on the right, y at the bottom), and its row says so (``render.shrunk``); every other
render is FigStep's image pixel for pixel (``tests/test_vlm_unlearning_views.py`` compares with
images FigStep published). The font is the system's (Debian's ``fonts-freefont-ttf``, which
``scripts/setup.sh`` installs), found by name in the font folders Pillow searches, never in the
working directory. Style ``dejavu`` (``--render dejavu``) draws the same layout in DejaVu Sans Mono
Bold from matplotlib's wheel, grayscale: no system font needed, not FigStep's pixels.

The PNG carries no time or software metadata. Every parameter, the font file's sha256 and Pillow's
version go into the row's ``render`` column; ``render_text(render)`` redraws the same bytes (and
refuses a machine whose font file is another one).

**LLaVA's image token**: LLaVA splits a prompt on the literal ``<image>`` (``tokenizer_image_token``)
and moves every one it finds to the front of the turn (``preprocess_multimodal``), so a literal
``<image>`` in an instruction, a description or a response would add an image to the input. In
``prompt`` and ``conversations`` it is written ``&lt;image&gt;`` (``escape_image_token``); the
``instruction`` and ``response`` columns keep the source's text.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import os
import textwrap
from pathlib import Path

from benchwright.errors import RecordError

IMAGE_TOKEN = "<image>"
ESCAPED_IMAGE_TOKEN = "&lt;image&gt;"
# The image-only view's text prompt: neutral, it names no content (FigStep's prompt asks for list
# items; the instruction here is the whole image, so the prompt only says to read and answer it).
IMAGE_ONLY_PROMPT = "The image contains a request written as text. Read it and respond to it."
DESCRIPTION_PREFIX = "[Image description: {description}]"

FIGSTEP = {"canvas_width": 760, "canvas_height": 760, "start_font_size": 80, "wrap_width": 15,
           "x": 20, "y": 10, "spacing": 11, "background": "#FFFFFF", "fill": "#000000"}
MIN_FONT_SIZE = 8
PNG_COMPRESS_LEVEL = 6


@dataclasses.dataclass(frozen=True)
class Style:
    """A font and a colour mode for FigStep's layout."""

    name: str
    font: str           # the font file's name
    mode: str           # PIL mode of the PNG
    source: str         # where the font file is found: "system" (the font folders) or "matplotlib" (its wheel)
    install: str        # what provides it


STYLES = {
    "figstep": Style("figstep", "FreeMonoBold.ttf", "RGB", "system", "Debian's fonts-freefont-ttf (scripts/setup.sh)"),
    # grayscale: black on white, so "L" holds what "RGB" would in a third of the bytes
    "dejavu": Style("dejavu", "DejaVuSansMono-Bold.ttf", "L", "matplotlib", "matplotlib's wheel"),
}
DEFAULT_STYLE = "figstep"


def font_folders() -> list[Path]:
    """The folders Pillow's ``ImageFont.truetype`` searches for a bare font name on Linux and macOS
    (``$XDG_DATA_HOME``/``$XDG_DATA_DIRS`` fonts folders, the user's and the system's), in its order;
    the working directory, which Pillow tries first, is left out."""
    home = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    data = os.environ.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share"
    folders = [Path(home) / "fonts", *(Path(d) / "fonts" for d in data.split(":") if d)]
    return folders + [Path("/Library/Fonts"), Path("/System/Library/Fonts"), Path("~/Library/Fonts").expanduser()]


@functools.lru_cache(maxsize=4)
def font_path(style: str = DEFAULT_STYLE) -> Path:
    """The font file of ``style``; ``FileNotFoundError`` saying what provides it when it is missing."""
    spec = STYLES[style]
    if spec.source == "matplotlib":
        import matplotlib

        return Path(matplotlib.get_data_path()) / "fonts" / "ttf" / spec.font
    for folder in font_folders():
        if folder.is_dir():
            for dirpath, dirnames, filenames in os.walk(folder):
                dirnames.sort()  # the same file on every run when two folders hold one
                if spec.font in filenames:
                    return Path(dirpath) / spec.font
    raise FileNotFoundError(f"the {style} render needs {spec.font} ({spec.install}); none in "
                            f"{', '.join(str(f) for f in font_folders())}. Install it, or build with --render dejavu")


@functools.lru_cache(maxsize=4)
def font_sha256(style: str = DEFAULT_STYLE) -> str:
    return hashlib.sha256(font_path(style).read_bytes()).hexdigest()


def check_style(style: str) -> str:
    """``style`` when it is known and its font is on this machine; else ``ValueError`` saying why."""
    if style not in STYLES:
        raise ValueError(f"unknown render style {style!r}; one of {', '.join(STYLES)}")
    try:
        font_path(style)
    except FileNotFoundError as err:
        raise ValueError(str(err)) from None
    return style


@functools.lru_cache(maxsize=256)
def _font(size: int, style: str = DEFAULT_STYLE):
    from PIL import ImageFont

    return ImageFont.truetype(str(font_path(style)), size)


def _measure(text: str, size: int, spacing: int, style: str) -> tuple[int, int, int, int]:
    """The text's box drawn at (0, 0) (``ImageDraw.text``'s box, as FigStep draws it)."""
    from PIL import Image, ImageDraw

    return ImageDraw.Draw(Image.new(STYLES[style].mode, (1, 1))).multiline_textbbox(
        (0, 0), text, font=_font(size, style), spacing=spacing)


def fit_font_size(text: str, p: dict = FIGSTEP, style: str = DEFAULT_STYLE, min_size: int = MIN_FONT_SIZE) -> int:
    """``start_font_size`` when ``text`` drawn there from (x, y) stays inside the canvas (FigStep's
    image holds all of it); otherwise the largest size at which it stays inside the canvas with
    margins x on the right and y at the bottom (text extent grows with the size: a binary search).
    No fit even at ``min_size`` raises ``ValueError``."""
    w, h = p["canvas_width"], p["canvas_height"]

    def fits(size: int, room_w: int, room_h: int) -> bool:
        _, _, right, bottom = _measure(text, size, p["spacing"], style)
        return right <= room_w and bottom <= room_h

    if fits(p["start_font_size"], w - p["x"], h - p["y"]):  # FigStep's own image: nothing clipped
        return p["start_font_size"]
    room = (w - 2 * p["x"], h - 2 * p["y"])
    if not fits(min_size, *room):
        raise ValueError(f"does not fit a {w}x{h} canvas even at size {min_size}")
    lo, hi = min_size, p["start_font_size"]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid, *room) else (lo, mid - 1)
    return lo


def layout(text: str, style: str = DEFAULT_STYLE, p: dict = FIGSTEP) -> dict:
    """The ``render`` column for ``text`` exactly as it is to be drawn (already wrapped)."""
    from PIL import __version__ as pillow_version

    size = fit_font_size(text, p, style)
    return {"style": style, "font": STYLES[style].font, "font_sha256": font_sha256(style), "font_size": size,
            "start_font_size": p["start_font_size"], "shrunk": size < p["start_font_size"],
            "wrap_width": p["wrap_width"], "canvas_width": p["canvas_width"], "canvas_height": p["canvas_height"],
            "x": p["x"], "y": p["y"], "spacing": p["spacing"], "mode": STYLES[style].mode,
            "background": p["background"], "fill": p["fill"], "text": text, "pillow": pillow_version}


def render_parameters(instruction: str, style: str = DEFAULT_STYLE, p: dict = FIGSTEP) -> dict:
    """The ``render`` column of an image-only row (without drawing): FigStep's wrap, then ``layout``."""
    return layout(textwrap.fill(instruction, width=p["wrap_width"]), style, p)


def render_text(render: dict) -> bytes:
    """PNG bytes of a render (a row's ``render`` column): the same parameters give the same bytes.
    Drawn as FigStep's ``text_to_image`` draws (``ImageDraw.text`` of the multi-line text)."""
    from PIL import Image, ImageColor, ImageDraw

    style = render.get("style") or "dejavu"  # builds before styles were recorded drew DejaVu
    if render["font_sha256"] != font_sha256(style):
        raise ValueError(f"this render was drawn with {render['font']} sha256 {render['font_sha256'][:12]}..., "
                         f"this machine's is {font_sha256(style)[:12]}... ({font_path(style)}): another font file")
    colour = functools.partial(ImageColor.getcolor, mode=render["mode"])
    image = Image.new(render["mode"], (render["canvas_width"], render["canvas_height"]), colour(render["background"]))
    ImageDraw.Draw(image).text((render["x"], render["y"]), render["text"], font=_font(render["font_size"], style),
                               spacing=render["spacing"], fill=colour(render["fill"]))
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=PNG_COMPRESS_LEVEL)  # Pillow writes no tIME chunk
    return out.getvalue()


def render_instruction(instruction: str, locator: str, style: str = DEFAULT_STYLE, p: dict = FIGSTEP) -> tuple[bytes, dict]:
    """(PNG bytes, render parameters) of the image-only view; an instruction too long for the canvas
    at the smallest size is a ``RecordError`` at ``locator``."""
    try:
        render = render_parameters(instruction, style, p)
    except ValueError as err:
        raise RecordError(locator, f"instruction of {len(instruction)} characters cannot be rendered: {err}") from None
    return render_text(render), render


def escape_image_token(text: str) -> str:
    """``text`` with every literal ``<image>`` written ``&lt;image&gt;``: LLaVA reads no image token in it."""
    return text.replace(IMAGE_TOKEN, ESCAPED_IMAGE_TOKEN)


def text_only_prompt(description: str, instruction: str) -> str:
    return escape_image_token(DESCRIPTION_PREFIX.format(description=description) + "\n" + instruction)


def conversations(prompt: str, response: str, has_image: bool) -> list[dict]:
    """LLaVA's conversation format: the human turn leads with ``<image>\\n`` when there is an image, the
    one image token of the conversation (any literal one in ``prompt`` or ``response`` is escaped)."""
    prompt = escape_image_token(prompt)
    human = f"{IMAGE_TOKEN}\n{prompt}" if has_image else prompt
    return [{"from": "human", "value": human}, {"from": "gpt", "value": escape_image_token(response)}]


def view_rows(example, image_path: str, image_value: dict, rendered: bytes, render: dict) -> dict[str, dict]:
    """{view: row} of one example (``records.Example``): ``image_value`` is the original image as the
    Image feature stores it ({"bytes", "path"}), ``rendered`` / ``render`` the image-only view's."""
    base = {
        "example_id": example.example_id, "record_id": example.record_id, "source_file": example.source_file,
        "pair_index": example.pair_index, "subset": example.subset, "role": example.role,
        "image_safe": example.image_safe, "harmful_category": example.harmful_category,
        "harmful_subcategory": example.harmful_subcategory, "instruction": example.instruction,
        "response": example.response, "image_path": image_path, "description": example.description,
        "description_source": example.description_source, "render": None,
    }
    text_prompt = text_only_prompt(example.description, example.instruction)
    return {
        "multimodal": {**base, "view": "multimodal", "image": image_value, "prompt": escape_image_token(example.instruction),
                       "conversations": conversations(example.instruction, example.response, True)},
        "text_only": {**base, "view": "text_only", "image": None, "prompt": text_prompt,
                      "conversations": conversations(text_prompt, example.response, False)},
        "image_only": {**base, "view": "image_only", "image": {"bytes": rendered, "path": None},
                       "prompt": IMAGE_ONLY_PROMPT, "render": render,
                       "conversations": conversations(IMAGE_ONLY_PROMPT, example.response, True)},
    }
