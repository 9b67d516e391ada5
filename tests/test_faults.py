"""Issue 13, faults: builds killed with SIGKILL at chosen and at random points (local filesystem and
the local S3 server), ``validate`` on damaged builds, builds run twice or at once on one output, and
the S3 build lock (refusal, the stale-lock takeover, ``unlock``, release after success and failure).

Chosen points use the core's test hook ``BENCHWRIGHT_FAULT=<phase>`` (``published.fault_point``):
the build sends itself SIGKILL after finalize wrote the manifest, and in the middle of publishing
(locally after the swap, on S3 after the upload and before the commit).

Builds that are killed or run at once are child processes forked from a forkserver that imported
the build's modules once (a fresh interpreter spends most of a tiny build importing); the child runs
the same ``benchwright.cli.main`` as the command line. Builds nobody kills run in this process.

These run on the template only: staging, the lock, publishing and cleaning up are the core's, the same code for
every dataset, and each kill needs builds of its own (a tiny template build is the cheapest: a WildBox one is
about 10 s of CPU, a WordEval or VLM one three times that). What a dataset's build brings to them, the checks of
``validate`` on a damaged build and a second build of the same input over the output, run on every registered
dataset in ``tests/test_contract.py``."""
from __future__ import annotations

import json
import multiprocessing
import multiprocessing.forkserver
import os
import random
import re
import shutil
import signal
import time
from pathlib import Path

import fsspec
import pytest

from benchwright import published, registry
from benchwright.cli import main as cli_main
from tests.builds import build_dataset, damage_published
from tests.test_object_storage import BUCKET, _remote_hashes, s3_endpoint  # noqa: F401 (fixture)
from tests.wildbox_helpers import published_hashes

DATASET = "template"

# What a child imports before it is forked: everything a template build loads (lazily or not).
_PRELOAD = ["benchwright.cli", "benchwright.build", "benchwright.pipelines.template", "benchwright.validate",
            "benchwright.report", "benchwright.cards.template", "benchwright.validation.template",
            "benchwright.loaders.template",
            "great_expectations", "matplotlib.pyplot", "s3fs"]
# The child: this process's environment at start, output to a log file, exit code = the CLI's.
# (Code run by the builtin ``exec``, so the forkserver needs no import of this test module.)
# A killed child cannot remove its temporary folders: they go to its own folder beside its log, not
# to the system's.
_CHILD = """
import os, sys, tempfile
from benchwright.cli import main
os.environ.clear()
os.environ.update(env)
os.makedirs(tmp, exist_ok=True)
tempfile.tempdir = tmp
fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.dup2(fd, 1)
os.dup2(fd, 2)
sys.exit(main(argv))
"""


class Child:
    """``benchwright build template --source SOURCE --out OUT [extra]`` in a child process."""

    def __init__(self, source: str, out: str, log: Path, fault: str | None = None, extra: tuple = ()):
        ctx = _forkserver()
        env = {k: v for k, v in os.environ.items() if k != published.FAULT_ENV}
        if fault:
            env[published.FAULT_ENV] = fault
        argv = ["build", DATASET, "--source", source, "--out", out, *extra]
        self.log = log
        self.process = ctx.Process(target=exec, args=(_CHILD, {"argv": argv, "log": str(log), "env": env,
                                                                 "tmp": str(log.with_suffix(".tmp"))}))
        self.process.start()

    def wait(self) -> tuple[int, str]:
        self.process.join(timeout=300)
        assert self.process.exitcode is not None, "the build did not finish in 300 s"
        return self.process.exitcode, self.log.read_text(errors="replace")

    def kill_after(self, seconds: float) -> tuple[int, str]:
        time.sleep(seconds)
        self.process.kill()
        return self.wait()


def _child(source, out, log, fault=None, extra=()) -> tuple[int, str]:
    return Child(str(source), str(out), log, fault, extra).wait()


def _forkserver():
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(_PRELOAD)  # used when the server starts (once per session)
    return ctx


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> tuple[Path, Path]:
    """Two tiny template sources giving two different builds (the forkserver imports meanwhile)."""
    _forkserver()
    multiprocessing.forkserver.ensure_running()
    raw = tmp_path_factory.mktemp("raw")
    for seed, name in enumerate("ab"):
        registry.part(DATASET, "synth")(str(raw / name), scale="tiny", seed=seed)
    return raw / "a", raw / "b"


def _local_state(root: Path, validate: bool = True) -> tuple[str, dict[str, str]]:
    """(input fingerprint, data file hashes) of the published build, after ``validate`` passed on it:
    every file matches the manifest, so a mixture of two builds cannot pass."""
    assert not validate or cli_main(["validate", str(root)]) == 0
    return json.loads((root / "_build" / "manifest.json").read_text())["input"]["sha256"], published_hashes(root)


def _previous_or_new(state, before, new_input: str) -> bool:
    # the card and drift report of a build depend on the build it replaces, so "the new build" is
    # any whole, valid build of the new input
    return state == before or state[0] == new_input


@pytest.fixture(scope="module")
def concurrent_local(sources, tmp_path_factory) -> tuple[Path, list[tuple[int, str]]]:
    """Two builds of source a started at once on one fresh local output: its first build."""
    out = tmp_path_factory.mktemp("concurrent")
    logs = tmp_path_factory.mktemp("logs")
    children = [Child(str(sources[0]), str(out), logs / f"{i}.log") for i in range(2)]
    return out / DATASET, [c.wait() for c in children]


def test_two_local_builds_at_once_one_wins_the_other_refuses(concurrent_local):
    root, runs = concurrent_local
    codes = sorted(code for code, _ in runs)
    assert codes in ([0, 0], [0, 2]), [log[-2000:] for _, log in runs]
    if codes == [0, 2]:
        refused = next(log for code, log in runs if code == 2)
        assert f"another build of {DATASET} is running on this output" in refused
    assert cli_main(["validate", str(root)]) == 0


def test_local_builds_killed_anywhere_leave_the_previous_or_the_new_build(concurrent_local, sources, tmp_path):
    a, b = sources
    out = tmp_path / "out"
    shutil.copytree(concurrent_local[0].parent, out)  # a published build of a
    root = out / DATASET
    first = _local_state(root, validate=False)  # validated by the test above
    # killed after the pipeline and finalize wrote the staged build and its manifest: its lock file (a
    # live build's is removed when it ends) and its staging stay
    killed = Child(str(b), str(out), tmp_path / "finalize.log", fault="finalize")
    assert killed.wait()[0] == -signal.SIGKILL
    assert _local_state(root) == first
    staged = len([p for p in (out / f".staging-{DATASET}").rglob("*") if p.is_file()])
    assert (out / f".lock-{DATASET}").read_text().split()[0] == str(killed.process.pid) and staged
    # killed after the swap, before the old build is removed: the new build is published, whole; it said
    # first, in one line, what it cleaned up after the killed build
    code, log = _child(b, out, tmp_path / "publish.log", fault="publish")
    assert code == -signal.SIGKILL
    cleaned = [line for line in log.splitlines() if "cleaned up" in line]
    assert len(cleaned) == 1 and re.fullmatch(
        rf"\[{DATASET}\] cleaned up after a build that was killed \(pid {killed.process.pid}, started "
        rf"\d{{4}}-\d\d-\d\dT[\d:]+\+00:00\): removed its staging folder {out}/.staging-{DATASET} \({staged} files, "
        rf"[\d.]+ MB\); its lock file {out}/.lock-{DATASET} is this build's now", cleaned[0]), log[-3000:]
    second = _local_state(root)
    assert second[0] != first[0] and second[1] != first[1]
    # killed at a random moment of a whole build (this seed: 0.97 s into a forked tiny template build)
    code, _ = Child(str(a), str(out), tmp_path / "random.log").kill_after(random.Random(1).uniform(0.5, 4.0))
    assert _previous_or_new(_local_state(root), second, first[0]), code
    assert cli_main(["build", DATASET, "--source", str(b), "--out", str(out)]) == 0
    assert _local_state(root)[0] == second[0]
    assert not any(p.name.startswith((".staging", ".old", ".lock")) for p in out.iterdir())


def test_a_local_lock_file_tells_a_killed_holder_from_an_earlier_releases_leftover(tmp_path):
    lock = tmp_path / f".lock-{DATASET}"
    lock.write_text("4242\n")  # what earlier releases left after every build, finished or not: no record
    with published.local_lock(tmp_path, DATASET) as left:
        assert left is None and lock.read_text().split()[0] == str(os.getpid())
    assert not lock.exists()  # removed by its holder when it ends
    lock.write_text("4242 2026-12-02T05:00:00+00:00\n")  # a holder that never reached its end
    with pytest.raises(RuntimeError):
        with published.local_lock(tmp_path, DATASET) as left:
            assert left.describe() == "pid 4242, started 2026-12-02T05:00:00+00:00" and left.path == lock
            raise RuntimeError("a failed build")
    assert not lock.exists()  # a failed build removes it too


def _validate_names_damage(url: str, fs, build: str, manifests: list[str], capsys) -> None:
    expected, undo = damage_published(fs, build, manifests, registry.get(DATASET))
    capsys.readouterr()
    assert cli_main(["validate", url]) == 1
    said = capsys.readouterr().out
    assert [e for e in expected if e not in said] == [], said
    undo()
    assert cli_main(["validate", url]) == 0


# -- object storage ------------------------------------------------------------------------------

OUT = f"s3://{BUCKET}/faults"
URL = f"{OUT}/{DATASET}"
LOCK = published.lock_url(OUT, DATASET)
STALE = "2"  # --stale-lock-after in seconds for the builds that take over a killed build's lock


def _s3_state(url: str, validate: bool = True) -> tuple[str, dict[str, str]]:
    assert not validate or cli_main(["validate", url]) == 0
    manifest, build_url = published.committed(url)
    return manifest["input"]["sha256"], _remote_hashes(build_url)


def _staging_runs(url: str) -> list[str]:
    fs = fsspec.filesystem("s3")
    path = f"{url}/{published.STAGING}".removeprefix("s3://")
    return sorted(p.rsplit("/", 1)[1] for p in fs.ls(path, refresh=True)) if fs.exists(path) else []


def _wait_until_stale(seconds: float) -> published.LockHolder:
    """The lock once its last write is older than ``seconds`` by the store's clock."""
    deadline = time.monotonic() + 60
    while (held := published.read_lock(LOCK)) is not None and held.age_s < seconds:
        assert time.monotonic() < deadline, held
        time.sleep(0.25)
    return held


@pytest.fixture(scope="module")
def concurrent_s3(s3_endpoint, sources, tmp_path_factory):  # noqa: F811
    """Builds of the two different sources started at once on one fresh S3 output."""
    logs = tmp_path_factory.mktemp("s3logs")
    children = [Child(str(s), OUT, logs / f"{i}.log") for i, s in enumerate(sources)]
    return [c.wait() for c in children]


def test_two_s3_builds_of_different_inputs_at_once_one_wins_the_other_refuses(
        concurrent_s3, concurrent_local, sources, tmp_path):
    codes = [code for code, _ in concurrent_s3]
    assert sorted(codes) == [0, 2], [log[-2000:] for _, log in concurrent_s3]
    refused = concurrent_s3[codes.index(2)][1]
    assert f"another build of {DATASET} holds this output" in refused and f"benchwright unlock {URL}" in refused
    assert published.read_lock(LOCK) is None  # the winner released its lock
    assert _staging_runs(URL) == []
    # the output is one whole build of the winner's input: the same bytes as a fresh local build of it
    winner = sources[codes.index(0)]
    reference = concurrent_local[0] if winner == sources[0] else build_dataset(DATASET, winner, tmp_path / "reference")
    input_sha, hashes = _s3_state(URL)
    assert input_sha == json.loads((reference / "_build" / "manifest.json").read_text())["input"]["sha256"]
    assert hashes == published_hashes(reference)
    assert len(fsspec.filesystem("s3").ls(f"{URL}/{published.BUILDS}", refresh=True)) == 1


def test_validate_names_damage_on_an_s3_build(concurrent_s3, capsys):
    build = published.resolve(URL).removeprefix("s3://")
    _validate_names_damage(URL, fsspec.filesystem("s3"), build,
                           [f"{URL}/_build/manifest.json".removeprefix("s3://"), f"{build}/_build/manifest.json"],
                           capsys)


def test_s3_builds_killed_anywhere_leave_the_previous_or_the_new_build_and_their_lock_is_taken_over(
        concurrent_s3, sources, tmp_path, capsys):
    first = _s3_state(URL, validate=False)  # the winner's build, validated by the tests above
    other = str(sources[[code for code, _ in concurrent_s3].index(2)])  # the input that was refused
    # killed after finalize: the previous build stays, and so do the dead build's lock and staging
    assert _child(other, OUT, tmp_path / "finalize.log", fault="finalize", extra=("--stale-lock-after", STALE))[0] \
        == -signal.SIGKILL
    assert _s3_state(URL) == first
    dead = published.read_lock(LOCK)
    assert dead is not None and _staging_runs(URL) == [dead.record["run"]]
    # while its heartbeat is fresh, a build refuses, naming the holder (nothing is read or written)
    capsys.readouterr()
    assert cli_main(["build", DATASET, "--source", other, "--out", OUT]) == 2
    refusal = capsys.readouterr().err
    assert f"pid {dead.record['pid']} run {dead.record['run']}" in refusal and "older than 300 s (the longer of --stale-lock-after and the holder's)" in refusal
    # once it is older than the stale time, the next build takes it over and removes the dead run's
    # staging; this one is killed after its upload, before the commit: the previous build stays
    _wait_until_stale(float(STALE))
    code, log = _child(other, OUT, tmp_path / "publish.log", fault="publish", extra=("--stale-lock-after", STALE))
    assert code == -signal.SIGKILL and f"took over a stale lock {LOCK}" in log, log[-2000:]
    cleaned = [line for line in log.splitlines() if "cleaned up" in line]
    assert len(cleaned) == 1 and re.fullmatch(
        rf"\[{DATASET}\] cleaned up after builds that did not finish: removed {URL}/_staging/{dead.record['run']} "
        r"\([\d,]+ objects, [\d.]+ MB\)", cleaned[0]), log[-2000:]
    assert _s3_state(URL) == first
    second_dead = published.read_lock(LOCK)
    assert second_dead.record["run"] != dead.record["run"] and _staging_runs(URL) == [second_dead.record["run"]]
    # killed at a random moment (after taking over the stale lock)
    _wait_until_stale(float(STALE))
    code, _ = Child(other, OUT, tmp_path / "random.log", extra=("--stale-lock-after", STALE)).kill_after(
        random.Random(3).uniform(0.5, 4.0))
    state = _s3_state(URL)
    assert state == first or state[0] != first[0], code
    # a lock left behind is removed by hand, naming its holder (and its staging with it)
    held = published.read_lock(LOCK)
    capsys.readouterr()
    assert cli_main(["unlock", URL]) == 0
    said = capsys.readouterr().out
    assert (f"removed the lock of host {held.record['host']} pid {held.record['pid']}" in said if held
            else "no lock; nothing removed" in said)
    assert published.read_lock(LOCK) is None
    left = _staging_runs(URL)
    assert held is None or held.record["run"] not in left
    # the next build succeeds at once (default stale time), releases its lock and leaves no staging: not its own,
    # nor one the random kill left (a kill between its takeover and its clean-up leaves the dead run's staging,
    # which unlock does not remove: it is not the holder's; the next holder of the lock does)
    assert cli_main(["build", DATASET, "--source", other, "--out", OUT]) == 0
    built = capsys.readouterr()
    assert all(f"{URL}/_staging/{run} (" in built.out + built.err for run in left), (left, built)
    assert _s3_state(URL)[0] != first[0]
    assert published.read_lock(LOCK) is None and _staging_runs(URL) == []
    # a failed build (nothing can be read) releases its lock too, and publishes nothing
    fs = fsspec.filesystem("s3")
    committed = fs.cat_file(f"{URL}/_build/manifest.json")
    fs.pipe_file(f"{BUCKET}/empty/readme.txt", b"not a template source")
    assert cli_main(["build", DATASET, "--source", f"s3://{BUCKET}/empty", "--out", OUT]) != 0
    assert published.read_lock(LOCK) is None and fs.cat_file(f"{URL}/_build/manifest.json") == committed


def test_a_shorter_stale_time_does_not_take_over_a_live_holder(s3_endpoint):  # noqa: F811
    """A holder on a 60 s stale time beats every 12 s; a build asking for 1 s, 1.5 s after that holder's
    last beat, must refuse (the holder's own rule), not take the lock and delete the live run's staging."""
    holder = published.ObjectLock(f"s3://{BUCKET}/shorter", DATASET, "run-live", 60)
    holder.acquire()
    try:
        fs = fsspec.filesystem("s3")
        fs.pipe_file(f"{BUCKET}/shorter/{DATASET}/_staging/run-live/part-0", b"x")
        time.sleep(1.5)
        eager = published.ObjectLock(f"s3://{BUCKET}/shorter", DATASET, "run-eager", 1)
        with pytest.raises(published.BuildError, match="older than 60 s"):
            eager.acquire()
        fs.invalidate_cache()
        assert fs.exists(f"{BUCKET}/shorter/{DATASET}/_staging/run-live/part-0")
        holder.confirm()
    finally:
        holder.release()
