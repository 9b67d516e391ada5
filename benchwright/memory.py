"""The build's memory: the collector kept off the long-lived heap, freed memory handed back to the OS.

A build's process holds a large heap of long-lived objects it never frees: the modules of Beam, pyarrow,
datasets, torch, matplotlib (about 360k objects once a WildBox build has run). A full garbage collection
visits every one of them: 0.4 s each, three per build (``release_freed_memory``), and the collector runs
others by itself while modules are imported, whose objects it would promote and scan again and again.
So heavy imports run with the collector paused (``collection_paused``), and each build starts by moving
what is alive into the collector's permanent generation (``freeze_long_lived``), which collections skip.
"""
from __future__ import annotations

import contextlib
import ctypes
import gc


@contextlib.contextmanager
def collection_paused():
    """No automatic garbage collection inside: for importing heavy modules, whose objects all live on (a
    collection meanwhile would find nothing to free, and visit every object made so far)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def freeze_long_lived() -> None:
    """Moves every object alive now into the permanent generation, which no collection visits (imported
    modules, the registry's datasets). Called as a build starts, so a later build in the same process (a
    test worker's) does not rescan the earlier builds' survivors either. What is frozen is never freed
    by the collector: garbage in reference cycles made before the call stays (a build's own is
    collected at its end, by ``release_freed_memory``)."""
    gc.freeze()


def release_freed_memory(collect: bool = True) -> None:
    """Hands the heap a step freed back to the OS: glibc and Arrow's allocator keep it, so each step would
    start where the last one peaked (after a full-scale WildBox pipeline: 1.4 GB held, 0.55 GB after;
    reading a split's boxes for the exports: 100 MB of Arrow's kept). ``collect``: run the garbage
    collector first (a full collection of what is not frozen; skip it where only Arrow buffers and plain
    objects were freed)."""
    import pyarrow as pa  # imported by every build long before; not by the command line's start-up

    if collect:
        gc.collect()
    pa.default_memory_pool().release_unused()
    with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to trim
        ctypes.CDLL("libc.so.6").malloc_trim(0)
