"""WordEval's raw format: a unit catalogue folder (``catalogue/`` in the package, or one written by
``benchwright synth wordeval``) at any fsspec URL.

The catalogue is a few hundred kilobytes of YAML, so a remote one is copied once per process into
a temporary folder and read like a local one.
"""
from __future__ import annotations

import atexit
import errno
import functools
import os
import posixpath
import shutil
import tempfile
from pathlib import Path

import fsspec
import yaml
from fsspec.implementations.local import LocalFileSystem

from benchwright import published
from benchwright.errors import BuildError, SourceError
from benchwright.files import file_version, resolves_outside
from benchwright.wordeval.catalogue import CATALOGUE_FILES, Catalogue, load_catalogue, shape_problem

REQUIRED = ("properties.yaml", "instructions.yaml", "basedocs.yaml", "units")


def read_catalogue(url: str) -> Catalogue:
    """The catalogue at ``url``; a missing part or malformed YAML is a ``SourceError`` naming the file.
    Read once per process and content listing (every unit of a build asks for it; an edited source
    is read again, and so is one with a folder added where a file was expected)."""
    fs, root = fsspec.core.url_to_fs(url)
    listing = tuple(sorted((p, file_version(info))
                           for p, info in fs.find(root, withdirs=True, detail=True).items())) if fs.exists(root) else ()
    return _read(url, listing)


def _check_local_files(base: Path, url: str) -> None:
    """The files a local catalogue is read from are its own (a link out of the folder, a loop or a
    dangling link is refused, naming it) and have names that are text."""
    paths = [base / name for name in CATALOGUE_FILES if (base / name).exists() or (base / name).is_symlink()]
    paths += sorted((base / "units").glob("*.yaml"))
    for path in paths:
        rel = os.path.relpath(path, base)
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:
            raise SourceError(f"{url}: file name {os.fsencode(rel)!r} is not valid UTF-8") from None
        try:
            os.path.realpath(path, strict=True)
        except OSError as err:
            what = "a symlink loop" if err.errno == errno.ELOOP else "a dangling symlink"
            raise SourceError(f"{url}: {rel} is {what} (not followed)") from None
        if resolves_outside(str(path), str(base)):
            raise SourceError(f"{url}: {rel} is a symlink to a place outside the catalogue (not followed)")


@functools.lru_cache(maxsize=8)
def _read(url: str, listing: tuple) -> Catalogue:
    fs, root = fsspec.core.url_to_fs(url)
    missing = [name for name in REQUIRED if not fs.exists(posixpath.join(root, name))]
    if missing:
        raise SourceError(f"{url}: not a WordEval catalogue (missing {', '.join(missing)}); "
                          "`benchwright synth wordeval --out DIR` writes one")
    if isinstance(fs, LocalFileSystem):
        local = Path(root)
        _check_local_files(local, url)
    else:
        local = Path(tempfile.mkdtemp(prefix="benchwright-catalogue-"))
        atexit.register(shutil.rmtree, local, True)
        published.mirror(url, local)
    try:
        return load_catalogue(str(local))  # memoised by what the files hold, not by the folder
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark else ""
        raise SourceError(f"{url}: malformed catalogue YAML{where}: {err}") from None
    except BuildError as err:  # names the catalogue file, the item and its line
        raise SourceError(f"{url}: invalid catalogue: {err}") from None
    except (KeyError, TypeError, AttributeError) as err:  # an item of the wrong shape the loader did not name
        raise SourceError(f"{url}: invalid catalogue: {shape_problem(err)}") from None
    except (OSError, ValueError) as err:  # unreadable, not UTF-8, an integer past Python's digit limit
        raise SourceError(f"{url}: unreadable catalogue file: {err}") from None
