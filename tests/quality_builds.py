"""Builds the data-quality tests share (statistics, drift, diff, offline report), made once per test
session: a tiny WildBox build, and the same source with a planted change (a video added, a box
moved) built over a copy of it, so the second build has the first as its previous build."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.wildbox_helpers import build_wildbox, tiny_source

_CACHE: dict[str, object] = {}


def tiny_wildbox(tmp_path_factory) -> tuple[Path, Path]:
    """(tiny source, its build)."""
    if "tiny" not in _CACHE:
        base = tmp_path_factory.mktemp("quality-tiny")
        source = tiny_source(base / "raw")
        _CACHE["tiny"] = (source, build_wildbox(source, base / "out"))
    return _CACHE["tiny"]


def tiny_build(name: str, tmp_path_factory) -> tuple[Path, Path]:
    """(tiny synthetic source, its build) of a registered dataset, made once per test session: the
    contract tests and the browser tests share them."""
    key = f"contract-{name}"
    if key not in _CACHE:
        from benchwright import registry
        from benchwright.build import build
        from benchwright.options import BuildOptions

        source = tmp_path_factory.mktemp(f"{name}-raw") / "raw"
        registry.part(name, "synth")(str(source), scale="tiny", seed=0)
        out = tmp_path_factory.mktemp(f"{name}-out")
        _CACHE[key] = (source, Path(build(registry.get(name), str(source), BuildOptions(out=str(out), progress=False))))
    return _CACHE[key]


def plant_video_and_move_box(source: Path, target: Path) -> dict:
    """A copy of ``source`` at ``target`` with one video copied under a new name and one observation
    of one track moved by 0.05 world units along x; returns what was planted."""
    shutil.copytree(source, target)
    videos = sorted(p.name for p in source.iterdir() if p.is_dir())
    new_video = f"{videos[0][:-2]}_NEW"
    shutil.copytree(target / videos[0], target / new_video)
    summary = target / videos[1] / "seg1" / "vggt_results" / "tracking_summary.json"
    doc = json.loads(summary.read_text())
    track = sorted(doc["tracks"])[0]
    doc["tracks"][track]["centers"][1][0] += 0.05
    summary.write_text(json.dumps(doc))
    return {"new_video": new_video, "moved_segment": f"{videos[1]}/seg1", "moved_track": int(track),
            "moved_observation": 1}


def planted_wildbox(tmp_path_factory) -> dict:
    """{"old": copy of the tiny build, "new": the planted source built where the tiny build was
    published (its previous build), "source": the planted source, "planted": what was planted}."""
    if "planted" not in _CACHE:
        _, built = tiny_wildbox(tmp_path_factory)
        base = tmp_path_factory.mktemp("quality-planted")
        old = base / "old" / "wildbox"
        shutil.copytree(built, old)
        out = base / "out"
        shutil.copytree(built, out / "wildbox")
        planted = plant_video_and_move_box(tiny_wildbox(tmp_path_factory)[0], base / "raw")
        new = build_wildbox(base / "raw", out)
        _CACHE["planted"] = {"old": old, "new": new, "source": base / "raw", "planted": planted}
    return _CACHE["planted"]
