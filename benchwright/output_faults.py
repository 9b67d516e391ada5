"""A build's output failing under it: a full disk, a read-only filesystem, a store that refuses writes.

The build removes what it staged, releases its lock, and says so in one line that names the place
(``fault_line``), never with a traceback:

    no space left on OUT: needs ~N MB (...); M MB are free there; nothing was published
    cannot write to OUT: read-only file system (OUT/.lock-wildbox); nothing was published

A fault is found wherever it is raised (``write_fault``): an ``OSError`` the build's own code raised, one
a Beam step re-raised as a ``RuntimeError`` (the ``OSError`` is its context), or one a Beam worker process
or a Dask worker reported only as text (``[Errno 28] No space left on device: '...'``).

How N is estimated (a build's size is known only once it is written): when a build of the dataset is
published there, the space it takes (each file of its manifest rounded up to the filesystem's block),
scaled by this input's size over the size of the input it was built from (a local rebuild stages the
new build beside the old one, so that is the free space it needs); else the dataset's size model, a
fixed part (card, figures, validation report) plus a part per input byte, fitted on its tiny and default
builds (``Dataset.output_fixed_bytes``, ``Dataset.output_per_input_byte``); and
never less than what the build had written when the disk filled plus a block per file it had not
finished. A build that fails while it writes the embedded default source has no input size yet: its N
is what it had written, and the line says "more than".
"""
from __future__ import annotations

import contextlib
import errno
import logging
import math
import os
import re
from dataclasses import dataclass

from benchwright.errors import BenchwrightError

NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
CANNOT_WRITE = (errno.EROFS, errno.EACCES, errno.EPERM)
# "[Errno 28] No space left on device: '/out/x'" as an exception's text (a worker's, reported as a string)
_ERRNO_TEXT = re.compile(r"\[Errno (\d+)\] ([^\[\]\n:']+)(?:: '([^'\n]*)')?")


def write_fault(err: BaseException) -> OSError | None:
    """The ``OSError`` of a full disk, a read-only filesystem or a refused write that ``err`` is, was
    raised from (its causes and contexts) or tells of in its text; None when it is none of these, or
    when it is an error benchwright raised to be told as it is (one that tells a fault already)."""
    if isinstance(err, BenchwrightError):
        return None
    chain, seen, stack = [], set(), [err]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        chain.append(e)
        if isinstance(e, OSError) and (e.errno in NO_SPACE + CANNOT_WRITE or isinstance(e, PermissionError)):
            return e
        stack += [e.__context__, e.__cause__]
    for e in chain:
        for found in _ERRNO_TEXT.finditer(str(e)):
            code = int(found[1])
            if code in NO_SPACE + CANNOT_WRITE:
                return OSError(code, found[2].strip(), found[3])
    return None


def no_space(fault: OSError) -> bool:
    return fault.errno in NO_SPACE


@dataclass(frozen=True)
class Place:
    """A folder the build writes to, and how the user knows it (``--out``, the temporary folder)."""
    path: str | None  # a local folder; None for object storage
    said: str

    def holds(self, filename: str) -> bool:
        if self.path is None:
            return False
        path = os.path.abspath(self.path)
        return os.path.abspath(filename) == path or os.path.abspath(filename).startswith(path.rstrip(os.sep) + os.sep)

    def free(self) -> int | None:
        st = _statvfs(self.path)
        return None if st is None else st.f_bavail * st.f_frsize

    def block(self) -> int:
        st = _statvfs(self.path)
        return st.f_frsize if st is not None else 4096


def _statvfs(path: str | None):
    if path is None:
        return None
    while path and not os.path.exists(path):  # the folder may not be made yet
        path = os.path.dirname(path)
    try:
        return os.statvfs(path or os.sep)
    except OSError:
        return None


def fault_place(fault: OSError, places: list[Place], reading: str | None = None) -> Place | None:
    """Which of the build's ``places`` the fault is in: the one holding the file it names; for a full
    disk that names none, the local place with the least space left; for a refused write that names
    none (an object store's), the first place that is not a local folder. None: none of the build's,
    or a refusal naming a file under the local folder ``reading`` (the source: a file it cannot read,
    which the pipeline quarantines or refuses naming it, even when the source is under a place)."""
    filename = fault.filename if isinstance(fault.filename, str) else None
    if filename and reading and not no_space(fault) and Place(reading, "").holds(filename):
        return None
    if filename:
        return next((p for p in sorted(places, key=lambda p: -len(p.path or "")) if p.holds(filename)), None)
    if no_space(fault):
        local = [(p.free(), p) for p in places if p.path is not None]
        local = [(free, p) for free, p in local if free is not None]
        return min(local, key=lambda fp: fp[0])[1] if local else None
    return next((p for p in places if p.path is None), None)


def disk_usage(path: str | None) -> tuple[int, int]:
    """(bytes on disk, files) of everything under the local folder ``path`` (0, 0 when it is not there)."""
    used = files = 0
    if path is None or not os.path.lexists(path):
        return 0, 0
    for folder, _, names in os.walk(path):
        for name in names:
            try:
                used += os.lstat(os.path.join(folder, name)).st_blocks * 512
                files += 1
            except OSError:
                continue
    return used, files


def estimate(*, written: int, input_bytes: int | None, previous: dict | None, ratio: float | None,
             fixed: int = 0, block: int, dataset: str) -> tuple[int, str, bool]:
    """(bytes the build needs, how that was estimated, whether it is only a lower bound); module doc."""
    def on_disk(size: int) -> int:
        return -(-size // block) * block

    floor = written + block
    if previous and previous.get("files"):
        old = sum(on_disk(f.get("bytes") or 0) for f in previous["files"]) + block  # + the manifest
        old_input = (previous.get("input") or {}).get("bytes")
        if input_bytes and old_input:
            need = int(old * input_bytes / old_input)
            how = (f"the build of {dataset} it replaces takes {megabytes(old)}, for an input of "
                   f"{megabytes(old_input)}; this one is {megabytes(input_bytes)}")
        else:
            need, how = old, f"the build of {dataset} it replaces takes {megabytes(old)}"
        return max(need, floor), how, False
    if ratio is not None and input_bytes:
        need = int(fixed + ratio * input_bytes)
        model = (f"{megabytes(fixed)} + " if fixed else "") + f"{ratio:.3g} x their input"
        return max(need, floor), f"{dataset}'s builds measure {model}; this input is {megabytes(input_bytes)}", False
    return floor, "what it had written when the disk filled", True


def fault_line(fault: OSError, place: Place, *, needed: tuple[int, str, bool] | None = None,
               removed: int = 0) -> str:
    """The one line the user reads. The caller removed what the build had written (``removed`` bytes)
    first: the free space said is what is free now."""
    gone = f" (the {megabytes(removed)} the build had written are removed)" if removed else ""
    if no_space(fault):
        need, how, lower_bound = needed or (0, "", True)
        free = place.free()
        free_said = f"; {megabytes(free)} free there now" if free is not None else ""
        return (f"no space left on {place.said}: needs {'more than ' if lower_bound else '~'}{megabytes(need)} "
                f"({how}){free_said}{gone}; nothing was published")
    what = fault.strerror or str(fault) or "permission denied"
    if isinstance(fault, PermissionError) or fault.errno in (errno.EACCES, errno.EPERM):
        what = f"permission denied: {what}" if "denied" not in what.lower() else what
    where = f" ({fault.filename})" if isinstance(fault.filename, str) and fault.filename != place.path else ""
    return f"cannot write to {place.said}: {what[0].lower() + what[1:]}{where}{gone}; nothing was published"


def megabytes(n: int) -> str:
    """``n`` bytes as the lines here say them: "3.1 MB" below 10 MB, else whole MB rounded up ("14 MB")."""
    mb = n / 1e6
    return f"{mb:.1f} MB" if mb < 10 else f"{math.ceil(mb):,} MB"


class _WriteFaultRecords(logging.Filter):
    """Drops a log record of a write fault: Beam logs each exception a step raises, with its traceback,
    before it re-raises it; the build tells a write fault in one line of its own."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and record.exc_info[1] is not None and write_fault(record.exc_info[1]))


BEAM_STEP_LOGGER = "apache_beam.runners.common"  # where Beam logs an exception a step raised


@contextlib.contextmanager
def quiet_beam_write_faults():
    """For the duration: Beam logs no write fault a step raised (the build tells it in one line)."""
    quiet = _WriteFaultRecords()
    logger = logging.getLogger(BEAM_STEP_LOGGER)
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)
