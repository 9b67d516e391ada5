"""A function computed in a forked child process while this process goes on.

A build fingerprints its source (a sha256 of every source file: 286k files, 1.5 GB for the WildBox
release) while its pipeline runs, and writes its exports while it computes its statistics and checks:
the child takes the core the parent leaves free, and being a fork it starts at once, with every module
already imported (a spawned interpreter would import them again, on every build of the test suite too).

A ``HeldCall`` starts its child before the parent knows all of the function's arguments: the child
first does what needs none of them (the build's data checks import great-expectations, 2-3 s, while
the pipeline runs), then waits for ``start(*more)``.

A fork copies one thread: a lock another thread held at that moment (a module being imported) stays
held in the child. So a child that stops making progress is not waited for without end: it is killed
and the function is computed in this process instead, as if it had never been forked.
"""
from __future__ import annotations

import ctypes
import gc
import logging
import os
import pickle
import select
import signal
import sys
import time
import traceback

_PR_SET_PDEATHSIG = 1  # linux/prctl.h: the signal a child gets when the thread that forked it ends
STUCK_AFTER_S = 120.0  # a child that used no CPU time for this long, blocked on nothing, is stuck
POLL_S = 5.0  # how often a silent child's CPU time is looked at

log = logging.getLogger(__name__)


class ForkedCall:
    """``fn(*args)`` in a forked child; ``result()`` returns it (or raises what it raised), ``cancel()``
    kills the child. A child whose parent thread dies is killed too (Linux), so a killed build leaves
    no process behind."""

    def __init__(self, fn, *args):
        self._fn, self._args, self._name = fn, args, getattr(fn, "__name__", "call")
        for stream in (sys.stdout, sys.stderr):  # else the child would print the parent's buffered text again
            stream.flush()
        read, write = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            _child(fn, args, write, parent)
        os.close(write)
        self._pid, self._read = pid, read

    def result(self):
        """The child's value; what it raised is raised here (its traceback in a note). A child that dies
        without an answer, or is stuck, is replaced by calling the function here."""
        if self._read is None:
            raise RuntimeError(f"{self._name}: its result was taken or cancelled")
        try:
            data = self._receive()
        except _Stuck as stuck:
            self.cancel()
            log.warning("%s: %s; computing it in this process instead", self._name, stuck)
            return self._fn(*self._args)
        except BaseException:  # an interrupt while waiting: the child goes too
            self.cancel()
            raise
        self._reap()
        if not data:
            log.warning("%s: its child process ended without an answer; computing it in this process", self._name)
            return self._fn(*self._args)
        kind, value = pickle.loads(data)
        if kind == "error":
            raise value
        return value

    def cancel(self) -> None:
        """Kill the child (if it runs) and close the pipe; harmless when done already."""
        if self._pid is not None:
            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._reap()
        if self._read is not None:
            os.close(self._read)
            self._read = None

    def _reap(self) -> None:
        try:
            os.waitpid(self._pid, 0)
        except ChildProcessError:
            pass
        self._pid = None

    def _receive(self) -> bytes:
        """Everything the child writes, until it closes the pipe; raises _Stuck when it stops progressing."""
        chunks, fd = [], self._read
        self._read = None  # owned here from now on: closed below whatever happens
        try:
            progress, since = _cpu_ticks(self._pid), time.monotonic()
            while True:
                ready, _, _ = select.select([fd], [], [], POLL_S)
                if ready:
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        return b"".join(chunks)
                    chunks.append(chunk)
                    continue
                ticks = _cpu_ticks(self._pid)
                if ticks is None or ticks != progress:
                    progress, since = ticks, time.monotonic()
                elif time.monotonic() - since > STUCK_AFTER_S:
                    raise _Stuck(f"its child process used no CPU time for {STUCK_AFTER_S:.0f} s")
        finally:
            os.close(fd)


class HeldCall(ForkedCall):
    """``fn(*args, *more)`` in a forked child that runs ``warm_up()`` at once and then waits for
    ``start(*more)`` (the rest of the arguments, pickled to it); ``result()`` and ``cancel()`` as
    ``ForkedCall``'s. A child that dies or is stuck is replaced by ``fn(*args, *more)`` in this process."""

    def __init__(self, fn, *args, warm_up):
        go_read, self._go = os.pipe()
        super().__init__(_held, warm_up, go_read, self._go, fn, args)
        os.close(go_read)
        self._held_fn, self._held_args = fn, args
        self._name = getattr(fn, "__name__", "call")

    def start(self, *more) -> None:
        """Send the rest of the arguments: the child computes the function now."""
        if self._go is None:
            raise RuntimeError(f"{self._name}: started already")
        self._fn, self._args = self._held_fn, (*self._held_args, *more)  # what result() computes here instead
        data = pickle.dumps(more)
        try:
            os.write(self._go, len(data).to_bytes(8, "little"))
            view = memoryview(data)
            while view:
                view = view[os.write(self._go, view):]
        except BrokenPipeError:  # the child is gone: result() computes it here
            pass
        finally:
            os.close(self._go)
            self._go = None

    def cancel(self) -> None:
        super().cancel()
        if self._go is not None:
            os.close(self._go)
            self._go = None


def _held(warm_up, go: int, parents_end: int, fn, args):
    """The child of a ``HeldCall``: warm up, read the rest of the arguments, compute."""
    os.close(parents_end)
    warm_up()
    with os.fdopen(go, "rb") as pipe:
        size = int.from_bytes(pipe.read(8), "little")
        more = pickle.loads(pipe.read(size))
    return fn(*args, *more)


class _Stuck(Exception):
    pass


def _cpu_ticks(pid: int) -> int | None:
    """The child's CPU time (user + system, in clock ticks); None while it waits on the disk (state D)
    or when it cannot be read: both count as progress, so such a child is never judged stuck."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == "D" else int(fields[11]) + int(fields[12])


def _child(fn, args, write: int, parent: int) -> None:
    """The child's whole life: compute, send the outcome, leave without running the parent's exit handlers."""
    # The parent's objects stay out of the child's garbage collections: a collection writes to every object
    # it visits, so each page of the parent's heap would be copied into the child (copy-on-write).
    gc.freeze()
    status, where = 0, ""
    try:
        try:
            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):  # not Linux: the child outlives a killed parent
            pass
        if os.getppid() != parent:  # the parent died before the line above took effect
            os._exit(1)
        try:
            outcome = ("value", fn(*args))
        except BaseException as err:  # noqa: BLE001 - every failure goes back to the caller
            where = traceback.format_exc()
            err.add_note(f"(raised in a forked child process:)\n{where}")
            outcome = ("error", err)
        try:
            data = pickle.dumps(outcome)
            pickle.loads(data)  # an exception class that does not come back goes back as text
        except Exception:  # noqa: BLE001
            data = pickle.dumps(("error", RuntimeError(f"{getattr(fn, '__name__', 'call')}: {outcome[1]!r}\n"
                                                       f"(raised in a forked child process:)\n{where}")))
        with os.fdopen(write, "wb") as pipe:
            pipe.write(data)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    except BaseException:  # noqa: BLE001 - the parent sees no answer and computes it itself
        status = 1
    finally:
        os._exit(status)
