"""``benchwright new NAME``: a new dataset, copied from the template dataset (``registry.TEMPLATE``) in the
repository checkout (the package is installed editable: its folders are the checkout's).

Every file a dataset has (``FILES``: what ``tests/test_registry.py`` checks) is copied with the template's name
replaced by NAME (``template``, ``Template`` and ``TEMPLATE`` in each file's text: the template's files use the
word for nothing else), and the dataset is registered where the tests look: its lines in
``benchwright/registry.py`` (``DATASETS``, ``SETTINGS``) and ``pyproject.toml``'s packages, its pinned tiny-build
counts in ``tests/test_registry.py`` (the template's: the copy builds the same rows), its hostile corpus' rows in
``docs/RELIABILITY.md`` and a section in ``README.md``. So the new dataset builds, and every test parametrised over
the registry passes on it, before anything is filled in; each ``SLOT`` comment says what to fill next.

Everything is checked before anything is written: a name that is not a lower-case identifier, that is
registered or whose files exist is refused in one line, and so is a checkout without the template's files.
"""
from __future__ import annotations

import keyword
import re
from pathlib import Path

from benchwright.errors import BenchwrightError

TEMPLATE_NAME = "template"
REPOSITORY = Path(__file__).resolve().parents[1]

# The files a dataset <ds> has (docs/ADDING_A_DATASET.md; tests/test_registry.py checks every dataset has them)
FILES = (
    "pipelines/{ds}.py", "schemas/{ds}.py", "loaders/{ds}.py", "validation/{ds}.py", "cards/{ds}.py",
    "cards/{ds}.md.j2", "evaluation/{ds}.py", "baselines/{ds}.py", "benchwright/{ds}/__init__.py",
    "benchwright/{ds}/synth.py", "benchwright/{ds}/sources.py", "benchwright/{ds}/stages.py",
    "benchwright/{ds}/config.py", "benchwright/{ds}/README.md", "docs/reference/{ds}.md", "tests/hostile/{ds}.py",
)
REGISTRY, PYPROJECT = "benchwright/registry.py", "pyproject.toml"
PINS, RELIABILITY, README = "tests/test_registry.py", "docs/RELIABILITY.md", "README.md"
NAME = re.compile(r"[a-z][a-z0-9_]*")


def title(name: str) -> str:
    """``bird_song`` -> ``BirdSong`` (the dataset's class, and its title in the card)."""
    return "".join(part.capitalize() for part in name.split("_"))


def renamed(text: str, name: str) -> str:
    """The template's text as the new dataset's."""
    return (text.replace(TEMPLATE_NAME, name).replace(TEMPLATE_NAME.capitalize(), title(name))
            .replace(TEMPLATE_NAME.upper(), name.upper()))


def check_name(name: str, root: Path) -> None:
    if not NAME.fullmatch(name) or keyword.iskeyword(name):
        raise BenchwrightError(f"{name!r} is not a dataset name: lower-case letters, digits and _, starting with a "
                               "letter (it names a Python module)")
    registry = (root / REGISTRY).read_text(encoding="utf-8")
    if name == TEMPLATE_NAME or f'"{name}":' in registry:
        raise BenchwrightError(f"{name!r} is a registered dataset already ({root / REGISTRY})")
    existing = [f.format(ds=name) for f in FILES if (root / f.format(ds=name)).exists()]
    if existing or (root / "benchwright" / name).exists():
        raise BenchwrightError(f"{name!r}: {', '.join(existing) or f'benchwright/{name}/'} exists already in {root}")


def _insert(text: str, anchor: str, addition: str, path: str, before: bool = True) -> str:
    """``text`` with ``addition`` put before (or after) the one ``anchor`` it holds; refused naming ``path``."""
    if text.count(anchor) != 1:
        raise BenchwrightError(f"{path}: cannot find where to add the dataset (expected {anchor.strip()!r} once); "
                               "is this a benchwright checkout?")
    return text.replace(anchor, addition + anchor if before else anchor + addition)


def registered(name: str, root: Path) -> dict[str, str]:
    """{file: its new text} of the files that register the dataset (see the module docstring)."""
    texts = {path: (root / path).read_text(encoding="utf-8") for path in (REGISTRY, PYPROJECT, PINS, RELIABILITY, README)}
    out = {}
    registry = texts[REGISTRY]
    registry = _insert(registry, "}\n# The template dataset", f'    "{name}": "benchwright.pipelines.{name}",\n', REGISTRY)
    out[REGISTRY] = _insert(registry, f'    "{TEMPLATE_NAME}": "benchwright.{TEMPLATE_NAME}.config:Config",\n',
                            f'    "{name}": "benchwright.{name}.config:Config",\n', REGISTRY)
    out[PYPROJECT] = _insert(texts[PYPROJECT], f'"benchwright.{TEMPLATE_NAME}",', f' "benchwright.{name}",', PYPROJECT,
                             before=False)
    pinned = re.search(rf'    "{TEMPLATE_NAME}": {{.*?\n    }},\n', texts[PINS], re.S)
    if pinned is None:
        raise BenchwrightError(f"{PINS}: the template's pinned counts are not in PINNED_TINY_ROWS")
    out[PINS] = _insert(texts[PINS], pinned.group(), renamed(pinned.group(), name), PINS)
    rows = re.findall(rf"^\| `{TEMPLATE_NAME}` \|.*\n", texts[RELIABILITY], re.M)
    cases = sum(int(m) for row in rows if (m := row.split(" | ")[2]).isdigit())
    total = re.search(r"(\d+) cases over every dataset", texts[RELIABILITY])
    if not rows or total is None:
        raise BenchwrightError(f"{RELIABILITY}: the template's rows or the count of cases are not there")
    reliability = _insert(texts[RELIABILITY], rows[0], "".join(renamed(row, name) for row in rows), RELIABILITY)
    out[RELIABILITY] = reliability.replace(total.group(), f"{int(total.group(1)) + cases} cases over every dataset", 1)
    readme = _insert(texts[README], "\n- [Quick start](#quick-start)\n", f", [{title(name)}](#{title(name).lower()}-{name})",
                     README)
    out[README] = _insert(readme, "\n## Quick start\n", f"\n### {title(name)} (`{name}`)\n\nSLOT: what the dataset is, "
                          f"in a paragraph: its configs, splits and source, its reference ([docs/reference/{name}.md]"
                          f"(docs/reference/{name}.md)), its domain code (`benchwright/{name}/README.md`), its licence."
                          f"\n\n```python\nrecords = load_dataset(\"out/{name}\", \"records\", split=\"train\")\n```\n",
                          README)
    return out


def create(name: str, root: Path | str = REPOSITORY) -> list[str]:
    """Write dataset ``name``'s files and registration under the checkout ``root``; returns the files written."""
    root = Path(root)
    missing = [f.format(ds=TEMPLATE_NAME) for f in FILES if not (root / f.format(ds=TEMPLATE_NAME)).is_file()]
    if missing or not (root / REGISTRY).is_file():
        raise BenchwrightError(f"{root} is not a benchwright checkout: it lacks {', '.join(missing[:3]) or REGISTRY}")
    check_name(name, root)
    edits = registered(name, root)
    written = []
    for pattern in FILES:
        target = root / pattern.format(ds=name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(renamed((root / pattern.format(ds=TEMPLATE_NAME)).read_text(encoding="utf-8"), name),
                          encoding="utf-8")
        written.append(pattern.format(ds=name))
    for path, text in edits.items():
        (root / path).write_text(text, encoding="utf-8")
    return written + list(edits)


def next_steps(name: str) -> str:
    return "\n".join([
        f"benchwright new: {name} is a copy of the template dataset, registered; it builds as it is:",
        f"  benchwright synth {name} --scale tiny --out /tmp/{name}-raw && benchwright build {name} --source "
        f"/tmp/{name}-raw --out /tmp/{name}-out",
        "Fill each SLOT (grep -rn SLOT on the files above), in this order (docs/ADDING_A_DATASET.md):",
        f"  1. schemas/{name}.py: your configs' Features, splits, id columns",
        f"  2. benchwright/{name}/sources.py and synth.py: your raw format's parser, and a synthetic source in it",
        f"  3. benchwright/{name}/stages.py and pipelines/{name}.py: the stages, the declaration",
        f"  4. loaders/, validation/, cards/ ({name}.py and {name}.md.j2), evaluation/, baselines/",
        f"  5. tests/hostile/{name}.py: your formats' hostile cases (then docs/RELIABILITY.md's rows: the test "
        "prints them)",
        f"  6. docs/reference/{name}.md, benchwright/{name}/README.md, README.md's section",
        f"  7. tests/test_registry.py: the tiny build's counts (PINNED_TINY_ROWS[{name!r}]: the test prints them)",
    ])
