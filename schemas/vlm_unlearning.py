"""VLM unlearning sets: the datasets.Features of every config (single source of truth) and the vocabularies.

An *example* is one image with one instruction-response pair. VLGuard's safe image gives two
examples (its safe and its unsafe instruction), an unsafe image one. Each example appears once in
each view config:

- ``multimodal``: the original image and the instruction;
- ``text_only``: no image; the prompt is ``[Image description: ...]`` then the instruction;
- ``image_only``: the instruction rendered into an image (typographic, FigStep-style) and a neutral prompt.

The routing configs (``modroute_g<gamma>``, ``random_g<gamma>``) hold the forget split only: each
forget example once, in the view its routing chose (``text_only`` for the top ``gamma`` share,
``multimodal`` for the rest); retain and test rows are the ``multimodal`` config's. ``records``
holds one row per source record (no image bytes), for per-record counts and grouping.

Columns of every view and routing row (routing rows add the four ``ROUTING`` columns):

=====================  =====================================================================================
``example_id``         ``<annotation file stem>/<record id>#<pair index>``, e.g. ``train/Ads_364812#0``
``record_id``          the source record's id (``id`` in VLGuard)
``source_file``        the annotation file the record came from (``train.json``)
``pair_index``         the pair's position in the record's ``instr-resp`` list
``subset``             VLGuard's evaluation subset: ``unsafes`` (unsafe image), ``safe_unsafes`` (safe image,
                       unsafe instruction), ``safe_safes``; a mapped source's rows carry their role instead
``role``               ``forget`` or ``retain`` (what unlearning should remove / keep)
``image_safe``         VLGuard's ``safe`` flag of the image (null for a mapped source)
``harmful_category``   / ``harmful_subcategory``: VLGuard's labels of an unsafe image (null otherwise)
``instruction``        the original instruction (question) text
``response``           the reference response
``view``               which view the row is (``multimodal``, ``text_only``, ``image_only``)
``image``              the view's image (``datasets.Image``: the original, the rendered instruction, or null)
``image_path``         the original image's path relative to the image root
``prompt``             the view's text prompt (what follows the ``<image>`` token, if any)
``description``        the image description the text-only view uses (kept on every view, so views align)
``description_source`` where it came from: ``DESCRIPTION_SOURCES``
``conversations``      LLaVA-style ``[{"from": "human", "value": ...}, {"from": "gpt", "value": ...}]``, with
                       ``<image>\\n`` leading the human turn where the row has an image
``render``             the typographic render's parameters (``image_only`` rows; null otherwise): enough to
                       regenerate the image byte for byte with ``benchwright.vlm_unlearning.views.render_text``
``routing_score``      (routing rows) the forget example's visual pressure (ModRoute's score, or the supplied
                       one), the same in ``modroute_g*`` and ``random_g*``: in ``random_g*`` it does not decide
                       the route (a seeded stable hash does) and is kept so the two families compare
``routing_score_source`` (routing rows) what produced the score; in ``random_g*`` followed by the random choice
``routed_view``        (routing rows) ``text_only`` or ``multimodal``: the view the row holds
``gamma``              (routing rows) the config's routing share: the share of forget examples routed to
                       text-only (``modroute_g0.25``: 0.25). Not the evaluator's composite weight (``alpha``)
=====================  =====================================================================================
"""
from __future__ import annotations

from datasets import Features, Image, List, Value

SPLITS = ("forget", "retain", "test", "train")
# ``train`` holds only ``records`` rows: records of the source's training file (their examples are
# in forget / retain); the view configs use forget, retain and test.
VIEW_SPLITS = ("forget", "retain", "test")
ROLES = ("forget", "retain")
SUBSETS = ("unsafes", "safe_unsafes", "safe_safes")
VIEWS = ("multimodal", "text_only", "image_only")
DESCRIPTION_SOURCES = (
    "caption",        # the record's own caption / description field
    "safe_response",  # a safe image's unsafe-instruction example: the response to its safe instruction
    "category",       # an unsafe image: its harmful category and subcategory
    "template",       # nothing in the source describes the image: DESCRIPTION_TEMPLATE
)
DESCRIPTION_TEMPLATE = "An image; the source gives no description of it."
CATEGORY_TEMPLATE = "An image labelled harmful: {category} ({subcategory})."
# VLGuard's 4 categories and 9 subcategories (docs/reference/vlm_unlearning.md)
HARMFUL_CATEGORIES = {
    "privacy": ("personal data",),
    "risky behavior": ("professional advice", "political", "sexually explicit", "violence"),
    "deception": ("disinformation",),
    "discrimination": ("sex", "race", "other"),
}
GAMMAS = (0.25, 0.5, 0.75)
ROUTING_FAMILIES = ("modroute", "random")


def routing_config(family: str, gamma: float) -> str:
    return f"{family}_g{gamma:g}"


ROUTING_CONFIGS = tuple(routing_config(f, g) for f in ROUTING_FAMILIES for g in GAMMAS)

RENDER = {
    "style": Value("string"),           # figstep (FigStep's font and RGB image) or dejavu (views.STYLES)
    "font": Value("string"),            # the font file's name (FreeMonoBold.ttf, as FigStep; DejaVuSansMono-Bold.ttf)
    "font_sha256": Value("string"),
    "font_size": Value("int32"),        # start_font_size, or smaller where FigStep's image would clip the text
    "start_font_size": Value("int32"),  # FigStep's 80
    "shrunk": Value("bool"),            # FigStep's size would clip this text: drawn at font_size < start_font_size
    "wrap_width": Value("int32"),       # textwrap.fill width in characters (FigStep's 15)
    "canvas_width": Value("int32"),
    "canvas_height": Value("int32"),
    "x": Value("int32"),                # top-left of the text (FigStep's (20, 10))
    "y": Value("int32"),
    "spacing": Value("int32"),          # pixels between lines (FigStep's 11)
    "mode": Value("string"),            # PIL mode of the saved PNG
    "background": Value("string"),
    "fill": Value("string"),
    "text": Value("string"),            # the wrapped text exactly as drawn
    "pillow": Value("string"),          # Pillow's version (FreeType rasterises; same version, same bytes)
}

VIEW = Features({
    "example_id": Value("string"),
    "record_id": Value("string"),
    "source_file": Value("string"),
    "pair_index": Value("int32"),
    "subset": Value("string"),
    "role": Value("string"),
    "image_safe": Value("bool"),
    "harmful_category": Value("string"),
    "harmful_subcategory": Value("string"),
    "instruction": Value("string"),
    "response": Value("string"),
    "view": Value("string"),
    "image": Image(),
    "image_path": Value("string"),
    "prompt": Value("string"),
    "description": Value("string"),
    "description_source": Value("string"),
    "conversations": List({"from": Value("string"), "value": Value("string")}),
    "render": RENDER,
})

ROUTING = {  # documented in the table above
    "routing_score": Value("float64"),        # visual pressure in both families (random_g*: not what routed it)
    "routing_score_source": Value("string"),
    "routed_view": Value("string"),           # modroute: text_only for the top gamma share by routing_score
    "gamma": Value("float32"),                # the routing share
}
ROUTED = Features({**VIEW, **ROUTING})

RECORDS = Features({
    "record_key": Value("string"),            # <annotation file stem>/<record id>
    "record_id": Value("string"),
    "source_file": Value("string"),
    "image_path": Value("string"),
    "image_safe": Value("bool"),
    "harmful_category": Value("string"),
    "harmful_subcategory": Value("string"),
    "pairs": Value("int32"),                  # instruction-response pairs in the source record
    "example_ids": List(Value("string")),     # the examples published from it
    "split": Value("string"),                 # train (the training file) or test
})

CONFIGS = {**{v: VIEW for v in VIEWS}, **{c: ROUTED for c in ROUTING_CONFIGS}, "records": RECORDS}
ID_COLUMNS = {**{c: "example_id" for c in CONFIGS if c != "records"}, "records": "record_key"}
