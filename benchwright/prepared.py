"""Export work made from source files' bytes while the pipeline runs, kept by content for the exports to take.

A build's exports run after the pipeline, and some of their work depends only on the bytes of one source
file: WildBox's KITTI export encodes every frame as PNG, about half of its CPU time. A dataset declares
such work as ``Conversion``s (``Dataset.export_conversions``): a pure function of a file's bytes and
which source files it may apply to. The pipeline stage leaves one core mostly free (the in-process
runner holds the GIL; the source's fingerprint takes a fraction of the other core), so the build
converts every such source file then, in a forked child at low priority (``PreparedExports``), into a
folder of files named by the conversion and the sha256 of the bytes they were made from.

The exports write each converted file with ``Prepared.write``: it reads the input's bytes and takes the
file made from exactly those bytes when the folder has it (moved into place, so no published file
shares its inode with another), else makes it. So the exports are the same bytes whether the
preparation ran, finished or was stopped halfway, and a source file that changed after it was read,
or one the pipeline refused, can never be taken for a published one. ``Prepared()`` (nothing
prepared: ``benchwright export`` on a published build) makes every file.

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
from dataclasses import dataclass
from typing import Callable

from benchwright.errors import RecordError
from benchwright.forked import ForkedCall

PREFIX = ".prepared-exports-"  # + dataset name + "-" + a random suffix, beside the output
NICE = 10  # the child yields the cores to the pipeline, which the build waits for


@dataclass(frozen=True)
class Conversion:
    """A file an export makes from one input file's bytes alone.

    ``name`` keys what it makes (two conversions of one file never meet; it ends as the file's suffix);
    ``applies(path)``: whether a source file may be one the export converts, by its name (the
    preparation reads only those); ``make(data)``: the converted bytes, or None when the bytes do not
    convert. ``make`` sees any source file, the ones the pipeline refuses too, so it must refuse what
    would exhaust the machine (a decompression bomb) rather than try. ``refused``: what the export's
    error says of an input file that does not convert."""
    name: str
    applies: Callable[[str], bool]
    make: Callable[[bytes], bytes | None]
    refused: str


class Prepared:
    """The conversions made while the pipeline ran, in ``folder`` (None: nothing prepared)."""

    def __init__(self, folder: str | None = None):
        self.folder = folder

    def write(self, conversion: Conversion, source: str, target: str) -> None:
        """Write ``conversion`` of the local file ``source`` to ``target``: the prepared file made from the
        same bytes, moved into place, or made now. Raises RecordError naming ``source`` when it does not
        convert."""
        with open(source, "rb") as f:
            data = f.read()
        if self._take(content_key(conversion, data), target):
            return
        made = conversion.make(data)
        if made is None:
            raise RecordError(source, conversion.refused)
        _write(made, target)

    def _take(self, key: str, target: str) -> bool:
        if self.folder is None:
            return False
        path = os.path.join(self.folder, key)
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


class PreparedExports:
    """Every conversion of ``dataset.export_conversions()`` of the source's files, made in a forked child at
    low priority into a new folder; ``stop()`` ends it (what it finished stays usable), ``prepared`` is what
    the exports take from, ``close()`` also removes the folder."""

    def __init__(self, dataset, source: str, beside: str | None = None):
        if beside is not None:  # a killed earlier build's folders (builds of one output never overlap: its lock)
            for old in glob.glob(os.path.join(glob.escape(beside), f"{PREFIX}{glob.escape(dataset.name)}-*")):
                shutil.rmtree(old, ignore_errors=True)
        self.prepared = Prepared(tempfile.mkdtemp(prefix=f"{PREFIX}{dataset.name}-", dir=beside))
        self._child = ForkedCall(_prepare_at_low_priority, dataset, source, self.prepared.folder)

    def stop(self) -> None:
        self._child.cancel()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.prepared.folder, ignore_errors=True)


def _prepare_at_low_priority(dataset, source: str, folder: str) -> None:
    os.nice(NICE)
    prepare(dataset, source, folder)


def prepare(dataset, source: str, folder: str) -> None:
    """Into ``folder``, every source file (``dataset.source_files``) converted by each of the dataset's
    ``export_conversions`` that applies to it. A file that cannot be read or converted is left to the
    export (which converts only published files, and names one that does not convert)."""
    import fsspec

    conversions = dataset.export_conversions()
    fs = fsspec.core.url_to_fs(source)[0]
    for path in dataset.source_files(source):
        wanted = [c for c in conversions if c.applies(path)]
        if not wanted:
            continue
        try:
            data = fs.cat_file(path)
        except OSError:
            continue
        for conversion in wanted:
            try:
                made = conversion.make(data)
            except Exception:  # noqa: BLE001 - bytes the pipeline refuses: its quarantine names them, not this
                continue
            if made is not None:
                store(folder, content_key(conversion, data), made)


def content_key(conversion: Conversion, data: bytes) -> str:
    """The name of what ``conversion`` makes from ``data`` in a preparation folder."""
    return f"{hashlib.sha256(data).hexdigest()}.{conversion.name}"


def store(folder: str, key: str, made: bytes) -> None:
    """Keep ``made`` under ``key`` in ``folder``; written under a temporary name and renamed, so a child
    killed while writing leaves no partial file under a key."""
    path = os.path.join(folder, key)
    part = f"{path}.part-{os.getpid()}"
    _write(made, part)
    os.rename(part, path)


def _write(data: bytes, path: str) -> None:
    with open(path, "wb") as f:
        f.write(data)
