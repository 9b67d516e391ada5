"""Issue 25.8: the output failing under a build (``benchwright.output_faults``). A full disk and a
read-only output are told in one line naming the folder (``no space left on OUT: needs ~N MB``,
``cannot write to OUT: read-only file system``), never a traceback; the build removes what it staged,
its lock file and the folders it made, and a build published there before stays whole.

The disks are real: a small tmpfs mounted in a mount namespace of its own (``unshare --mount``; a
user who is not root gets one with ``--map-root-user``, as unprivileged user namespaces allow), in
which the command line runs; the mount goes with the namespace, whatever happens to the test. What
is left on it is listed there once the build has ended."""
from __future__ import annotations

import errno
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
# Mounts the tmpfs, prepares it (``$mnt`` is its folder), runs the command, then says how it ended, what
# is left on the tmpfs and the space free there (bytes).
_SCRIPT = """
mount -t tmpfs -o "$1" tmpfs "$2" || { echo "cannot mount a tmpfs at $2" >&2; exit 97; }
mnt=$2; shift 2
eval "$PREPARE" || exit 98
"$@"
echo "@@exit $?"
find "$mnt" -mindepth 1 | sort | sed "s|^$mnt/|@@left |"
echo "@@free $(stat -f -c '%a %S' "$mnt")"
"""


def _disk(tmp: Path) -> str:  # where ``OnTmpfs(tmp, ...)`` mounts its tmpfs
    return str(tmp / "disk")


class OnTmpfs:
    """How ``benchwright ARGV`` ended on a tmpfs: its exit code, its stdout and stderr, the paths left on
    the tmpfs (relative to it) and the bytes free there after it."""

    def __init__(self, tmp: Path, options: str, argv: list[str], prepare: str = ":"):
        self.mnt = Path(_disk(tmp))
        self.mnt.mkdir()
        unshare = ["unshare", "--mount"] + ([] if os.geteuid() == 0 else ["--map-root-user"])
        run = subprocess.run([*unshare, "sh", "-c", _SCRIPT, "sh", options, str(self.mnt), sys.executable, "-m",
                              "benchwright.cli", *argv], cwd=REPO, capture_output=True, text=True, timeout=600,
                             env={**os.environ, "HF_HUB_OFFLINE": "1", "PREPARE": prepare})
        assert run.returncode == 0, f"no tmpfs to run on ({run.returncode}): {run.stderr}"
        said = run.stdout.splitlines()
        self.code = int(next(line for line in said if line.startswith("@@exit "))[7:])
        self.left = [line[7:] for line in said if line.startswith("@@left ")]
        blocks, size = next(line for line in said if line.startswith("@@free "))[7:].split()
        self.free = int(blocks) * int(size)
        self.out = "\n".join(line for line in said if not line.startswith("@@"))
        self.err = run.stderr


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


def test_a_full_disk_is_told_in_one_line_with_what_the_build_needs_and_nothing_is_left(built, tmp_path):
    source, build = built
    # a first build on a 1 MB disk: the pipeline's shards fill it
    out = Path(_disk(tmp_path)) / "datasets"
    run = OnTmpfs(tmp_path, "size=1m", ["build", "wildbox", "--source", str(source), "--out", str(out)])
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


def test_a_full_disk_under_a_published_build_keeps_it_whole_and_says_what_the_rebuild_needs(built, tmp_path):
    """The tmpfs holds a published build and 1 MB more: its rebuild (staged beside it) fills it."""
    source, build = built
    size = _on_disk(build) + 2 ** 20
    files = _tree(build)
    run = OnTmpfs(tmp_path, f"size={size}", ["build", "wildbox", "--source", str(source), "--out", _disk(tmp_path)],
                  prepare=f"cp -a {shlex.quote(str(build))} \"$mnt\"/")
    said = _one_error_line(run)
    found = re.fullmatch(rf"no space left on {re.escape(str(run.mnt))}: needs ~([\d,.]+) MB \(the build of "
                         r"wildbox it replaces takes ([\d.]+) MB, for an input of ([\d.]+) MB; this one is \3 MB\); "
                         r"([\d.]+) MB free there now \(the [\d.]+ MB the build had written are removed\); nothing was "
                         r"published", said)
    assert found, said
    needs, old = _mb(found[1]), _mb(found[2])
    assert needs == old and abs(old - _on_disk(build) / 1e6) < 0.1 * old, (said, _on_disk(build))  # the same input
    assert run.left == files  # the published build, whole; no .staging-wildbox, no .lock-wildbox
    assert _mb(found[4]) == round(run.free / 1e6, 1)


def test_a_read_only_output_is_told_in_one_line_and_its_build_stays(built, tmp_path):
    source, build = built
    files = _tree(build)
    run = OnTmpfs(tmp_path, "size=64m", ["build", "wildbox", "--source", str(source), "--out", _disk(tmp_path)],
                  prepare=f"cp -a {shlex.quote(str(build))} \"$mnt\"/ && mount -o remount,ro \"$mnt\"")
    assert _one_error_line(run) == (f"cannot write to {run.mnt}: read-only file system ({run.mnt}/.lock-wildbox); "
                                    "nothing was published")
    assert run.left == files


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
