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


def _raise_record_error():
    from benchwright.errors import RecordError

    raise RecordError("val.json#annotation_id=11", "dataset_id 7 is not its image's 1")


def test_an_error_keeps_its_type_and_the_childs_traceback():
    with pytest.raises(ValueError) as info:
        ForkedCall(_fail, "bad source").result()
    assert "forked child" in "".join(info.value.__notes__) and "_fail" in "".join(info.value.__notes__)
    from benchwright.errors import RecordError

    with pytest.raises(RecordError) as info:  # the CLI reports a BenchwrightError as `benchwright: error: ...`
        ForkedCall(_raise_record_error).result()
    assert info.value.locator == "val.json#annotation_id=11" and "_raise_record_error" in "".join(info.value.__notes__)
    # an exception that does not unpickle comes back as text, with the traceback of where it was raised
    with pytest.raises(RuntimeError, match="shard 3") as info:
        ForkedCall(_raise_unpicklable).result()
    assert "_raise_unpicklable" in str(info.value) and "__init__" not in str(info.value)


def _stuck_in_a_child(parent: int):
    if os.getpid() != parent:
        time.sleep(3600)  # blocked on nothing, no CPU time: a child deadlocked on a lock looks the same
    return "computed here"


def test_a_stuck_child_is_killed_and_the_value_computed_here(monkeypatch):
    from benchwright import forked

    monkeypatch.setattr(forked, "STUCK_AFTER_S", 1.0)
    monkeypatch.setattr(forked, "POLL_S", 0.2)
    call = ForkedCall(_stuck_in_a_child, os.getpid())
    pid = call._pid
    assert call.result() == "computed here"
    assert not _alive(pid)


def test_an_interrupt_while_waiting_kills_the_child_and_closes_only_its_pipe(tmp_path):
    import signal

    call = ForkedCall(time.sleep, 60)
    pid = call._pid
    previous = signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        with pytest.raises(KeyboardInterrupt):
            call.result()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    with open(tmp_path / "other", "w") as other:  # may reuse the pipe's descriptor number
        call.cancel()  # the caller's finally: nothing closed twice
        other.write("still open")
    assert not _alive(pid) and (tmp_path / "other").read_text() == "still open"


def test_a_held_call_warms_up_at_once_and_computes_once_started(tmp_path):
    from benchwright.forked import HeldCall

    marker = tmp_path / "warm"
    call = HeldCall(lambda a, b: (a, b, os.getpid()), "first", warm_up=lambda: marker.write_text("warm"))
    for _ in range(600):
        if marker.exists():
            break
        time.sleep(0.05)
    assert marker.read_text() == "warm"  # before start(): the child did what needs no argument
    call.start("x" * 200_000)  # more than a pipe holds at once
    a, b, pid = call.result()
    assert (a, b) == ("first", "x" * 200_000) and pid != os.getpid()
    with pytest.raises(RuntimeError):
        call.start("again")


def test_a_held_call_whose_child_dies_is_computed_here():
    from benchwright.forked import HeldCall

    call = HeldCall(lambda a, b: (a, b, os.getpid()), 1, warm_up=lambda: os._exit(3))
    time.sleep(0.2)
    call.start(2)
    assert call.result() == (1, 2, os.getpid())
    call.cancel()  # harmless when done


def probe_card_tables(build: str, settings) -> dict:
    """A declared ``card_baselines_beside``: which process computed it, and which wrote the exports before."""
    from pathlib import Path

    return {"pid": os.getpid(), "exported_by": (Path(build) / "exported").read_text()}


def test_the_cards_part_beside_the_checks_is_computed_in_the_exports_child_after_the_exports(tmp_path):
    """``Dataset.card_baselines_beside`` (a declared "module:function"): the build's exports child computes it,
    after the exports (a card may read them), in another process than the build's."""
    from benchwright import build
    from benchwright.dataset import Dataset
    from benchwright.prepared import Prepared

    class Probe(Dataset):
        name = "probe"
        card_baselines_beside = "tests.test_forked:probe_card_tables"

        def export(self, staging, prepared=None):
            (tmp_path / "exported").write_text(str(os.getpid()))
            return {"files": 1}

    exports, export_s, beside, beside_s = ForkedCall(build._export_and_card_part, Probe(), str(tmp_path), Prepared()).result()
    assert exports == {"files": 1} and export_s >= 0 and beside_s >= 0
    assert beside["pid"] != os.getpid() and beside["exported_by"] == str(beside["pid"])
