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


def _at_once(source: str, out: str) -> list[subprocess.CompletedProcess]:
    procs = [_start(source, out), _start(source, out)]
    done = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        done.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return done


@pytest.fixture(scope="module")
def concurrent_local(sources, tmp_path_factory) -> tuple[Path, list[subprocess.CompletedProcess]]:
    out = tmp_path_factory.mktemp("concurrent")
    return out / "wildbox", _at_once(str(sources[0]), str(out))


def test_two_local_builds_at_once_one_wins_the_other_refuses(concurrent_local):
    root, runs = concurrent_local
    codes = sorted(r.returncode for r in runs)
    assert codes in ([0, 0], [0, 2]), [r.stderr[-2000:] for r in runs]
    if codes == [0, 2]:
        refused = next(r for r in runs if r.returncode == 2)
        assert "another build of wildbox is running on this output" in refused.stderr
    assert cli_main(["validate", str(root)]) == 0


def _damaged(copy: Path, capsys) -> str:
    assert cli_main(["validate", str(copy)]) == 1
    return capsys.readouterr().out


def test_validate_names_a_missing_shard_an_extra_file_and_a_manifest_that_does_not_match(
        concurrent_local, tmp_path, capsys):
    root, _ = concurrent_local
    copy = tmp_path / "wildbox"
    shutil.copytree(root, copy)
    shard = sorted((copy / "boxes").glob("*.parquet"))[0]
    moved = shard.read_bytes()
    shard.unlink()
    assert f"boxes/{shard.name} is listed but missing" in _damaged(copy, capsys)
    shard.write_bytes(moved)
    (copy / "boxes" / "notes.txt").write_text("left here by hand\n")
    assert "boxes/notes.txt is not in the manifest" in _damaged(copy, capsys)
    (copy / "boxes" / "notes.txt").unlink()
    manifest_path = copy / "_build" / "manifest.json"
    original = manifest_path.read_text()
    manifest = json.loads(original)
    listed = next(f for f in manifest["files"] if f["path"] == f"boxes/{shard.name}")
    listed["sha256"] = "0" * 64
    manifest_path.write_text(json.dumps(manifest))
    assert f"boxes/{shard.name}: sha256" in _damaged(copy, capsys)
    manifest = json.loads(original)
    manifest["counters"]["written.boxes"] += 1  # a row count the files do not have
    manifest_path.write_text(json.dumps(manifest))
    assert "config 'boxes': the writer counted" in _damaged(copy, capsys)
    manifest_path.write_text(original)
    assert cli_main(["validate", str(copy)]) == 0


def test_two_s3_builds_at_once_and_validate_on_damaged_s3_builds(s3_endpoint, sources, capsys):  # noqa: F811
    out = f"s3://{BUCKET}/concurrent"
    url = f"{out}/wildbox"
    runs = _at_once(str(sources[0]), out)
    # no lock on S3: each run stages under its own _staging/<run>, the build folder is named by its
    # content (the same input gives the same bytes) and the root manifest is written whole, last
    assert [r.returncode for r in runs] == [0, 0], [r.stderr[-2000:] for r in runs]
    assert cli_main(["validate", url]) == 0
    fs = fsspec.filesystem("s3")
    assert len(fs.ls(f"{url}/{published.BUILDS}")) == 1
    capsys.readouterr()
    build_url = published.resolve(url)
    shard = sorted(fs.glob(f"{build_url}/boxes/*.parquet"))[0]
    name = shard.rsplit("/", 1)[1]
    data = fs.cat_file(shard)
    fs.rm(shard)
    assert cli_main(["validate", url]) == 1
    assert f"boxes/{name} is listed but missing" in capsys.readouterr().out
    fs.pipe_file(shard, data)
    fs.pipe_file(f"{build_url}/boxes/notes.txt", b"left here by hand\n")
    assert cli_main(["validate", url]) == 1
    assert "boxes/notes.txt is not in the manifest" in capsys.readouterr().out
    fs.rm(f"{build_url}/boxes/notes.txt")
    root_manifest = fs.cat_file(f"{url}/_build/manifest.json")
    changed = json.loads(root_manifest)
    next(f for f in changed["files"] if f["path"] == f"boxes/{name}")["sha256"] = "0" * 64
    fs.pipe_file(f"{url}/_build/manifest.json", json.dumps(changed).encode())
    assert cli_main(["validate", url]) == 1
    assert "FAIL" in capsys.readouterr().out
    fs.pipe_file(f"{url}/_build/manifest.json", root_manifest)
    assert cli_main(["validate", url]) == 0


def test_a_second_build_of_the_same_input_over_the_output_gives_the_same_bytes(concurrent_local, sources):
    root, _ = concurrent_local
    before = published_hashes(root)
    again = _build(str(sources[0]), str(root.parent))
    assert again.returncode == 0, again.stderr
    assert published_hashes(root) == before
