"""Work counted, not timed: Python lines executed (``sys.settrace``) are the same on every run for the
same input, so a test can assert how work grows with the input on a loaded machine."""
from __future__ import annotations

import sys


def lines_executed(fn, *args) -> int:
    """Python lines executed by ``fn(*args)`` (all frames, library code included)."""
    n = 0

    def local(frame, event, arg):
        nonlocal n
        n += event == "line"
        return local

    sys.settrace(lambda frame, event, arg: local)
    try:
        fn(*args)
    finally:
        sys.settrace(None)
    return n
