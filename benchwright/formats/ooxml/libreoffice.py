"""LibreOffice headless conversions: the "does another office suite open it" gate and re-saves.

Every call runs ``soffice --headless --norestore -env:UserInstallation=file:///tmp/...`` with a
private, writable profile directory per worker thread (concurrent workers, processes or the threads of
one process as in Beam's multi_threading mode, never share one: a second soffice on a profile in use
hands its files to the first and exits 1 without converting them).
Batch mode converts many files in one soffice invocation (starting soffice dominates the cost);
if a batch fails as a whole, files are retried one by one so the culprit is named. A profile is made
knowing the installed version (``_seed_profile``): else every start counts as the first of a new
version and runs LibreOffice's graphics render self-tests, half the CPU of converting a dozen files.
LibreOffice is more lenient than Word: passing is necessary, not sufficient.
"""
from __future__ import annotations

import atexit
import functools
import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

_PROFILE_DIRS: dict[tuple[int, int], str] = {}


def find_soffice() -> str | None:
    for name in ("soffice", "libreoffice"):
        path = shutil.which(name)
        if path:
            return path
    return None


def available() -> bool:
    return find_soffice() is not None


@functools.cache
def _product_version(soffice: str) -> str | None:
    """The installed LibreOffice's version as its configuration states it (``7.4``), or None if not found."""
    xcd = Path(os.path.realpath(soffice)).parent.parent / "share" / "registry" / "main.xcd"
    try:
        found = re.search(r'<prop oor:name="ooSetupVersion">\s*<value>(\d+\.\d+)</value>',
                          xcd.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None
    return found.group(1) if found else None


_PROFILE_SEED = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Setup/Product"><prop oor:name="ooSetupLastVersion" oor:op="fuse"><value>{version}\
</value></prop></item>
</oor:items>
"""


def _seed_profile(profile: str) -> None:
    """The new profile records the installed version as the last one it ran. A headless conversion never
    records it itself, so each start took the profile for one of an older version and ran the graphics render
    self-tests (a log file, nothing a conversion uses): about 1 CPU-s of soffice's 2 on a batch of 12 files."""
    soffice = find_soffice()
    version = _product_version(soffice) if soffice else None
    if version is not None:
        os.makedirs(os.path.join(profile, "user"))
        Path(profile, "user", "registrymodifications.xcu").write_text(_PROFILE_SEED.format(version=version),
                                                                       encoding="utf-8")


def _profile_url() -> str:
    # one per thread, not per process: multi_threading runs two bundles' soffice calls in one process
    worker = (os.getpid(), threading.get_ident())
    if worker not in _PROFILE_DIRS:
        # reused by every later call of this thread, removed at exit
        _PROFILE_DIRS[worker] = tempfile.mkdtemp(prefix=f"benchwright-lo-{worker[0]}-")
        _seed_profile(_PROFILE_DIRS[worker])
    return Path(_PROFILE_DIRS[worker]).as_uri()


def _remove_profiles() -> None:
    """This process's profiles only: a forked child that exits normally runs the parent's exit hooks,
    and must not delete the profiles its parent is still using."""
    for (pid, _), path in list(_PROFILE_DIRS.items()):
        if pid == os.getpid():
            shutil.rmtree(path, ignore_errors=True)


atexit.register(_remove_profiles)


def _run(args: list[str], timeout: float) -> tuple[int, str]:
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        # kill the process group this call created (soffice forks soffice.bin)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        return -9, f"timed out after {timeout:.0f}s"


def _convert_dir(paths: list[Path], fmt: str, outdir: Path, timeout: float) -> tuple[int, str]:
    soffice = find_soffice()
    if soffice is None:
        raise RuntimeError("soffice (LibreOffice) is not installed")
    args = [soffice, "--headless", "--norestore", "--nologo", "--nodefault", "--nolockcheck",
            f"-env:UserInstallation={_profile_url()}", "--infilter=MS Word 2007 XML", "--convert-to", fmt, "--outdir", str(outdir)]
    args += [str(p) for p in paths]
    return _run(args, timeout)


def _out_ext(fmt: str) -> str:
    return fmt.split(":", 1)[0]


def convert_many(docs: dict[str, bytes], fmt: str = "pdf", *, timeout_base: float = 60.0,
                 timeout_per_file: float = 15.0, retry_singly: bool = True) -> dict[str, tuple[bytes | None, str]]:
    """Convert many .docx files in one soffice call. Returns name -> (output bytes or None, message)."""
    results: dict[str, tuple[bytes | None, str]] = {}
    if not docs:
        return results
    with tempfile.TemporaryDirectory(prefix="benchwright-lo-job-") as tmp:
        tmpdir = Path(tmp)
        indir, outdir = tmpdir / "in", tmpdir / "out"
        indir.mkdir()
        outdir.mkdir()
        paths: dict[str, Path] = {}
        for i, (name, data) in enumerate(docs.items()):
            p = indir / f"f{i:05d}.docx"
            p.write_bytes(data)
            paths[name] = p
        rc, log = _convert_dir(list(paths.values()), fmt, outdir, timeout_base + timeout_per_file * len(paths))
        ext = _out_ext(fmt)
        missing = []
        for name, p in paths.items():
            out = outdir / (p.stem + "." + ext)
            if out.is_file() and out.stat().st_size > 0:
                results[name] = (out.read_bytes(), "ok")
            else:
                missing.append(name)
        if missing and len(paths) > 1 and retry_singly:
            for name in missing:
                sub = convert_many({name: docs[name]}, fmt, timeout_base=timeout_base,
                                   timeout_per_file=timeout_per_file, retry_singly=False)
                results[name] = sub[name]
        else:
            for name in missing:
                results[name] = (None, f"LibreOffice produced no {ext} (exit {rc}): {log.strip()[-300:]}")
    return results


def _not_a_docx(data: bytes) -> str | None:
    """Why ``data`` is not a .docx at all, or None. LibreOffice opens an empty or foreign file as
    a new blank document and converts that, so it cannot be trusted to refuse one."""
    from benchwright.formats.ooxml.package import Package
    from benchwright.formats.ooxml.safety import UnsafeDocxError

    if not data:
        return "empty file (0 bytes)"
    try:
        Package.from_bytes(data, "libreoffice-gate").main_part()
    except UnsafeDocxError as exc:
        return exc.reason
    return None


def libreoffice_gate(docs: dict[str, bytes], memo: dict[bytes, list[str]] | None = None, **kw) -> dict[str, list[str]]:
    """Batch gate: name -> problems ([] when the file is a .docx and LibreOffice converted it to a
    non-empty PDF). Files with the same bytes are converted once (cases built on one base document share
    their input); ``memo`` (sha256 -> problems), kept by the caller across calls, carries that over to later
    batches (a base document's cases fall in several)."""
    memo = {} if memo is None else memo
    key_of = {name: hashlib.sha256(data).digest() for name, data in docs.items()}
    first_with: dict[bytes, str] = {}   # sha256 -> the first name with those bytes, to convert
    for name, data in docs.items():
        if key_of[name] in memo:
            continue
        why = _not_a_docx(data)
        if why is not None:
            memo[key_of[name]] = [f"libreoffice: not a .docx: {why}"]
        else:
            first_with.setdefault(key_of[name], name)
    for name, (pdf, msg) in convert_many({name: docs[name] for name in first_with.values()}, "pdf", **kw).items():
        memo[key_of[name]] = ([f"libreoffice: {msg}"] if pdf is None else
                              ["libreoffice: output is not a PDF"] if not pdf.startswith(b"%PDF") else [])
    return {name: list(memo[key_of[name]]) for name in docs}


def resave_docx(docs: dict[str, bytes], **kw) -> dict[str, bytes | None]:
    """LibreOffice round trip (open, save as .docx) for many files in one call."""
    return {name: data for name, (data, _msg) in convert_many(docs, "docx:MS Word 2007 XML", **kw).items()}
