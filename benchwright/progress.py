"""Progress of long work: counts done out of total, the rate and the time left, for people watching.

Two halves:

* **Showing it** (the driver): ``Progress`` draws a bar per task on a terminal, prints one plain line
  every few seconds when stderr is not a terminal (CI logs; ``BENCHWRIGHT_PROGRESS_INTERVAL`` seconds,
  default 5), or nothing (``--quiet``). Work groups its tasks into a ``phase`` ("pipeline", "card:
  baseline agents"); a background thread redraws them, so a task that advances from the main thread
  (a card running agents case by case) only bumps a counter. ``current()`` is the display the command
  chose (``use``), so code deep in a card reports without being handed one.

* **Measuring a pipeline** (the workers): Beam's metrics are read only once a pipeline has finished
  (FnApiRunner returns them from ``run``), so a ``Stage`` that is tracked (``run_stage(..., total=)``)
  also writes its running counts to a side channel: one small JSON file per DoFn instance under a
  folder the driver lists every second or so. The folder is a temporary one on the driver's disk for a
  local output (every runner whose workers share that disk: FnApiRunner in_memory, multi_threading and
  multi_processing, a local Dask cluster, the Portable runner with local workers) and
  ``<staging>/_progress`` in the object store for an object-storage output (any runner whose workers
  reach the store: Dataflow, Flink, Spark, a remote Dask cluster). It is removed once the pipeline has
  run, before the build is finalized: nothing of it reaches the published files. A runner whose workers
  cannot reach it (a remote cluster writing to a local output) shows the counts only at the end. The
  counts are for people: a retried bundle may count twice; the reconciliation reads Beam's counters.
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import posixpath
import sys
import threading
import time
import uuid
from typing import Callable, Iterable, Iterator

import fsspec
from fsspec.implementations.local import LocalFileSystem

from benchwright.published import is_local

log = logging.getLogger(__name__)

MODES = ("bar", "lines", "off")
INTERVAL_ENV = "BENCHWRIGHT_PROGRESS_INTERVAL"
LINE_INTERVAL = 5.0     # seconds between plain lines (when something moved)
HEARTBEAT = 30.0        # a plain line at least this often while a phase runs, moved or not
FLUSH_S = 1.0           # a worker writes its counts at most this often within a bundle (and at its end)
POLL_LOCAL_S, POLL_REMOTE_S = 1.0, 5.0  # the driver reads the channel this often


# ------------------------------------------------------------------------------------------ showing it

class Task:
    """One count: ``done`` of ``total`` ``unit`` (total None: unknown). Advanced from any thread; only
    the display's thread draws it."""

    def __init__(self, label: str, total: int | None, unit: str, started: bool = True):
        self.label, self.total, self.unit = label, total, unit
        self.done = 0
        self.note = ""  # what else is worth a glance ("loss 0.41"): after the count, or in the bar
        # rate = progress since the first observation (a pipeline stage may start long after the phase)
        self._t0: float | None = time.monotonic() if started else None
        self._done0 = 0

    def advance(self, n: int = 1) -> None:
        self.update(self.done + n)

    def update(self, done: int, total: int | None = None) -> None:
        if total is not None:
            self.total = total
        if self._t0 is None and done > 0:
            self._t0, self._done0 = time.monotonic(), done
        self.done = done

    def iterate(self, items: Iterable) -> Iterator:
        """``items``, advancing by one after each is consumed."""
        for item in items:
            yield item
            self.advance()

    def rate(self) -> float | None:
        """Units per second since the task was first seen moving (None until it has)."""
        if self._t0 is None:
            return None
        elapsed = time.monotonic() - self._t0
        moved = self.done - self._done0
        return moved / elapsed if elapsed > 0.5 and moved > 0 else None

    @property
    def finished(self) -> bool:
        return self.total is not None and self.done >= self.total

    def describe(self) -> str:
        """``ParseSegment 12/345 segments (3%, 1.5/s, about 3m42s left)``, then the note if any."""
        if not self.done and not self.total:
            return f"{self.label} waiting"  # its total is another stage's output, none yet
        count = f"{self.done:,}/{self.total:,}" if self.total is not None else f"{self.done:,}"
        text = f"{self.label} {count} {self.unit}".rstrip()
        details = []
        if not self.finished and self.total and self.done:
            rate = self.rate()
            details = [f"{100 * self.done / self.total:.0f}%"]
            if rate:
                details += [f"{rate:.3g}/s", f"about {duration((self.total - self.done) / rate)} left"]
        return text + (f" ({', '.join(details)})" if details else "") + (f", {self.note}" if self.note else "")


def duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Phase:
    """A named stretch of work with its tasks (``Progress.phase``)."""

    def __init__(self, title: str, poll: Callable[["Phase"], None] | None):
        self.title, self.poll = title, poll
        self.tasks: list[Task] = []
        self.start = time.monotonic()

    def task(self, label: str, total: int | None, unit: str = "", started: bool = True) -> Task:
        t = Task(label, total, unit, started)
        self.tasks.append(t)
        return t

    def reporter(self, label: str) -> Callable[..., None]:
        """``report(done, total, unit="")``: a callback for work that counts itself (a synth writing
        files), one task per unit it names."""
        tasks: dict[str, Task] = {}

        def report(done: int, total: int | None, unit: str = "") -> None:
            if unit not in tasks:
                tasks[unit] = self.task(label, total, unit)
            tasks[unit].update(done, total)

        return report

    def line(self, prefix: str, final: bool = False, stopped: bool = False) -> str:
        """The phase's plain line; ``final``: it ended ("done in"), or was ``stopped`` by an error or an
        interrupt ("stopped after")."""
        head = f"{prefix} {self.title}".strip()
        took = duration(time.monotonic() - self.start)
        when = (f"stopped after {took}" if stopped else f"done in {took}") if final else took
        shown = [t.describe() for t in self.tasks]
        return f"{head} {when}" + (": " + "; ".join(shown) if shown else "")


class Progress:
    """Where progress goes: ``bar`` (tqdm bars, for a terminal), ``lines`` (a plain line every
    ``interval`` seconds), ``off``; ``auto`` picks bar or lines by whether ``stream`` is a terminal."""

    def __init__(self, mode: str = "auto", stream=None, interval: float | None = None, prefix: str = ""):
        self.stream = stream if stream is not None else sys.stderr
        if mode == "auto":
            mode = "bar" if is_terminal(self.stream) else "lines"
        if mode not in MODES:
            raise ValueError(f"progress mode {mode!r}: one of auto, {', '.join(MODES)}")
        self.mode, self.prefix = mode, prefix
        self.interval = float(os.environ.get(INTERVAL_ENV, LINE_INTERVAL)) if interval is None else interval

    def prefixed(self, prefix: str) -> "Progress":
        return Progress(self.mode, self.stream, self.interval, prefix)

    def say(self, message: str) -> None:
        """One line now, before a phase whose first count may be a while coming (unless progress is off)."""
        if self.mode != "off":
            _print(self.stream, f"{self.prefix} {message}".strip())

    @contextlib.contextmanager
    def phase(self, title: str, poll: Callable[[Phase], None] | None = None,
              poll_every: float = POLL_LOCAL_S) -> Iterator[Phase]:
        """Show ``title``'s tasks while the block runs; ``poll(phase)`` (called from the display's
        thread every ``poll_every`` seconds) updates them from elsewhere (a pipeline's channel)."""
        phase = Phase(title, poll)
        if self.mode == "off":
            yield phase
            return
        stop = threading.Event()
        drawer = _Drawer(self, phase)
        thread = threading.Thread(target=drawer.run, args=(stop, poll_every), name="benchwright-progress",
                                  daemon=True)
        thread.start()
        stopped = True
        try:
            yield phase
            stopped = False
        finally:
            stop.set()
            thread.join()
            drawer.finish(stopped)


class _Drawer:
    """The display's thread: polls, redraws bars or prints a line when it is time."""

    def __init__(self, progress: Progress, phase: Phase):
        self.progress, self.phase = progress, phase
        self.bars: dict[int, object] = {}
        self.last_line, self.last_shown = time.monotonic(), None

    def run(self, stop: threading.Event, poll_every: float) -> None:
        tick = 0.25 if self.progress.mode == "bar" else min(1.0, max(0.05, self.progress.interval / 4))
        if self.phase.poll is not None:
            tick = min(tick, poll_every)
        polled = 0.0
        while not stop.wait(tick):
            now = time.monotonic()
            if self.phase.poll is not None and now - polled >= poll_every:
                self._poll()
                polled = now
            self._draw(now)

    def _poll(self) -> None:
        try:
            self.phase.poll(self.phase)
        except Exception as err:  # progress is for people: it never fails the work it shows
            log.debug("progress poll failed: %s", err)

    def _draw(self, now: float) -> None:
        if self.progress.mode == "bar":
            for i, task in enumerate(self.phase.tasks):
                if task.done > 0 or i in self.bars:
                    self._bar(i, task)
            return
        shown = [(t.done, t.total, t.note) for t in self.phase.tasks]
        due = now - self.last_line >= self.progress.interval
        if due and (shown != self.last_shown or now - self.last_line >= HEARTBEAT):
            self._print(self.phase.line(self.progress.prefix))
            self.last_line, self.last_shown = now, shown

    def _bar(self, i: int, task: Task) -> None:
        from tqdm import tqdm

        bar = self.bars.get(i)
        if bar is None:
            bar = self.bars[i] = tqdm(total=task.total, desc=f"{self.progress.prefix} {task.label}".strip(),
                                      unit=f" {task.unit}" if task.unit else "it", file=self.progress.stream,
                                      ncols=_columns(self.progress.stream), leave=True)
        if task.total != bar.total:
            bar.total = task.total
        if task.done != bar.n:
            bar.update(task.done - bar.n)
        if task.note != (bar.postfix or ""):
            bar.set_postfix_str(task.note)

    def finish(self, stopped: bool = False) -> None:
        if self.phase.poll is not None:
            self._poll()
        if self.progress.mode == "bar":
            for i, task in enumerate(self.phase.tasks):
                if task.done > 0 or i in self.bars:
                    self._bar(i, task)
            for bar in self.bars.values():
                bar.close()
        self._print(self.phase.line(self.progress.prefix, final=True, stopped=stopped))

    def _print(self, line: str) -> None:
        _print(self.progress.stream, line)


def _print(stream, line: str) -> None:
    try:
        print(line, file=stream, flush=True)
    except (OSError, ValueError):  # a closed pipe: the reader left, the work goes on
        pass


def _columns(stream) -> int:
    """The terminal's width (100 when it reports none: a terminal opened without a size)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns or 100
    except (AttributeError, ValueError, OSError):
        return 100


def is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


_CURRENT: contextvars.ContextVar[Progress | None] = contextvars.ContextVar("benchwright_progress", default=None)


def current() -> Progress:
    """The display the running command chose (``use``); off when none did (a library call)."""
    return _CURRENT.get() or Progress("off")


@contextlib.contextmanager
def use(progress: Progress) -> Iterator[Progress]:
    token = _CURRENT.set(progress)
    try:
        yield progress
    finally:
        _CURRENT.reset(token)


# ------------------------------------------------------------------------------ measuring a pipeline

class Tracked:
    """A stage whose progress is shown: ``total`` elements (an int known when the graph is built, or
    the name of the stage whose outputs it processes) of ``what``."""

    def __init__(self, stage: str, total: int | str, what: str):
        self.stage, self.total, self.what = stage, total, what


class PipelineProgress:
    """What a pipeline's tracked stages report to, attached to the ``beam.Pipeline`` while its graph
    is built (``attach``); ``run_stage`` finds it there and gives each tracked ``Stage`` the channel."""

    ATTRIBUTE = "_benchwright_progress"

    def __init__(self, channel: str):
        self.channel = channel
        self.tracked: list[Tracked] = []

    def track(self, stage: str, total: int | str, what: str) -> None:
        self.tracked.append(Tracked(stage, total, what))

    def poller(self) -> Callable[[Phase], None]:
        """``poll(phase)``: the channel's counts into one task per tracked stage."""
        tasks: dict[str, Task] = {}

        def poll(phase: Phase) -> None:
            if not tasks:
                for t in self.tracked:
                    tasks[t.stage] = phase.task(t.stage, t.total if isinstance(t.total, int) else None, t.what,
                                                started=False)
            counts = read_channel(self.channel)
            for t in self.tracked:
                done, _ = counts.get(t.stage, (0, 0))
                total = t.total if isinstance(t.total, int) else counts.get(t.total, (0, 0))[1]
                tasks[t.stage].update(done, total)

        return poll

    @property
    def poll_every(self) -> float:
        return POLL_LOCAL_S if is_local(self.channel) else POLL_REMOTE_S


def attach(pipeline, channel: str) -> PipelineProgress:
    progress = PipelineProgress(channel)
    setattr(pipeline, PipelineProgress.ATTRIBUTE, progress)
    return progress


def attached(pipeline) -> PipelineProgress | None:
    return getattr(pipeline, PipelineProgress.ATTRIBUTE, None)


class StageReport:
    """A DoFn instance's running counts (elements done, records out) of one stage, written to
    ``<channel>/<stage>-<random>.json`` at most every ``FLUSH_S`` seconds within a bundle and at the end
    of each bundle. Writing never fails the
    stage: an unwritable channel turns the report off."""

    def __init__(self, channel: str, stage: str):
        self._fs, root = fsspec.core.url_to_fs(channel)
        self._local = isinstance(self._fs, LocalFileSystem)
        self._root = root
        self._path = posixpath.join(root, f"{stage}-{uuid.uuid4().hex}.json")
        self.stage = stage
        self.done = self.out = 0
        self._written = (0, 0)
        self._last = time.monotonic()
        self._on = True

    def add(self, done: int, out: int) -> None:
        self.done += done
        self.out += out
        if time.monotonic() - self._last >= FLUSH_S:
            self.flush()

    def end_bundle(self) -> None:
        """At the end of a bundle: write what changed, on object storage too (one small object per bundle
        at most). Every bundle ends before the pipeline does, so the driver's last read, once the pipeline
        has run, sees every count; throttled here, a bundle ending within FLUSH_S of the last write left
        its final counts unwritten, and the last line showed a finished stage short of its total."""
        self.flush()

    def flush(self) -> None:
        counts = (self.done, self.out)
        if not self._on or counts == self._written:
            return
        self._last = time.monotonic()
        data = json.dumps({"stage": self.stage, "done": self.done, "out": self.out}).encode()
        try:
            if self._local:
                os.makedirs(self._root, exist_ok=True)
                tmp = f"{self._path}.{os.getpid()}.tmp"
                with open(tmp, "wb") as f:
                    f.write(data)
                os.replace(tmp, self._path)  # a reader sees the old counts or the new, never half
            else:
                self._fs.pipe_file(self._path, data)
            self._written = counts
        except Exception as err:
            log.debug("progress channel %s not writable (%s): no progress from this worker", self._root, err)
            self._on = False


def read_channel(channel: str) -> dict[str, tuple[int, int]]:
    """{stage: (elements done, records out)} summed over every report in ``channel``."""
    fs, root = fsspec.core.url_to_fs(channel)
    if not isinstance(fs, LocalFileSystem):
        fs.invalidate_cache(root)
    try:
        paths = [p for p in fs.find(root) if p.endswith(".json")]
    except (FileNotFoundError, OSError):
        return {}
    totals: dict[str, list[int]] = {}
    for path in paths:
        try:
            entry = json.loads(fs.cat_file(path))
            sums = totals.setdefault(entry["stage"], [0, 0])
            sums[0] += int(entry["done"])
            sums[1] += int(entry["out"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # written meanwhile, or removed: the next poll reads it
    return {stage: (d, o) for stage, (d, o) in totals.items()}
