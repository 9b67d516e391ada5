"""Where a published build lives, on a local disk or on object storage, and how it is committed.

On a filesystem a build is staged beside the output and swapped into place with renames.

Object stores (S3 and the like) have no rename, so there a dataset URL holds

    <url>/builds/<build_id>/...          complete builds, each in the local layout (README.md,
                                          <config>/<split>-*.parquet, exports/, _build/...)
    <url>/_build/manifest.json            the committed build's manifest plus ``published_at``:
                                          written last, it is the commit

A build is written under ``_staging/<run>/`` first (the pipeline's workers write there), finalised
and validated, then copied to ``builds/<build_id>/`` (the id is a hash of the files' sha256 list,
so the same input gives the same id), and committed by writing the root manifest. A reader or
``validate`` resolves the root manifest first, so it sees the previous build or the new one, never
a mixture; the previously committed build is kept for readers still on it, older ones removed.
The endpoint comes from the standard ``AWS_ENDPOINT_URL`` variable (read by botocore, as the AWS
tools do); credentials from the usual AWS variables or files.

One build at a time per output and dataset: a local output holds a kernel lock (``benchwright.build``);
on S3 the build holds a lock object ``OUT/.lock-<dataset>`` (``ObjectLock``: created with a conditional
write, refreshed by a heartbeat, taken over when its heartbeat is older than the stale time).
"""
from __future__ import annotations

import contextlib
import datetime
import email.utils
import errno
import fcntl
import hashlib
import json
import logging
import os
import posixpath
import signal
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

from benchwright.errors import BenchwrightError, BuildError
from benchwright.layout import BUILD_DIR, MANIFEST

log = logging.getLogger(__name__)

BUILDS = "builds"
STAGING = "_staging"
FAILED = "_failed"  # a failed build's _build/ (quarantine, validation report), kept to explain it
LOCK_PREFIX = ".lock-"


FAULT_ENV = "BENCHWRIGHT_FAULT"


def fault_point(phase: str) -> None:
    """Test hook: when ``BENCHWRIGHT_FAULT`` names ``phase`` ("pipeline", "finalize", "publish"), the
    build kills itself with SIGKILL here, so tests can show what a crash at that point leaves behind."""
    if os.environ.get(FAULT_ENV) == phase:
        os.kill(os.getpid(), signal.SIGKILL)


def url_to_fs(url: str):
    """fsspec's (file system, path) of ``url``. fsspec is imported here, when a URL is first resolved (0.1-0.3
    s): ``benchwright info`` of a local build never imports it."""
    import fsspec

    return fsspec.core.url_to_fs(url)


def _plain_path(url: str) -> bool:
    """A path with no protocol (nor a chain of them): a local file for fsspec too."""
    return "://" not in url and "::" not in url


def is_local(url: str) -> bool:
    if _plain_path(url):
        return True
    from fsspec.implementations.local import LocalFileSystem

    return isinstance(url_to_fs(url)[0], LocalFileSystem)


def join(url: str, *parts: str) -> str:
    return posixpath.join(url.rstrip("/"), *parts)


def read_json(url: str) -> dict:
    """The JSON object at ``url`` as it is now. On an object store, one GET of the whole object: the root
    manifest is rewritten in place by a commit, and ``fsspec.open`` would take its size and ETag from a
    listing this process may have cached before that commit, then fail the If-Match GET (s3fs FileExpired)
    instead of reading the new one."""
    if _plain_path(url):
        with open(url, encoding="utf-8") as f:
            return json.load(f)
    fs, path = url_to_fs(url)
    return json.loads(fs.cat_file(path).decode("utf-8"))


def read_json_or_none(url: str) -> dict | None:
    """``read_json``, or None when there is no file at ``url``."""
    try:
        return read_json(url)
    except FileNotFoundError:
        return None


def committed_manifest(url: str) -> dict | None:
    """The manifest at a dataset URL (local folder or object-store root), or None when nothing is published."""
    return read_json_or_none(join(url, MANIFEST))


def committed(url: str) -> tuple[dict, str]:
    """(manifest, folder of the committed build) at dataset URL ``url``, from ONE read of the root
    manifest, so a commit landing meanwhile cannot mix two builds (the folder is the URL itself on a
    filesystem)."""
    manifest = committed_manifest(url)
    if manifest is None:
        raise BenchwrightError(f"{url}: no {MANIFEST}; is this a built dataset?")
    where = manifest.get("published_at")
    return manifest, (join(url, where) if where else url)


def resolve(url: str) -> str:
    """The folder of the committed build at dataset URL ``url``."""
    return committed(url)[1]


def data_files(url: str, config: str) -> dict[str, list[str]]:
    """{split: [shard URLs]} of a config of the committed build, for
    ``datasets.load_dataset("parquet", data_files=..., storage_options=...)`` on object storage."""
    manifest, root = committed(url)
    out: dict[str, list[str]] = {}
    for shard in manifest["shards"]:
        if shard["config"] == config:
            out.setdefault(shard["split"], []).append(join(root, shard["path"]))
    if not out:
        raise BenchwrightError(f"{url}: no config {config!r}; configs: "
                               f"{sorted({s['config'] for s in manifest['shards']})}")
    return {s: sorted(v) for s, v in out.items()}


def build_id(manifest: dict) -> str:
    """A content id: the same files (paths and sha256) give the same id."""
    h = hashlib.sha256()
    for f in manifest["files"]:
        h.update(f"{f['path']}\0{f['sha256']}\n".encode())
    return h.hexdigest()[:16]


def mirror(url: str, local: Path) -> dict[str, tuple[int, int]]:
    """Copy every file under ``url`` into the local folder ``local`` (same relative paths); returns
    {relative path: (size, mtime_ns)} of the copies as made, so a later step can tell which of them
    it left untouched."""
    fs, root = url_to_fs(url)
    local.mkdir(parents=True, exist_ok=True)
    if fs.exists(root):
        fs.get(root.rstrip("/") + "/", str(local) + "/", recursive=True)
    return {p.relative_to(local).as_posix(): _stat(p) for p in local.rglob("*") if p.is_file()}


def _stat(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def commit(local: Path, dataset_url: str, staging_url: str, mirrored: dict[str, tuple[int, int]],
           confirm_lock=None) -> str:
    """Publish the finalised local build ``local`` at object-store ``dataset_url``; returns the build URL.

    ``mirrored``: what ``mirror`` copied from ``staging_url``. A file still as mirrored is copied
    inside the store (no transfer through this machine); a file made or changed here is uploaded.
    The build's own manifest goes last inside its folder, then the root manifest commits it. A build
    with the same files already in the store (the id is their content) is committed as it is,
    never rewritten under its readers. ``confirm_lock`` (``ObjectLock.confirm``) raises unless this
    build still holds the output's lock: checked after the upload, just before the commit."""
    fs, _ = url_to_fs(dataset_url)
    manifest = json.loads((local / MANIFEST).read_text())
    bid = build_id(manifest)
    target = join(dataset_url, BUILDS, bid)
    previous = committed_manifest(dataset_url)
    existing = committed_manifest(target)
    if existing is None:
        _, staging_path = url_to_fs(staging_url)
        copies, uploads = [], []
        for f in sorted(p for p in local.rglob("*") if p.is_file()):
            rel = f.relative_to(local).as_posix()
            if rel == MANIFEST:
                continue
            dest = url_to_fs(join(target, rel))[1]
            if mirrored.get(rel) == _stat(f):
                copies.append((posixpath.join(staging_path, rel), dest))
            else:
                uploads.append((str(f), dest))
        if copies:  # lists: s3fs runs them concurrently
            fs.copy([c[0] for c in copies], [c[1] for c in copies])
        if uploads:
            fs.put([u[0] for u in uploads], [u[1] for u in uploads])
        fs.put_file(str(local / MANIFEST), url_to_fs(join(target, MANIFEST))[1])
        existing = manifest
    fault_point("publish")  # the build is in the store, not yet committed
    if confirm_lock is not None:
        confirm_lock()
    root = dict(existing, published_at=f"{BUILDS}/{bid}")
    import fsspec

    with fsspec.open(join(dataset_url, MANIFEST), "w", encoding="utf-8") as f:
        f.write(json.dumps(root, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    keep = {bid, posixpath.basename(previous["published_at"])} if previous and previous.get("published_at") else {bid}
    try:
        _remove_builds_except(dataset_url, keep)
    except OSError as err:  # the build is committed; a leftover folder is only space
        log.warning("%s: could not remove an older build: %s", dataset_url, err)
    return target


def _remove_builds_except(dataset_url: str, keep: set[str]) -> None:
    fs, builds = url_to_fs(join(dataset_url, BUILDS))
    fs.invalidate_cache(builds)  # what is there now, not a listing this process cached before other builds
    if not fs.exists(builds):
        return
    for path in fs.ls(builds, detail=False):
        # a folder without its manifest may be another build still uploading: never touched here
        # (a crashed upload's folder stays too; concurrent publishers are issue 13's)
        if posixpath.basename(path.rstrip("/")) not in keep and fs.exists(posixpath.join(path, MANIFEST)):
            fs.rm(path, recursive=True)


def remove_all_but_builds(dataset_url: str) -> None:
    """Remove what is at ``dataset_url`` besides what builds write there (the root manifest, builds/,
    _staging/, _failed/): what ``build --force`` replaces on object storage, once its build is committed."""
    fs, path = url_to_fs(dataset_url)
    fs.invalidate_cache(path)
    own = {posixpath.join(path, p) for p in (BUILDS, STAGING, FAILED, MANIFEST)}
    for entry in fs.ls(path, detail=False):
        if entry.rstrip("/") == posixpath.join(path, BUILD_DIR):
            for inner in fs.ls(entry, detail=False):
                if inner.rstrip("/") not in own:
                    fs.rm(inner, recursive=True)
        elif entry.rstrip("/") not in own:
            fs.rm(entry, recursive=True)


def remove(url: str) -> None:
    fs, path = url_to_fs(url)
    fs.invalidate_cache(path)  # s3fs answers exists() from listings it cached, maybe before another process wrote here
    if fs.exists(path):
        fs.rm(path, recursive=True)


# -- one build at a time per dataset on a local disk ----------------------------------------------

@contextlib.contextmanager
def local_lock(out: Path, name: str):
    """One build at a time per local output: an exclusive flock on ``OUT/.lock-<name>``, released by
    the kernel when the holder dies. The holder writes its pid and start time there and removes the
    file when it ends, failed or not; so a file found there with a record in it, once its lock is
    ours, was left by a build that was killed. Yields that record (``LocalLockRecord``), else None.

    Removing the file is safe: a build that opened it just before it went would lock an orphan, so
    after locking it checks that the path still names the file it locked, and tries again if not."""
    path = Path(out) / f"{LOCK_PREFIX}{name}"
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            holder = os.pread(fd, 200, 0).decode(errors="replace").split() or ["?"]
            os.close(fd)
            if err.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            raise BuildError(f"{Path(out) / name}: another build of {name} is running on this output "
                             f"(pid {holder[0]} holds {path}); nothing was built") from None
        try:
            here = os.stat(path)
        except FileNotFoundError:
            here = None
        mine = os.fstat(fd)
        if here is not None and (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino):
            break
        os.close(fd)  # its holder removed it between our open and our lock: lock the one there now
    try:
        left = LocalLockRecord.parse(os.pread(fd, 200, 0).decode(errors="replace"), path)
        os.ftruncate(fd, 0)
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        os.pwrite(fd, f"{os.getpid()} {started}\n".encode(), 0)
        yield left
    finally:
        try:
            os.unlink(path)  # still ours: nobody else can lock it before it is closed
        except OSError:
            pass
        os.close(fd)


@dataclass(frozen=True)
class LocalLockRecord:
    """What a killed build left in its local lock file: its pid and start time."""
    path: Path
    pid: str
    started_at: str

    @classmethod
    def parse(cls, text: str, path: Path) -> "LocalLockRecord | None":
        fields = text.split()
        if len(fields) != 2:  # a new file, or one of the earlier releases, which left their pid there after every build
            return None
        return cls(path, fields[0], fields[1])

    def describe(self) -> str:
        return f"pid {self.pid}, started {self.started_at}"


# -- one build at a time per dataset on object storage ------------------------------------------

def lock_url(out: str, name: str) -> str:
    """The build lock of dataset ``name`` at output ``out``: ``OUT/.lock-<name>``, beside ``OUT/<name>``."""
    return join(out, LOCK_PREFIX + name)


def has_object_lock(url: str) -> bool:
    """Whether builds at ``url`` take the object-store lock: S3 (s3fs), whose conditional writes
    (If-None-Match, If-Match) the lock needs. Other object stores build without one (docs/SCALING.md)."""
    fs = url_to_fs(url)[0]
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)
    return "s3" in protocols


@dataclass(frozen=True)
class LockHolder:
    """A lock object as read: the holder's record, the version's ETag, and how long ago it was
    written by the store's own clock (the response's Date minus the object's LastModified, so the
    clocks of the machines building never enter)."""
    record: dict
    etag: str
    age_s: float

    def describe(self) -> str:
        r = self.record
        return (f"host {r.get('host', '?')} pid {r.get('pid', '?')} run {r.get('run', '?')}, started "
                f"{r.get('started_at', '?')}, last heartbeat {self.age_s:.0f} s ago")


class ObjectLock:
    """One build at a time per dataset on an S3 output: the lock object ``OUT/.lock-<name>``.

    Acquired with a conditional create (``If-None-Match: *``): of two builds starting at once exactly
    one gets it, the other refuses naming the holder. The holder rewrites it every ``stale_after / 5``
    seconds (the heartbeat), each time only if it is still the version it wrote (``If-Match``), checks
    it the same way just before its commit, and deletes it when the build ends, succeeded or failed.

    Stale rule: a killed build cannot delete its lock. A lock last written more than ``stale_after``
    seconds ago (the store's clock) is taken over by overwriting exactly the version seen (of two
    takers one wins), and the dead run's staging folder is removed. A holder that finds its lock
    gone or taken over (it was paused longer than the stale time, or ``benchwright unlock`` removed
    it) stops before its commit, so the build that took over is the only one that can publish."""

    BEATS_PER_STALE = 5

    def __init__(self, out: str, name: str, run: str, stale_after: float):
        self.url = lock_url(out, name)
        self.dataset_url = join(out, name)
        self.fs, path = url_to_fs(self.url)
        self.bucket, self.key = self.fs.split_path(path)[:2]
        self.stale_after = float(stale_after)
        self.interval = self.stale_after / self.BEATS_PER_STALE
        self.record = {"dataset": name, "host": socket.gethostname(), "pid": os.getpid(), "run": run,
                       "started_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                       "heartbeat_every_s": self.interval, "stale_after_s": self.stale_after, "beats": 0}
        self.etag: str | None = None
        self.lost: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._write_lock = threading.Lock()  # the heartbeat thread and confirm() both rewrite the object

    # the store
    def _put(self, **condition) -> str:
        body = (json.dumps(self.record, indent=2, sort_keys=True) + "\n").encode()
        return self.fs.call_s3("put_object", Bucket=self.bucket, Key=self.key, Body=body, **condition)["ETag"]

    def read(self) -> LockHolder | None:
        return read_lock(self.url)

    # holding
    def acquire(self, progress=None) -> None:
        for _ in range(3):  # each turn ends in success, a refusal, or a change by another build
            try:
                self.etag = self._put(IfNoneMatch="*")
                break
            except PermissionError:  # the store refuses this build's writes: no lock to wait for
                raise
            except OSError:  # 412: it exists; S3's 409 (two creates at once) reaches s3fs as a plain OSError
                pass
            held = self.read()
            if held is None:
                continue  # released meanwhile
            if held.record.get("run") == self.record["run"]:
                self.etag = held.etag  # our own create, answered after a retry of the request
                break
            # stale by the holder's own rule too: a build started with a shorter --stale-lock-after must not
            # take over a live holder that beats at the pace of its longer one
            stale_after = max(self.stale_after, _number(held.record.get("stale_after_s")))
            if held.age_s < stale_after:
                raise BuildError(
                    f"{self.dataset_url}: another build of {self.record['dataset']} holds this output "
                    f"({self.url}: {held.describe()}); nothing was built. If that build is dead, build again "
                    f"once its heartbeat is older than {stale_after:g} s (the longer of --stale-lock-after and "
                    f"the holder's), or remove "
                    f"the lock now with `benchwright unlock {self.dataset_url}`")
            try:
                self.etag = self._put(IfMatch=held.etag)
            except OSError:
                continue  # another build took it over or released it first
            message = (f"[{self.record['dataset']}] took over a stale lock {self.url} ({held.describe()}; "
                       f"stale after {stale_after:g} s)")
            (progress or log.warning)(message)
            break
        else:
            raise BuildError(f"{self.url}: the lock changed under every attempt to take it; nothing was built")
        self._thread = threading.Thread(target=self._heartbeat, name=f"lock-{self.key}", daemon=True)
        self._thread.start()
        try:  # what dead builds left is nobody's now that the lock is this build's
            said = clean_up_object_store(self.dataset_url, self.record["run"])
        except Exception as err:  # noqa: BLE001 - only space: the build goes on
            log.warning("%s: could not remove what earlier builds left: %s", self.dataset_url, err)
        else:
            if said:
                (progress or log.warning)(f"[{self.record['dataset']}] {said}")

    def _beat(self) -> None:
        with self._write_lock:
            if self.lost:
                return
            self.record["beats"] += 1
            try:
                self.etag = self._put(IfMatch=self.etag)
            except OSError as err:
                held = self.read()
                if held is None:
                    self.lost = f"{self.url} was removed (benchwright unlock?)"
                elif held.record.get("run") == self.record["run"]:
                    self.etag = held.etag  # our own write, answered after a retry of the request
                elif held.etag != self.etag:
                    self.lost = f"{self.url} was taken over by {held.describe()}"
                else:
                    log.warning("%s: heartbeat failed, retried at the next one: %s", self.url, err)

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self._beat()
            except Exception as err:  # the store unreachable for a moment: the next beat retries
                log.warning("%s: heartbeat failed: %s", self.url, err)
            if self.lost:
                log.error("%s: this build lost its lock: %s", self.url, self.lost)
                return

    def confirm(self) -> None:
        """Raise unless this build still holds the lock (checked by rewriting it on condition)."""
        self._beat()
        if self.lost:
            raise BuildError(f"{self.dataset_url}: this build lost its lock ({self.lost}); nothing was published")

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.lost or self.etag is None:
            return
        try:
            self.fs.call_s3("delete_object", Bucket=self.bucket, Key=self.key, IfMatch=self.etag)
        except OSError as err:  # removed or taken over meanwhile: not ours to delete
            log.warning("%s: lock not released (no longer this build's): %s", self.url, err)


def clean_up_object_store(dataset_url: str, own_run: str) -> str | None:
    """Remove what builds that did not finish left at ``dataset_url`` on object storage: every
    ``_staging/<run>`` but ``own_run``'s, and every ``builds/<id>`` without its manifest (an upload cut
    short). Only for the lock's holder: no other build can be writing there. Returns what was removed."""
    fs, path = url_to_fs(dataset_url)
    leftovers = []
    for parent, keep in ((STAGING, lambda p: posixpath.basename(p) == own_run),
                         (BUILDS, lambda p: fs.exists(posixpath.join(p, MANIFEST)))):
        folder = posixpath.join(path, parent)
        fs.invalidate_cache(folder)
        try:
            entries = fs.ls(folder, detail=False)
        except FileNotFoundError:
            continue
        leftovers += [e.rstrip("/") for e in entries if not keep(e.rstrip("/"))]
    said = []
    for entry in leftovers:
        found = fs.find(entry, detail=True)
        size = sum(info.get("size") or 0 for info in found.values())
        fs.rm(entry, recursive=True)
        said.append(f"{fs.unstrip_protocol(entry)} ({len(found):,} objects, {size / 1e6:,.1f} MB)")
    if not said:
        return None
    return "cleaned up after builds that did not finish: removed " + ", ".join(said)


def read_lock(url: str) -> LockHolder | None:
    """The S3 lock object at ``url`` as it is now (None when there is none), from one GET."""
    fs, path = url_to_fs(url)
    bucket, key = fs.split_path(path)[:2]

    async def get():
        try:
            response = await fs._call_s3("get_object", Bucket=bucket, Key=key)
        except FileNotFoundError:
            return None
        async with response["Body"] as body:
            data = await body.read()
        return data, response

    from fsspec.asyn import sync

    got = sync(fs.loop, get)
    if got is None:
        return None
    data, response = got
    served_at = email.utils.parsedate_to_datetime(response["ResponseMetadata"]["HTTPHeaders"]["date"])
    try:
        record = json.loads(data)
    except ValueError:
        record = {"unreadable": data[:200].decode(errors="replace")}
    return LockHolder(record, response["ETag"], max(0.0, (served_at - response["LastModified"]).total_seconds()))


@contextlib.contextmanager
def object_lock(out: str, name: str, run: str, stale_after: float, progress=None):
    """Hold ``OUT/.lock-<name>`` on S3 for the duration (``ObjectLock``); yields its ``confirm``
    (a no-op where the store has no lock: ``has_object_lock``)."""
    if not has_object_lock(out):
        log.warning("%s: no build lock on this store (only S3 has one); two builds of %s at once would "
                    "both publish and the last commit wins", out, name)
        yield lambda: None
        return
    lock = ObjectLock(out, name, run, stale_after)
    lock.acquire(progress)
    try:
        yield lock.confirm
    finally:
        lock.release()


def unlock(dataset_url: str) -> str:
    """Remove the object-store lock of the dataset at ``dataset_url`` by hand, and its holder's staging
    folder; returns what was removed (the holder), or why nothing was. A build still alive that held
    it stops before its commit."""
    out, name = dataset_url.rstrip("/").rsplit("/", 1)
    url = lock_url(out, name)
    if is_local(url):
        raise BenchwrightError(f"{dataset_url}: a local output's lock is a kernel lock (flock on {url}), released "
                               "when its holder exits; there is nothing to remove by hand")
    if not has_object_lock(url):
        raise BenchwrightError(f"{dataset_url}: builds on this store take no lock; nothing to remove")
    fs, path = url_to_fs(url)
    bucket, key = fs.split_path(path)[:2]
    held = read_lock(url)
    if held is None:
        return f"{url}: no lock; nothing removed"
    try:
        fs.call_s3("delete_object", Bucket=bucket, Key=key, IfMatch=held.etag)
    except OSError:
        raise BenchwrightError(f"{url}: the lock changed while it was being removed; run unlock again "
                               "after checking its holder") from None
    if held.record.get("run"):
        remove(join(dataset_url, STAGING, held.record["run"]))
    return f"{url}: removed the lock of {held.describe()}"


def _number(value) -> float:
    """A lock record's number, 0 when it is missing or not a number (an older or damaged record)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
