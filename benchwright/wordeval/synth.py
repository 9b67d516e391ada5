"""WordEval's raw source: a unit catalogue folder (``benchwright synth wordeval``).

WordEval's input is declarative: planned editing units, composition templates, the property
registry and the base documents' roles (``catalogue/``). ``write_source`` writes that
folder where a build can read it like any other source (``benchwright build wordeval --source``):
``default`` and ``full`` are the shipped catalogue, ``tiny`` keeps a few composition templates and
the units they use plus one unit per subsystem of a few subsystems (a quick build for tests).
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

import yaml

from benchwright import strict_yaml
from benchwright.files import synthetic_source_folder
from benchwright.wordeval.catalogue import CATALOGUE_DIR, load_catalogue

# The tiny scale: these templates, the units they use, and these single units (tables and fields
# bring the structure-changing operations in).
TINY_TEMPLATES = ("comp_bold_colour_phrase", "comp_paragraph_layout")
TINY_UNITS = ("tables_add",)
SCALES = ("tiny", "default", "full")


def write_source(out_dir: str | Path, scale: str = "default", seed: int = 0,
                 progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Write a catalogue folder under ``out_dir`` (absent or empty); returns a summary.
    ``seed`` is accepted for the common ``synth`` interface: the catalogue has no randomness here
    (the build draws each case's parameters from its own seeds)."""
    out = synthetic_source_folder(out_dir, scale, SCALES)
    out.mkdir(parents=True, exist_ok=True)
    files = sorted(p for p in CATALOGUE_DIR.rglob("*.yaml"))
    keep_templates = keep_units = None
    if scale == "tiny":
        templates = strict_yaml.load((CATALOGUE_DIR / "compositions.yaml").read_text(encoding="utf-8"))["templates"]
        chosen = [t for t in templates if t["id"] in TINY_TEMPLATES]
        keep_templates = {t["id"] for t in chosen}
        keep_units = {s["unit"] for t in chosen for s in t["steps"]} | set(TINY_UNITS)
    for i, path in enumerate(files):
        rel = path.relative_to(CATALOGUE_DIR)
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if keep_units is None:
            shutil.copyfile(path, target)
        else:
            doc = strict_yaml.load(path.read_text(encoding="utf-8"))
            if rel.parts[0] == "units":
                doc["units"] = [u for u in doc["units"] if u["id"] in keep_units]
                if not doc["units"]:
                    continue
            elif rel.name == "compositions.yaml":
                doc["templates"] = [t for t in doc["templates"] if t["id"] in keep_templates]
            target.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
        if progress:
            progress(i + 1, len(files), "catalogue files")
    cat = load_catalogue(str(out))
    return {"scale": scale, "units": len(cat.units), "templates": len(cat.templates),
            "subsystems": len(cat.subsystems), "out": str(out)}

