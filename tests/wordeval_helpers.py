"""A tiny WordEval build the harness, Lite and baseline tests share: the contract's tiny source plus a
unit whose edit is text alone (so the text-only agent has something it can pass)."""
from __future__ import annotations

from pathlib import Path

import yaml

TEXT_UNITS = {"01_character_formatting.yaml": "range_insert_after"}


def build_tiny_with_text_units(workdir: Path) -> Path:
    from benchwright import registry
    from benchwright.build import build
    from benchwright.options import BuildOptions
    from benchwright.wordeval.catalogue import CATALOGUE_DIR

    source = workdir / "catalogue"
    registry.part("wordeval", "synth")(str(source), scale="tiny")
    for name, unit_id in TEXT_UNITS.items():
        shipped = yaml.safe_load((CATALOGUE_DIR / "units" / name).read_text(encoding="utf-8"))
        path = source / "units" / name
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        doc["units"].append(next(u for u in shipped["units"] if u["id"] == unit_id))
        path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return Path(build(registry.get("wordeval"), str(source), BuildOptions(out=str(workdir / "out"), progress=False)))
