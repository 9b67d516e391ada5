"""benchwright.forked: a function computed in a forked child (the build's source fingerprint)."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from benchwright.forked import ForkedCall


def _fail(message):
    raise ValueError(message)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_child_computes_the_value_or_raises_its_error():
    assert ForkedCall(sorted, {"b": 1, "a": 2}).result() == ["a", "b"]
    assert ForkedCall(os.getpid).result() != os.getpid()
    with pytest.raises(ValueError, match="bad source"):
        ForkedCall(_fail, "bad source").result()


def test_cancel_kills_the_child():
    call = ForkedCall(time.sleep, 60)
    pid = call._pid
    assert _alive(pid)
    call.cancel()
    assert not _alive(pid)
    call.cancel()  # twice is harmless


def test_a_killed_parent_takes_its_child_with_it():
    code = ("import os, time; from benchwright.forked import ForkedCall; c = ForkedCall(time.sleep, 60); "
            "print(c._pid, flush=True); time.sleep(1); os.kill(os.getpid(), 9)")  # the child is set up by then
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    child = int(proc.stdout.readline())
    assert proc.wait() == -9
    proc.stdout.close()  # (the child holds the pipe's other end while it lives)
    for _ in range(100):  # the kernel signals the orphan at once; reaping by init can take a moment
        if not _alive(child):
            break
        time.sleep(0.1)
    assert not _alive(child)


class _Unpicklable(Exception):
    def __init__(self, a, b):  # pickles as _Unpicklable(message): does not come back
        super().__init__(f"{a} {b}")


def _raise_unpicklable():
    raise _Unpicklable("shard", 3)


def test_an_error_keeps_the_childs_traceback_and_one_that_does_not_pickle_comes_back_as_text():
    with pytest.raises(ValueError) as info:
        ForkedCall(_fail, "bad source").result()
    assert "forked child" in "".join(info.value.__notes__) and "_fail" in "".join(info.value.__notes__)
    with pytest.raises(RuntimeError, match="shard 3"):
        ForkedCall(_raise_unpicklable).result()
