"""Issue 13, faults: builds killed with SIGKILL at chosen and at random points (local filesystem and
the local S3 server), ``validate`` on damaged builds, and builds run twice or at once on one output.

Chosen points use the core's test hook ``BENCHWRIGHT_FAULT=<phase>`` (``published.fault_point``):
the build sends itself SIGKILL after the pipeline, after finalize wrote the manifest, and in the
middle of publishing (locally after the swap, on S3 after the upload and before the commit)."""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import fsspec
import pytest

from benchwright import published
from benchwright.cli import main as cli_main
from tests.test_object_storage import BUCKET, _remote_hashes, s3_endpoint  # noqa: F401 (fixture)
from tests.wildbox_helpers import published_hashes, tiny_source

REPO = Path(__file__).resolve().parents[1]


def _start(source: str, out: str, fault: str | None = None) -> subprocess.Popen:
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", GX_ANALYTICS_ENABLED="false")
    env.pop(published.FAULT_ENV, None)
    if fault:
        env[published.FAULT_ENV] = fault
    return subprocess.Popen([sys.executable, "-m", "benchwright.cli", "build", "wildbox", "--source", source,
                             "--out", out], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _build(source: str, out: str, fault: str | None = None) -> subprocess.CompletedProcess:
    proc = _start(source, out, fault)
    stdout, stderr = proc.communicate(timeout=300)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def _killed_at_random(source: str, out: str, seed: int) -> int:
    proc = _start(source, out)
    time.sleep(random.Random(seed).uniform(0.5, 6.0))
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    return proc.returncode


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> tuple[Path, Path]:
    """Two tiny WildBox sources giving two different builds."""
    raw = tmp_path_factory.mktemp("raw")
    return tiny_source(raw / "a", seed=0), tiny_source(raw / "b", seed=1)


def _local_state(root: Path) -> tuple[str, dict[str, str]]:
    """(input fingerprint, data file hashes) of the published build, after ``validate`` passed on it:
    every file matches the manifest, so a mixture of two builds cannot pass."""
    assert cli_main(["validate", str(root)]) == 0
    return json.loads((root / "_build" / "manifest.json").read_text())["input"]["sha256"], published_hashes(root)


def _previous_or_new(state, before, new_input: str) -> bool:
    # the card and drift report of a build depend on the build it replaces, so "the new build" is
    # any whole, valid build of the new input
    return state == before or state[0] == new_input


def test_local_builds_killed_anywhere_leave_the_previous_or_the_new_build(sources, tmp_path):
    a, b = map(str, sources)
    out = tmp_path / "out"
    root = out / "wildbox"
    assert _build(a, str(out)).returncode == 0
    first = _local_state(root)
    for phase in ("pipeline", "finalize"):
        assert _build(b, str(out), fault=phase).returncode == -signal.SIGKILL
        assert _local_state(root) == first, phase
    # killed after the swap, before the old build is removed: the new build is published, whole
    assert _build(b, str(out), fault="publish").returncode == -signal.SIGKILL
    second = _local_state(root)
    assert second[0] != first[0] and second[1] != first[1]
    code = _killed_at_random(a, str(out), seed=1)
    assert _previous_or_new(_local_state(root), second, first[0]), code
    done = _build(b, str(out))
    assert done.returncode == 0, done.stderr
    assert _local_state(root)[0] == second[0]
    assert not any(p.name.startswith((".staging", ".old")) for p in out.iterdir())


def _s3_state(url: str) -> tuple[str, dict[str, str]]:
    assert cli_main(["validate", url]) == 0
    manifest, build_url = published.committed(url)
    return manifest["input"]["sha256"], _remote_hashes(build_url)


def test_s3_builds_killed_anywhere_leave_the_previous_or_the_new_build(s3_endpoint, sources):  # noqa: F811
    a, b = map(str, sources)
    out = f"s3://{BUCKET}/faults"
    url = f"{out}/wildbox"
    assert _build(a, out).returncode == 0
    first = _s3_state(url)
    for phase in ("finalize", "publish"):  # "publish": builds/<id>/ uploaded, root manifest not written
        assert _build(b, out, fault=phase).returncode == -signal.SIGKILL
        assert _s3_state(url) == first, phase
    code = _killed_at_random(b, out, seed=3)
    state = _s3_state(url)
    assert state == first or state[0] != first[0], code
    done = _build(b, out)
    assert done.returncode == 0, done.stderr
    assert _s3_state(url)[0] != first[0]
