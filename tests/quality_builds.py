"""Builds several test files share, made once per test run (the pytest-xdist workers share them): every
registered dataset's tiny build (the contract, registry, statistics, drift, runner, object-storage and browser
tests assert on them), and WildBox's tiny source with a planted change (a video added, a box moved) built over
a copy of its tiny build, so the second build has the first as its previous build (drift, diff)."""
from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path
from typing import Callable, TypeVar

from filelock import FileLock

from tests.builds import build_dataset
from tests.wildbox_helpers import build_wildbox

_CACHE: dict[str, object] = {}
T = TypeVar("T")


def made_once(key: str, tmp_path_factory, make: Callable[[Path], T]) -> T:
    """``make(folder)`` once per test run, its result kept in this process. Under pytest-xdist the
    workers share it: the first to ask makes it in the run's temp root (the parent of every worker's
    temp folder) under a file lock and pickles its result there; the others wait, then read it."""
    if key not in _CACHE:
        if not os.environ.get("PYTEST_XDIST_WORKER"):
            _CACHE[key] = make(tmp_path_factory.mktemp(key))
        else:
            folder = tmp_path_factory.getbasetemp().parent / f"shared-{key}"
            result = folder.with_name(f"{folder.name}.pickle")
            with FileLock(f"{folder}.lock"):
                if not result.exists():
                    shutil.rmtree(folder, ignore_errors=True)  # a failed attempt's leftovers
                    folder.mkdir()
                    result.write_bytes(pickle.dumps(make(folder)))
            _CACHE[key] = pickle.loads(result.read_bytes())
    return _CACHE[key]


def tiny_wildbox(tmp_path_factory) -> tuple[Path, Path]:
    """(tiny WildBox source, its build): the contract tests' (``tiny_build``)."""
    return tiny_build("wildbox", tmp_path_factory)


def tiny_build(name: str, tmp_path_factory) -> tuple[Path, Path]:
    """(tiny synthetic source, its build) of a registered dataset, made once per test run: the
    contract tests and the browser tests share them."""
    def make(base: Path) -> tuple[Path, Path]:
        from benchwright import registry

        source = base / "raw"
        registry.part(name, "synth")(str(source), scale="tiny", seed=0)
        return source, build_dataset(name, source, base / "out")

    return made_once(f"contract-{name}", tmp_path_factory, make)


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
    def make(base: Path) -> dict:
        source, built = tiny_wildbox(tmp_path_factory)
        old = base / "old" / "wildbox"
        shutil.copytree(built, old)
        out = base / "out"
        shutil.copytree(built, out / "wildbox")
        planted = plant_video_and_move_box(source, base / "raw")
        new = build_wildbox(base / "raw", out)
        return {"old": old, "new": new, "source": base / "raw", "planted": planted}

    return made_once("quality-planted", tmp_path_factory, make)


def tiny_builds_loaded_with_datasets_alone(tmp_path_factory) -> dict:
    """Every registered dataset's tiny build (``tiny_build``), every config, loaded by ``datasets`` in one clean
    interpreter (``tests.builds.load_in_a_clean_interpreter``), once per test run: the contract test and the
    WildBox and WordEval build tests assert on what it found."""
    def make(work: Path) -> dict:
        from benchwright import registry
        from tests.builds import load_in_a_clean_interpreter

        return load_in_a_clean_interpreter({name: tiny_build(name, tmp_path_factory)[1] for name in registry.names()},
                                           work)

    return made_once("loaded-with-datasets-alone", tmp_path_factory, make)


def workspace_bench_synth_cli(tmp_path_factory) -> dict:
    """``benchwright synth workspace_bench --out RAW --scale tiny`` (seed 0) run once per test run on the command
    line, in an interpreter with a string-hash salt of its own (PYTHONHASHSEED=4321): {"raw": RAW, "returncode",
    "stdout", "stderr"}. The synth tests compare its files with a write in their own process (nothing may depend
    on set or hash order); the scoring tests score the judge runs it wrote."""
    def make(base: Path) -> dict:
        import subprocess
        import sys

        raw = base / "raw"
        done = subprocess.run([sys.executable, "-m", "benchwright.cli", "synth", "workspace_bench", "--out", str(raw),
                               "--scale", "tiny"], capture_output=True, text=True, timeout=600,
                              env={**os.environ, "PYTHONHASHSEED": "4321"})
        return {"raw": raw, "returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}

    return made_once("workspace-bench-synth-cli", tmp_path_factory, make)
