"""A tiny WordEval build the harness, Lite and baseline tests share: the contract's tiny source plus a
unit whose edit is text alone (so the text-only agent has something it can pass)."""
from __future__ import annotations

from pathlib import Path

import yaml

TEXT_UNITS = {"01_character_formatting.yaml": "range_insert_after"}


def build_tiny_with_text_units(workdir: Path) -> Path:
    """Built by the CLI in a subprocess, as a user runs it, with its output on pipes (a CI log): progress
    lines every half second, kept in ``workdir/cli.stdout`` and ``cli.stderr`` (``build_log``) for the
    progress test, which reads them instead of making a WordEval build of its own. ``TMPDIR`` is
    ``workdir/tmp``, so that test can see the build left no progress channel behind."""
    import os
    import subprocess
    import sys

    from benchwright import registry
    from benchwright.wordeval.catalogue import CATALOGUE_DIR

    source = workdir / "catalogue"
    registry.part("wordeval", "synth")(str(source), scale="tiny")
    for name, unit_id in TEXT_UNITS.items():
        shipped = yaml.safe_load((CATALOGUE_DIR / "units" / name).read_text(encoding="utf-8"))
        path = source / "units" / name
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        doc["units"].append(next(u for u in shipped["units"] if u["id"] == unit_id))
        path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    (workdir / "tmp").mkdir()
    env = {**os.environ, "TMPDIR": str(workdir / "tmp"), "BENCHWRIGHT_PROGRESS_INTERVAL": "0.5"}
    done = subprocess.run([sys.executable, "-m", "benchwright.cli", "build", "wordeval", "--source", str(source),
                           "--out", str(workdir / "out")], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).resolve().parents[1], timeout=1200)
    (workdir / "cli.stdout").write_text(done.stdout, encoding="utf-8")
    (workdir / "cli.stderr").write_text(done.stderr, encoding="utf-8")
    assert done.returncode == 0, done.stderr[-3000:]
    return (workdir / "out" / "wordeval").resolve()


def build_log(root: Path) -> tuple[str, str]:
    """(stdout, stderr) of the CLI build that made ``root`` (``build_tiny_with_text_units``)."""
    workdir = root.parents[1]
    return (workdir / "cli.stdout").read_text(encoding="utf-8"), (workdir / "cli.stderr").read_text(encoding="utf-8")
