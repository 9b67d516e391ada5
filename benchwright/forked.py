"""A function computed in a forked child process while this process goes on.

A build fingerprints its source (a sha256 of every source file: 286k files, 1.5 GB for the WildBox
release) while its pipeline runs: the child takes the core the pipeline leaves free, and being a fork it
starts at once, with every module already imported (a spawned interpreter would import them again, on
every build of the test suite too). It is forked before the pipeline starts its threads and servers.
"""
from __future__ import annotations

import ctypes
import os
import pickle
import signal
import traceback

_PR_SET_PDEATHSIG = 1  # linux/prctl.h: the signal a child gets when its parent dies


class ForkedCall:
    """``fn(*args)`` in a forked child; ``result()`` returns it (or raises what it raised), ``cancel()``
    kills the child. A child whose parent is killed is killed too (Linux), so a killed build leaves no
    hashing process behind."""

    def __init__(self, fn, *args):
        read, write = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: compute, send, leave without running the parent's exit handlers
            status = 0
            try:
                os.close(read)
                try:
                    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
                except (OSError, AttributeError):  # not Linux: the child outlives a killed parent
                    pass
                if os.getppid() != parent:  # the parent died before the line above took effect
                    os._exit(1)
                try:
                    outcome = ("value", fn(*args))
                except BaseException as err:  # noqa: BLE001 - every failure goes back to the caller
                    err.add_note(f"(raised in a forked child process:)\n{traceback.format_exc()}")
                    outcome = ("error", err)
                try:
                    data = pickle.dumps(outcome)
                    pickle.loads(data)  # an exception class that does not come back goes back as text
                except Exception:  # noqa: BLE001
                    data = pickle.dumps(("error", RuntimeError(
                        f"{getattr(fn, '__name__', 'call')}: {outcome[1]!r}\n{traceback.format_exc()}")))
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(data)
            except BaseException:  # noqa: BLE001 - the parent sees an empty answer
                status = 1
            finally:
                os._exit(status)
        os.close(write)
        self._pid, self._read, self._name = pid, read, getattr(fn, "__name__", "call")

    def result(self):
        with os.fdopen(self._read, "rb") as pipe:
            data = pipe.read()
        os.waitpid(self._pid, 0)
        self._pid = None
        if not data:
            raise RuntimeError(f"{self._name}: its child process died without an answer")
        kind, value = pickle.loads(data)
        if kind == "error":
            raise value
        return value

    def cancel(self) -> None:
        if self._pid is None:
            return
        try:
            os.kill(self._pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self._pid, 0)
        os.close(self._read)
        self._pid = None
