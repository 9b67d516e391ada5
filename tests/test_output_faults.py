"""Issue 25.8: the output failing under a build (``benchwright.output_faults``). A full disk and a
read-only output are told in one line naming the folder (``no space left on OUT: needs ~N MB``,
``cannot write to OUT: read-only file system``), never a traceback; the build removes what it staged,
its lock file and the folders it made, and a build published there before stays whole.

The disks are real: a small tmpfs mounted in a mount namespace of its own (``unshare --mount``; a
user who is not root gets one with ``--map-root-user``, as unprivileged user namespaces allow), in
which the command line's ``main`` runs (one process runs every case, each on its own tmpfs); the mounts
go with the namespace, whatever happens to the test. What is left on a tmpfs is listed there once its
build has ended."""
from __future__ import annotations

import errno
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from benchwright import output_faults
from tests.quality_builds import tiny_wildbox

REPO = Path(__file__).resolve().parents[1]
# Runs in the mount namespace, one interpreter for every case: mounts the case's tmpfs, prepares it (``$mnt`` is
# its folder), runs ``benchwright.cli.main(argv)`` with its stdout and stderr going to files (at the file
# descriptors: what a terminal would get; an exception escaping it printed as the interpreter prints one, exit 1),
# then says how it ended, what is left on the tmpfs and the space free there (bytes). (A `python -m
# benchwright.cli` per case paid ~4 CPU-s of imports each.)
_DRIVER = r"""
import json, os, subprocess, sys, traceback
from benchwright.cli import main
said = []
for case in json.loads(sys.argv[1]):
    mnt = case["mnt"]
    if subprocess.run(["mount", "-t", "tmpfs", "-o", case["options"], "tmpfs", mnt]).returncode:
        print(f"cannot mount a tmpfs at {mnt}", file=sys.stderr)
        sys.exit(97)
    if subprocess.run(["sh", "-c", case["prepare"]], env={**os.environ, "mnt": mnt}).returncode:
        sys.exit(98)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    for fd, name in ((1, case["stdout"]), (2, case["stderr"])):
        opened = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(opened, fd)
        os.close(opened)
    try:
        code = main(case["argv"]) or 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, old in zip((1, 2), saved):
            os.dup2(old, fd)
            os.close(old)
    left = sorted(os.path.relpath(os.path.join(folder, name), mnt)
                  for folder, folders, files in os.walk(mnt) for name in folders + files)
    free = os.statvfs(mnt)
    said.append({"code": code, "left": left, "free": free.f_bavail * free.f_frsize})
print(json.dumps(said))
"""


def _disk(tmp: Path) -> str:  # where a case's tmpfs is mounted
    return str(tmp / "disk")


class OnTmpfs:
    """A case: ``benchwright ARGV`` on a tmpfs mounted with ``options`` at ``tmp/disk``, once ``prepare`` (a
    shell command; ``$mnt`` is the tmpfs' folder) ran there. Once ``run_on_tmpfs`` ran it: its exit code, its
    stdout and stderr, the paths left on the tmpfs (relative to it) and the bytes free there after it."""

    def __init__(self, tmp: Path, options: str, argv: list[str], prepare: str = ":"):
        self.tmp, self.options, self.argv, self.prepare = tmp, options, argv, prepare
        self.mnt = Path(_disk(tmp))
        self.code, self.out, self.err, self.left, self.free = None, "", "", [], 0


def run_on_tmpfs(cases: list[OnTmpfs]) -> None:
    """Runs the cases, in order, in one process in a mount namespace of its own (``unshare --mount``)."""
    spec = []
    for case in cases:
        case.mnt.mkdir(parents=True)
        spec.append({"mnt": str(case.mnt), "options": case.options, "prepare": case.prepare, "argv": case.argv,
                     "stdout": str(case.tmp / "stdout"), "stderr": str(case.tmp / "stderr")})
    unshare = ["unshare", "--mount"] + ([] if os.geteuid() == 0 else ["--map-root-user"])
    run = subprocess.run([*unshare, sys.executable, "-c", _DRIVER, json.dumps(spec)], cwd=REPO, capture_output=True,
                         text=True, timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert run.returncode == 0, f"no tmpfs to run on ({run.returncode}): {run.stderr}"
    for case, said in zip(cases, json.loads(run.stdout.strip().splitlines()[-1]), strict=True):
        case.code, case.left, case.free = said["code"], said["left"], said["free"]
        case.out = (case.tmp / "stdout").read_text()
        case.err = (case.tmp / "stderr").read_text()


def _one_error_line(run: OnTmpfs) -> str:
    assert run.code == 2, (run.out, run.err)
    assert "Traceback" not in run.err + run.out and "OSError" not in run.err, run.err
    lines = [line for line in run.err.strip().splitlines() if not line.startswith("[wildbox] ")]  # but progress
    assert len(lines) == 1 and lines[0].startswith("benchwright: error: "), run.err
    return lines[0].removeprefix("benchwright: error: ")


def _mb(said: str) -> float:
    return float(said.replace(",", ""))


def _tree(build: Path) -> list[str]:
    """The build's folder and everything in it, as paths relative to its output (as ``OnTmpfs.left``)."""
    return sorted([build.name, *(p.relative_to(build.parent).as_posix() for p in build.rglob("*"))])


def _on_disk(root: Path) -> int:
    return sum(p.lstat().st_blocks * 512 for p in root.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """(a tiny WildBox source, its build): the data-quality tests' (made once per test run)."""
    return tiny_wildbox(tmp_path_factory)


@pytest.fixture(scope="module")
def ended(built, tmp_path_factory) -> dict[str, OnTmpfs]:
    """The three builds of this file's tests, each on its tmpfs, run in one namespace and one process."""
    source, build = built
    base = tmp_path_factory.mktemp("tmpfs")
    full, rebuild, read_only = base / "full", base / "rebuild", base / "read-only"
    cases = {
        # a first build on a 1 MB disk: the pipeline's shards fill it
        "full": OnTmpfs(full, "size=1m", ["build", "wildbox", "--source", str(source), "--out",
                                          str(Path(_disk(full)) / "datasets")]),
        # the tmpfs holds a published build and 1 MB more: its rebuild (staged beside it) fills it
        "rebuild": OnTmpfs(rebuild, f"size={_on_disk(build) + 2 ** 20}",
                           ["build", "wildbox", "--source", str(source), "--out", _disk(rebuild)],
                           prepare=f"cp -a {shlex.quote(str(build))} \"$mnt\"/"),
        "read-only": OnTmpfs(read_only, "size=64m", ["build", "wildbox", "--source", str(source), "--out",
                                                     _disk(read_only)],
                             prepare=f"cp -a {shlex.quote(str(build))} \"$mnt\"/ && mount -o remount,ro \"$mnt\""),
    }
    run_on_tmpfs(list(cases.values()))
    return cases


def test_a_full_disk_is_told_in_one_line_with_what_the_build_needs_and_nothing_is_left(built, ended):
    _, build = built
    run = ended["full"]
    out = run.mnt / "datasets"
    said = _one_error_line(run)
    found = re.fullmatch(rf"no space left on {re.escape(str(out))}: needs ~([\d,.]+) MB \(wildbox's builds "
                         r"measure (?:[\d.]+ MB \+ )?[\d.]+ x their input; this input is ([\d.]+) MB\); ([\d.]+) MB "
                         r"free there now \(the ([\d.]+) MB the build had written are removed\); nothing was published",
                         said)
    assert found, said
    needs, free, removed = _mb(found[1]), _mb(found[3]), _mb(found[4])
    assert 0.75 <= needs / (_on_disk(build) / 1e6) <= 1.5, (needs, _on_disk(build))  # the measure holds
    assert run.left == [] and free == round(run.free / 1e6, 1) == 1.0, run.left  # --out was made by the build
    assert 0 < removed <= 1.0


def test_a_full_disk_under_a_published_build_keeps_it_whole_and_says_what_the_rebuild_needs(built, ended):
    """The tmpfs holds a published build and 1 MB more: its rebuild (staged beside it) fills it."""
    _, build = built
    run = ended["rebuild"]
    said = _one_error_line(run)
    found = re.fullmatch(rf"no space left on {re.escape(str(run.mnt))}: needs ~([\d,.]+) MB \(the build of "
                         r"wildbox it replaces takes ([\d.]+) MB, for an input of ([\d.]+) MB; this one is \3 MB\); "
                         r"([\d.]+) MB free there now \(the [\d.]+ MB the build had written are removed\); nothing was "
                         r"published", said)
    assert found, said
    needs, old = _mb(found[1]), _mb(found[2])
    assert needs == old and abs(old - _on_disk(build) / 1e6) < 0.1 * old, (said, _on_disk(build))  # the same input
    assert run.left == _tree(build)  # the published build, whole; no .staging-wildbox, no .lock-wildbox
    assert _mb(found[4]) == round(run.free / 1e6, 1)


def test_a_read_only_output_is_told_in_one_line_and_its_build_stays(built, ended):
    _, build = built
    run = ended["read-only"]
    assert _one_error_line(run) == (f"cannot write to {run.mnt}: read-only file system ({run.mnt}/.lock-wildbox); "
                                    "nothing was published")
    assert run.left == _tree(build)


# -- where a fault is found, and what the line says ------------------------------------------------

def test_a_fault_is_found_in_a_beam_steps_exception_and_in_a_workers_text():
    full = OSError(errno.ENOSPC, "No space left on device", "/out/.staging-x/boxes/a.parquet")
    try:
        try:
            raise full
        except OSError as err:
            raise RuntimeError("A transform failed in step WriteBoxes") from err
    except RuntimeError as wrapped:
        assert output_faults.write_fault(wrapped) is full
    told = output_faults.write_fault(RuntimeError(
        "Traceback ...\nOSError: [Errno 28] No space left on device: '/out/.staging-x/frames/b.parquet' [while running "
        "'WriteFrames']"))
    assert (told.errno, told.filename) == (errno.ENOSPC, "/out/.staging-x/frames/b.parquet")
    assert output_faults.write_fault(RuntimeError("[Errno 2] No such file or directory: '/x'")) is None
    assert output_faults.write_fault(ValueError("no errno here")) is None


def test_a_refused_read_of_the_source_is_not_told_as_the_outputs_fault(tmp_path):
    out = output_faults.Place(str(tmp_path), str(tmp_path))
    source = tmp_path / "raw"  # a source under the output's folder (a test's temporary folder holds both)
    read = PermissionError(errno.EACCES, "Permission denied", str(source / "a.json"))
    assert output_faults.fault_place(read, [out], reading=str(source)) is None
    assert output_faults.fault_place(read, [out]) is out
    full = OSError(errno.ENOSPC, "No space left on device", str(source / "a.json"))
    assert output_faults.fault_place(full, [out], reading=str(source)) is out  # a read does not fill a disk


def test_what_a_build_needs_without_a_measure_is_a_lower_bound():
    need, how, lower = output_faults.estimate(written=3_000_000, input_bytes=None, previous=None, ratio=None,
                                              block=4096, dataset="x")
    assert (need, lower) == (3_004_096, True) and "what it had written" in how
    line = output_faults.fault_line(OSError(errno.ENOSPC, "No space left on device"),
                                    output_faults.Place(None, "s3://b/out"), needed=(need, how, lower))
    assert line.startswith("no space left on s3://b/out: needs more than 3.0 MB (what it had written")
    # a measure that says less than what was already written is raised to it
    need, _, lower = output_faults.estimate(written=3_000_000, input_bytes=10, previous=None, ratio=1.0,
                                            fixed=100, block=4096, dataset="x")
    assert (need, lower) == (3_004_096, False)
