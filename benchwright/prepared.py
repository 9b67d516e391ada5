"""Export work done from the raw source while the pipeline runs, kept by content for the exports to take.

A build's exports run after the pipeline, on the driver, and some of their work depends only on the
bytes of a source file: WildBox's KITTI export encodes every frame as PNG, about half of its CPU time.
The pipeline stage leaves one core mostly free (the in-process runner holds the GIL; the source's
fingerprint takes a fraction of the other core), so a dataset that declares ``Dataset.prepare_exports``
has that work started then, in a forked child at low priority, into a folder of files named by the
sha256 of the bytes they were made from (``cached``). The exports look each input up by its bytes'
sha256: a file found is taken (moved into place, so no published file shares its inode with another),
one not found is made as if nothing had been prepared. So the exports are the same bytes whether the
preparation ran, finished or was stopped halfway, and a source file that changed after it was read,
or one the pipeline refused, can never be taken for a published one.

The child is stopped when the pipeline ends (the exports then use the cores); the folder lives beside
the build's output (a local output: the same file system, so taking a file is a rename) or in the
system temp folder, and is removed when the build ends; a killed build's is removed by the next build
of the dataset into the same output.
"""
from __future__ import annotations

import glob
import hashlib
import os
import shutil
import tempfile

from benchwright.forked import ForkedCall

PREFIX = ".prepared-exports-"  # + dataset name + "-" + a random suffix, beside the output
NICE = 10  # the child yields the cores to the pipeline, which the build waits for


class PreparedExports:
    """``dataset.prepare_exports(source, folder)`` in a forked child at low priority; ``stop()`` ends it
    (what it finished stays usable), ``close()`` also removes the folder."""

    def __init__(self, dataset, source: str, beside: str | None = None):
        if beside is not None:  # a killed earlier build's folders (builds of one output never overlap: its lock)
            for old in glob.glob(os.path.join(glob.escape(beside), f"{PREFIX}{glob.escape(dataset.name)}-*")):
                shutil.rmtree(old, ignore_errors=True)
        self.folder = tempfile.mkdtemp(prefix=f"{PREFIX}{dataset.name}-", dir=beside)
        self._child = ForkedCall(_prepare, dataset, source, self.folder)

    def stop(self) -> None:
        self._child.cancel()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def _prepare(dataset, source: str, folder: str) -> None:
    os.nice(NICE)
    dataset.prepare_exports(source, folder)


def content_key(data: bytes) -> str:
    """The name a prepared file made from ``data`` has (its sha256, hex)."""
    return hashlib.sha256(data).hexdigest()


def store(folder: str, data: bytes, suffix: str, made: bytes) -> None:
    """Keep ``made`` (what was made from the input bytes ``data``) in ``folder``; written under a temporary
    name and renamed, so a child killed while writing leaves no partial file under a key."""
    path = os.path.join(folder, content_key(data) + suffix)
    part = f"{path}.part-{os.getpid()}"
    with open(part, "wb") as f:
        f.write(made)
    os.rename(part, path)


def take(folder: str | None, data: bytes, suffix: str, target: str) -> bool:
    """Move the file made from the input bytes ``data`` to ``target`` if it was prepared; False when it
    was not (the caller makes it)."""
    if folder is None:
        return False
    path = os.path.join(folder, content_key(data) + suffix)
    try:
        os.replace(path, target)
    except FileNotFoundError:
        return False
    except OSError:  # another file system (the system temp folder, an output elsewhere): a copy
        try:
            shutil.move(path, target)
        except FileNotFoundError:
            return False
    return True
