"""Long work shows its progress (issue 23: after "[wordeval] running the pipeline" nothing was printed for
31.7 minutes): a build run as a user runs it prints, on a pipe (a CI log), a plain line every few seconds
with counts, rate and time left, for the pipeline's stages and the card's baseline agents; on a terminal
it draws bars; ``--quiet`` shows nothing of it; and none of it reaches the published files. The counts
come from a side channel the stages write while they run, which also works from FnApiRunner's worker
processes (Beam's own counters are read only at the end)."""
from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import yaml

from benchwright import progress
from benchwright.progress import Progress, Task, duration, read_channel
from tests.quality_builds import tiny_build
from tests.wordeval_helpers import build_log

REPO = Path(__file__).resolve().parents[1]


def _cli(args: list[str], tmp_path: Path, **env) -> tuple[list[str], dict]:
    return [sys.executable, "-m", "benchwright.cli", *args], {**os.environ, "TMPDIR": str(tmp_path), **env}


def _run_on_a_terminal(argv: list[str], env: dict, timeout: float = 600) -> tuple[int, str]:
    """Run ``argv`` with stdout and stderr on a pseudo-terminal (120 x 40), as in a user's shell."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env, cwd=REPO)
    os.close(slave)
    out = _read_terminal(master, timeout)
    return proc.wait(timeout=60), out


def _read_terminal(master: int, timeout: float = 60) -> str:
    """Everything written to a pseudo-terminal until its other end is closed."""
    out, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other end was closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return out.decode(errors="replace")


def test_a_build_in_a_ci_log_prints_progress_lines(wordeval_text_build):
    """WordEval (pipeline stages and the card's baseline agents) built by the CLI with its output on pipes
    (the shared build the harness tests use, made by the CLI: tests/wordeval_helpers.py): timed lines with
    counts out of totals; the side channel is gone. (That progress changes no published byte: the builds
    by cli_main, progress on, against those made without it in test_faults and test_object_storage.)"""
    built = wordeval_text_build
    stdout, stderr = build_log(built)
    lines = stderr.splitlines()
    units = sum(len(yaml.safe_load(p.read_text(encoding="utf-8"))["units"])
                for p in (built.parents[1] / "catalogue" / "units").glob("*.yaml"))
    # while it runs: "[wordeval] pipeline 3s: BuildAtomic 1/7 catalogue units (14%); ..."
    running = [line for line in lines if re.match(rf"\[wordeval\] pipeline \d+s: BuildAtomic \d+/{units} catalogue units",
                                                  line)]
    assert running, stderr[-3000:]
    final = [line for line in lines if line.startswith("[wordeval] pipeline done in ")]
    assert len(final) == 1 and f"BuildAtomic {units}/{units} catalogue units" in final[0], final
    assert re.search(r"LibreOfficeAtomic (\d+)/\1 atomic cases", final[0]), final
    assert re.search(r"BuildCompositional (\d+)/\1 templates", final[0]), final
    card = [line for line in lines if line.startswith("[wordeval] card: baseline agents done in ")]
    cases = sum(1 for _ in (built / "exports" / "cases").iterdir())
    assert len(card) == 1 and all(f"{agent} {cases}/{cases} cases scored" in card[0]
                                  for agent in ("null", "replay", "text-only")), card
    assert "\r" not in stderr  # no bar redrawn in a log
    assert "[wordeval] running the pipeline" in stdout
    # progress never enters the outputs, and its local channel is removed
    assert not [p for p in built.rglob("*") if "progress" in p.name]
    assert not list((built.parents[1] / "tmp").glob("benchwright-progress-*"))


def test_quiet_on_a_terminal_prints_only_the_result(tmp_path, tmp_path_factory):
    # the template: the cheapest build through the CLI (what --quiet silences is the same for every dataset)
    source, _ = tiny_build("template", tmp_path_factory)
    argv, env = _cli(["build", "template", "--source", str(source), "--out", str(tmp_path / "out"), "--quiet"],
                     tmp_path, BENCHWRIGHT_PROGRESS_INTERVAL="0.2")
    code, out = _run_on_a_terminal(argv, env)
    assert code == 0, out[-3000:]
    assert "[template]" not in out and "\r\r" not in out and "%|" not in out, out[-3000:]
    assert f"template at {tmp_path / 'out' / 'template'}" in out


def test_on_a_terminal_tasks_are_bars_with_rate_and_time_left():
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    with open(slave, "w", closefd=True) as terminal:
        shown = Progress("auto", stream=terminal, prefix="[demo]")
        assert shown.mode == "bar"
        with shown.phase("card: baseline agents") as phase:
            task = phase.task("replay", 40, "cases scored")
            for _ in range(40):
                task.advance()
                time.sleep(0.02)
        terminal.flush()
    text = _read_terminal(master)
    assert "[demo] replay: 100%|" in text and "40/40" in text and "cases scored/s" in text, text
    assert "\r" in text  # redrawn in place
    assert "[demo] card: baseline agents done in" in text


def test_plain_lines_name_counts_rate_and_time_left():
    stream = io.StringIO()
    with Progress("lines", stream=stream, interval=0.1, prefix="[demo]").phase("pipeline") as phase:
        task = phase.task("ParseSegment", 200, "segments")
        waiting = phase.task("AnnotateSegment", None, "segments", started=False)
        for _ in range(10):
            task.advance(10)
            time.sleep(0.06)
    lines = stream.getvalue().splitlines()
    moving = [line for line in lines if "left)" in line]
    assert moving, lines
    assert re.match(r"\[demo\] pipeline \d+s: ParseSegment \d+/200 segments \(\d+%, [\d.]+/s, about \d+s left\); "
                    r"AnnotateSegment waiting$", moving[0]), moving[0]
    assert lines[-1].startswith("[demo] pipeline done in ") and "ParseSegment 100/200 segments (50%" in lines[-1]
    assert waiting.describe() == "AnnotateSegment waiting"
    assert duration(59.6) == "1m00s" and duration(3725) == "1h02m" and duration(4) == "4s"
    quiet = io.StringIO()
    with Progress("off", stream=quiet).phase("pipeline") as phase:
        phase.task("x", 3, "y").advance(3)
    assert quiet.getvalue() == ""
    stopped = io.StringIO()  # an error or an interrupt: the last line says it stopped, with the counts
    try:
        with Progress("lines", stream=stopped, interval=60, prefix="[demo]").phase("run") as phase:
            task = phase.task("replay", 5, "cases scored")
            task.advance(2)
            task.note = "loss 0.5"
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert re.fullmatch(r"\[demo\] run stopped after 0s: replay 2/5 cases scored \(40%\), loss 0\.5\n", stopped.getvalue())


def test_stage_counts_reach_the_driver_from_worker_processes_while_the_pipeline_runs(tmp_path):
    """FnApiRunner multi_processing runs the stages in worker processes: their counts still reach the
    driver's poll before the pipeline ends, and a stage whose total is another stage's output follows it."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner

    from benchwright.stage import run_stage

    def slow(x):
        time.sleep(0.5)  # 12 elements on 2 workers: 3 s, polled every 0.1 s
        yield x

    channel = str(tmp_path / "channel")
    pipeline = beam.Pipeline(runner=FnApiRunner(), options=PipelineOptions(
        direct_running_mode="multi_processing", direct_num_workers=2))
    tracker = progress.attach(pipeline, channel)
    first = run_stage(pipeline | beam.Create(list(range(12))) | beam.Reshuffle(), "Slow", slow, unit="item",
                      total=12, what="items")
    run_stage(first.main | "Again" >> beam.Reshuffle(), "Follow", lambda x: [x, x], unit="item", total="Slow",
              what="items")
    seen = []
    poll = tracker.poller()

    def watch(phase):
        poll(phase)
        seen.append(phase.tasks[0].done)

    stream = io.StringIO()
    with Progress("lines", stream=stream, interval=60).phase("pipeline", watch, 0.1) as phase:
        pipeline.run().wait_until_finish()
    assert any(0 < d < 12 for d in seen), seen  # counted while the workers ran, not only at the end
    assert [(t.label, t.done, t.total) for t in phase.tasks] == [("Slow", 12, 12), ("Follow", 12, 12)]
    assert read_channel(channel) == {"Slow": (12, 12), "Follow": (12, 24)}
    assert "pipeline done in" in stream.getvalue() and "Follow 12/12 items" in stream.getvalue()


def test_a_task_seen_first_mid_way_measures_its_rate_from_there():
    task = Task("Scan", 100, "files", started=False)
    assert task.rate() is None and task.describe() == "Scan 0/100 files"
    task.update(50)
    time.sleep(0.6)
    task.update(60)
    rate = task.rate()
    assert rate is not None and rate < 10 / 0.55  # 10 files in ~0.6 s, not 60


def test_the_embedded_default_source_is_announced_and_counted_then_reused_in_silence(tmp_path, monkeypatch, capsys):
    # a build without --source writes the dataset's default source first (WildBox's: minutes); it used to say
    # nothing until the pipeline started. The template's default source: 2,000 records, the cheapest
    from benchwright.cli import main as cli_main

    monkeypatch.setenv("BENCHWRIGHT_PROGRESS_INTERVAL", "0.01")
    out = tmp_path / "out"
    assert cli_main(["build", "template", "--out", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    where = out.resolve() / ".sources" / "template-default"
    said = [line for line in err if "default source" in line]
    assert said[0] == (f"[template] writing the embedded default source (scale default, seed 0) into {where}: "
                       "once, later builds reuse it"), said
    assert re.fullmatch(r"\[template\] default source done in \d+s: written 2,000/2,000 records", said[-1]), said
    assert cli_main(["build", "template", "--out", str(out)]) == 0
    assert not [line for line in capsys.readouterr().err.splitlines() if "default source" in line]
