"""The agent harness: any command line as a WordEval agent, run case by case under limits.

An agent is a command that receives the input .docx path, a file holding the instruction and an
output path: ``CMD INPUT INSTRUCTION_FILE OUTPUT``, or wherever the command line says ``{input}``,
``{instruction}`` and ``{output}``. The shipped baselines (``null``, ``replay``, ``text-only``,
``libreoffice``: ``benchwright.wordeval.agents``) are named instead of spelled out.

Each case runs in its own temporary folder (the agent's working directory and ``TMPDIR``), with an
address-space limit (``RLIMIT_AS``), no core files and a wall-clock limit, below a supervisor
process (``supervisor.py``) that ends the agent's whole process tree when the agent ends or its
time is up: processes it started in another session (``setsid``, a daemon's double fork) included.
The supervisor runs the agent in a PID namespace of its own where the system allows it
(``containment: pid-namespace``), otherwise as the child subreaper of the agent's tree
(``subreaper``: orphans come back to it), and sweeps what is left below it. Exit status, signal,
wall time, CPU time of the tree, peak memory, the processes the agent left running, the tails of
stdout and stderr and the output file are recorded. Cases run in parallel (threads, each waiting
on its agent's process), with their progress on stderr. Each case's record is written atomically to
``RUN_DIR/cases/<case_id>.json`` once it is scored, so a run that was interrupted resumes where it
stopped: cases with a record are skipped.

Scoring is not done here (the evaluator sits above this layer): ``run_cases`` takes ``score``.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Callable

from benchwright.errors import BenchwrightError
from benchwright.wordeval.agents import NEEDS_PLAN, SHIPPED

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MEMORY_MB = 2048
SUPERVISOR = Path(__file__).with_name("supervisor.py")
SUPERVISOR_GRACE_S = 30.0          # the supervisor ends the tree at the time limit; the harness kills it after this
TAIL_CHARS = 2000
CASES_DIR = "cases"
OUTPUTS_DIR = "outputs"
RUN_FILE = "run.json"
PLACEHOLDERS = ("{input}", "{instruction}", "{output}")
# What an agent that ran out of memory under RLIMIT_AS says on its way out (Python, C, C++, glibc).
MEMORY_WORDS = ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "out of memory", "Out of memory")


class Agent:
    """An agent: a shipped baseline's name or any command line."""

    def __init__(self, spec: str):
        spec = spec.strip()
        if not spec:
            raise BenchwrightError("--agent: an empty command")
        self.spec = spec
        self.shipped = spec in SHIPPED
        self.needs_plan = spec in NEEDS_PLAN
        self.argv = [sys.executable, "-m", SHIPPED[spec]] if self.shipped else shlex.split(spec)

    def command(self, input_path: Path, instruction_path: Path, output_path: Path, plan_path: Path | None) -> list[str]:
        values = {"{input}": str(input_path), "{instruction}": str(instruction_path), "{output}": str(output_path)}
        if any(p in a for a in self.argv for p in PLACEHOLDERS):
            argv = [a.replace("{input}", values["{input}"]).replace("{instruction}", values["{instruction}"])
                    .replace("{output}", values["{output}"]) for a in self.argv]
        else:
            argv = self.argv + list(values.values())
        return argv + (["--plan", str(plan_path)] if plan_path is not None else [])


def _tail(path: Path) -> str:
    if not path.exists():
        return ""
    with open(path, "rb") as f:
        f.seek(max(0, path.stat().st_size - TAIL_CHARS))
        return f.read().decode("utf-8", "replace")


def _last_line(text: str) -> str:
    lines = [x.strip() for x in text.strip().splitlines() if x.strip()]
    return lines[-1][:300] if lines else ""


class _Live:
    """The supervisors running now, so an interrupted run ends every agent's tree."""

    def __init__(self):
        self.pids: set[int] = set()
        self.lock = threading.Lock()
        self.stopping = False              # set on interruption: no further record is written

    def add(self, pid: int) -> None:
        with self.lock:
            self.pids.add(pid)

    def discard(self, pid: int) -> None:
        with self.lock:
            self.pids.discard(pid)

    def kill_all(self) -> None:
        with self.lock:
            self.stopping = True
            for pid in list(self.pids):
                _signal(pid, signal.SIGTERM)   # the supervisor kills and reaps the tree, then reports


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_events(stream) -> dict[str, dict]:
    """The supervisor's report lines by event (a line cut short by its death is left out)."""
    events = {}
    for line in stream:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events[event.get("event")] = event
    return events


def _prepare_case(agent: Agent, input_docx: bytes, instruction: str, workdir: Path, plan: dict | None) -> list[str]:
    """Write the case's files into ``workdir`` (input, instruction, the plan for an agent that reads
    one, an empty ``tmp``): the agent's command line."""
    input_path, instruction_path = workdir / "input.docx", workdir / "instruction.txt"
    input_path.write_bytes(input_docx)
    instruction_path.write_text(instruction, encoding="utf-8")
    (workdir / "tmp").mkdir()
    plan_path = None
    if agent.needs_plan:
        plan_path = workdir / "plan.json"
        plan_path.write_text(json.dumps(plan, sort_keys=True), encoding="utf-8")
    return agent.command(input_path, instruction_path, workdir / "output.docx", plan_path)


def run_agent(agent: Agent, input_docx: bytes, instruction: str, workdir: Path, *, plan: dict | None = None,
              timeout_s: float = DEFAULT_TIMEOUT_S, memory_mb: int = DEFAULT_MEMORY_MB,
              live: _Live | None = None, containment: str = "auto", worker: "AgentWorker | None" = None) -> dict:
    """Run ``agent`` on one case in ``workdir`` (an empty folder of the case's own). Returns the
    agent's record: ``status`` (ok, exit, signal, timeout, memory), ``reason`` when not ok,
    ``exit_code``, ``signal``, ``seconds``, ``cpu_s`` (of the agent's whole process tree),
    ``max_rss_mb``, ``containment`` (pid-namespace, subreaper or process-group), ``left_running``
    (command lines of the processes the agent left running, all ended), ``stdout_tail``,
    ``stderr_tail``, ``output`` (the output's path when the agent wrote one) and ``process``: "case"
    (a process of its own, under its supervisor) or "worker" (a shipped agent's long-lived
    :class:`AgentWorker`, when ``worker`` is given: ``command`` is still the command line the case
    would have run as a process of its own). ``containment`` "subreaper" skips the PID namespace even
    where one is available."""
    argv = _prepare_case(agent, input_docx, instruction, workdir, plan)
    if worker is not None:
        ended, seconds = worker.run(argv, workdir, timeout_s)
        return {**_agent_record(ended, seconds, workdir, argv, timeout_s, memory_mb), "process": "worker"}
    return {**_run_process(argv, workdir, timeout_s, memory_mb, live, containment), "process": "case"}


def _run_process(argv: list[str], workdir: Path, timeout_s: float, memory_mb: int, live: _Live | None,
                 containment: str) -> dict:
    """The agent's command line run once, as a process of its own below a supervisor of its own."""
    import subprocess

    tmp = workdir / "tmp"
    env = {**os.environ, "TMPDIR": str(tmp), "HOME": str(tmp)}
    out_log, err_log = workdir / "stdout.log", workdir / "stderr.log"
    t0 = time.perf_counter()
    events: dict[str, dict] = {}
    report_r, report_w = os.pipe()
    with open(out_log, "wb") as out, open(err_log, "wb") as err, os.fdopen(report_r, "rb") as report:
        try:
            # no Python code runs in a forked child of this threaded process (subprocess's
            # preexec_fn is unsafe with threads): the supervisor forks and sets the limits
            proc = subprocess.Popen([sys.executable, "-I", "-S", str(SUPERVISOR), str(report_w), str(memory_mb),
                                     str(timeout_s), containment, "--", *argv], cwd=workdir, env=env,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True,
                                    pass_fds=(report_w,))
        except OSError as exc:
            os.close(report_w)
            return {"status": "exit", "reason": f"could not start the agent: {exc}", "exit_code": None,
                    "signal": None, "seconds": 0.0, "cpu_s": None, "max_rss_mb": None, "containment": None,
                    "left_running": [], "stdout_tail": "", "stderr_tail": "", "output": None, "command": argv}
        os.close(report_w)
        if live is not None:
            live.add(proc.pid)
        # the supervisor ends the tree at the time limit itself; this only stops a supervisor that does not
        timer = threading.Timer(timeout_s + SUPERVISOR_GRACE_S, _kill_group, (proc.pid,))
        timer.start()
        try:
            events = _read_events(report)
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
            _kill_group(proc.pid)          # what is left in the supervisor's group, should it have died
            started = events.get("started", {}).get("pid")
            if started is not None and "ended" not in events:
                _signal(started, signal.SIGKILL)   # the agent (or its namespace's init) outlived the supervisor
            if live is not None:
                live.discard(proc.pid)
        proc.returncode = os.waitstatus_to_exitcode(status)   # reaped here, not by Popen
    ended = events.get("ended")
    if ended is None:                      # the supervisor itself failed: its own status stands in
        ended = {"status": status, "timed_out": False, "cpu_s": None, "max_rss_kb": usage.ru_maxrss,
                 "left_running": [], "containment": events.get("started", {}).get("containment")}
    return _agent_record(ended, time.perf_counter() - t0, workdir, argv, timeout_s, memory_mb)


def _agent_record(ended: dict, seconds: float, workdir: Path, argv: list[str], timeout_s: float,
                  memory_mb: int) -> dict:
    """A case's agent record from how its agent ended (the supervisor's ``ended`` report, or a worker's
    answer in the same terms): ``status`` and ``reason`` decided the same way for both."""
    stdout_tail, stderr_tail = _tail(workdir / "stdout.log"), _tail(workdir / "stderr.log")
    output_path = workdir / "output.docx"
    timed_out = bool(ended.get("timed_out"))
    code = os.waitstatus_to_exitcode(ended["status"]) if ended.get("status") is not None else -signal.SIGKILL
    record = {"exit_code": code if code >= 0 else None, "signal": signal.Signals(-code).name if code < 0 else None,
              "seconds": round(seconds, 3), "cpu_s": ended.get("cpu_s"),
              "max_rss_mb": round(ended["max_rss_kb"] / 1024, 1) if ended.get("max_rss_kb") is not None else None,
              "containment": ended.get("containment"), "left_running": ended.get("left_running", []),
              "stdout_tail": stdout_tail, "stderr_tail": stderr_tail, "command": argv}
    out_of_memory = any(w in stderr_tail for w in MEMORY_WORDS)
    if timed_out:
        record.update(status="timeout", reason=f"timed out after {timeout_s:g} s (killed)")
    elif code != 0 and out_of_memory:
        record.update(status="memory", reason=f"exceeded the memory limit ({memory_mb} MiB): {_last_line(stderr_tail)}")
    elif code < 0:
        record.update(status="signal", reason=f"killed by {record['signal']}")
    elif code != 0:
        record.update(status="exit", reason=f"exited with status {code}: {_last_line(stderr_tail) or 'no message'}")
    else:
        record.update(status="ok", reason=None)
    record["output"] = str(output_path) if output_path.is_file() or output_path.exists() else None
    return record


class AgentWorker:
    """A shipped agent's long-lived worker (``agent_worker.py``): one process runs the agent on case
    after case, so Python's start-up and the agent's imports are paid once, not per case. It runs
    below a supervisor of its own, as an agent run per case does (the same address-space limit, the
    same containment; the supervisor has no time limit: each case is timed here), and after each case
    it names and ends what the case left running. A case that crashes the worker, or does not answer
    within ``timeout_s``, ends it (the supervisor ends its whole tree) and is recorded as an agent run
    per case would be (signal, exit or timeout); so is a case whose agent exits non-zero, so that no
    case ever starts in a worker a failed case ran in. The next case starts a new worker.

    Its environment is a case's (``TMPDIR`` and ``HOME`` in a folder of its own, removed with the
    worker; the case's folder is its working directory during the case). One per harness thread."""

    def __init__(self, agent: Agent, memory_mb: int = DEFAULT_MEMORY_MB, live: _Live | None = None,
                 containment: str = "auto"):
        if not agent.shipped:
            raise BenchwrightError(f"{agent.spec!r}: only a shipped agent runs in a worker")
        self.agent, self.memory_mb, self.live, self.containment = agent, memory_mb, live, containment
        self.proc = None
        self.started = 0                   # workers started, the first included

    def _start(self) -> None:
        import subprocess

        self.tmp = Path(tempfile.mkdtemp(prefix="wordeval-worker-"))
        jobs_r, jobs_w = os.pipe()
        replies_r, replies_w = os.pipe()
        report_r, report_w = os.pipe()
        module = self.agent.argv[2]          # a shipped agent runs as python -m MODULE
        argv = [sys.executable, "-m", "benchwright.wordeval.agent_worker", module, str(jobs_r), str(replies_w)]
        try:
            with open(self.tmp / "worker.log", "wb") as log:
                self.proc = subprocess.Popen(
                    [sys.executable, "-I", "-S", str(SUPERVISOR), str(report_w), str(self.memory_mb), "0",
                     self.containment, "--", *argv], cwd=self.tmp,
                    env={**os.environ, "TMPDIR": str(self.tmp), "HOME": str(self.tmp)}, stdin=subprocess.DEVNULL,
                    stdout=log, stderr=log, start_new_session=True, pass_fds=(report_w, jobs_r, replies_w))
        finally:
            for fd in (jobs_r, replies_w, report_w):
                os.close(fd)
        self.jobs = os.fdopen(jobs_w, "wb", buffering=0)
        self.replies = os.fdopen(replies_r, "rb")
        self.report = os.fdopen(report_r, "rb")
        self.started += 1
        if self.live is not None:
            self.live.add(self.proc.pid)
        self.events = _read_events([self.report.readline()])   # written as soon as the worker is forked

    def run(self, argv: list[str], workdir: Path, timeout_s: float) -> tuple[dict, float]:
        """One case (its command line as a process would run it: the worker takes what follows
        ``python -m AGENT``): how it ended, in the supervisor's terms, and its wall seconds."""
        import select

        if self.proc is None:
            self._start()
        t0 = time.perf_counter()
        mode = self.events.get("started", {}).get("containment")
        line = b""
        try:
            self.jobs.write((json.dumps({"argv": argv[3:], "workdir": str(workdir)}) + "\n").encode())
            if select.select([self.replies], [], [], timeout_s)[0]:
                line = self.replies.readline()
            else:                          # no answer in time: the supervisor ends the worker's tree
                ended = self._end(signal.SIGTERM)
                return {**ended, "timed_out": True, "containment": mode}, time.perf_counter() - t0
        except (BrokenPipeError, OSError):
            pass
        if not line:                       # the worker died: the supervisor says how
            return {**self._end(), "containment": mode}, time.perf_counter() - t0
        reply = json.loads(line)
        ended = {"status": (reply["exit_code"] & 0xFF) << 8, "timed_out": False, "cpu_s": reply["cpu_s"],
                 "max_rss_kb": reply["max_rss_kb"], "left_running": reply["left_running"], "containment": mode}
        seconds = time.perf_counter() - t0
        if reply["exit_code"] != 0:
            self.close()
        return ended, seconds

    def _end(self, sig: int | None = None) -> dict:
        """End the worker (``sig`` to its supervisor, which ends the tree; else it has ended or is
        ending): the supervisor's ``ended`` report."""
        proc = self.proc
        if sig is not None:
            _signal(proc.pid, sig)
        timer = threading.Timer(SUPERVISOR_GRACE_S, _kill_group, (proc.pid,))
        timer.start()
        status, usage = None, None
        try:
            self.events.update(_read_events(self.report))
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
            _kill_group(proc.pid)
            started = self.events.get("started", {}).get("pid")
            if started is not None and "ended" not in self.events:
                _signal(started, signal.SIGKILL)
            if self.live is not None:
                self.live.discard(proc.pid)
            proc.returncode = os.waitstatus_to_exitcode(status) if status is not None else None
            for f in (self.jobs, self.replies, self.report):
                f.close()
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.proc = None
        return self.events.get("ended") or {"status": status, "timed_out": False, "cpu_s": None,
                                            "max_rss_kb": usage.ru_maxrss if usage else None, "left_running": []}

    def close(self) -> None:
        """No more cases: the worker ends when its jobs end."""
        if self.proc is not None:
            try:
                self.jobs.close()
            except OSError:
                pass
            self._end()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``path`` so that it is either absent or complete (an interrupted run never leaves half)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def scored_records(run_dir: Path) -> dict[str, dict]:
    """The per-case records a run has written so far, by case id."""
    out = {}
    for p in sorted((Path(run_dir) / CASES_DIR).glob("*.json")):
        try:
            record = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue                       # not a complete record: the case runs again
        if isinstance(record, dict) and record.get("case_id") == p.stem and "passed" in record:
            out[p.stem] = record
    return out


def open_run(run_dir: Path, meta: dict) -> None:
    """Create ``run_dir`` or resume it; a folder holding another agent's run is refused."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / CASES_DIR).mkdir(exist_ok=True)
    (run_dir / OUTPUTS_DIR).mkdir(exist_ok=True)
    path = run_dir / RUN_FILE
    if path.exists():
        before = json.loads(path.read_text(encoding="utf-8"))
        differs = {k: (before.get(k), v) for k, v in meta.items() if k in ("agent", "cases") and before.get(k) != v}
        if differs:
            raise BenchwrightError(f"{run_dir} holds a run with other settings ({differs}); use another --out")
    _write_atomically(path, (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode())


def run_cases(cases: list[dict], read_input: Callable[[dict], bytes], agent: Agent, run_dir: str | Path,
              score: Callable[[dict, Path], dict], *, plan: Callable[[dict], dict] | None = None,
              workers: int = 2, timeout_s: float = DEFAULT_TIMEOUT_S, memory_mb: int = DEFAULT_MEMORY_MB,
              progress: bool = True, process_per_case: bool = False) -> dict:
    """Run ``agent`` over ``cases`` (each a dict with at least ``case_id`` and ``instruction``) and
    record each scored case in ``run_dir/cases/<case_id>.json``; cases already recorded are skipped.
    ``score(case, output_path)`` (the path may not exist) returns the evaluator's report. Returns ``{"ran", "skipped"}``.
    A case whose agent timed out, ran out of memory, was killed or exited non-zero is a failed case
    with that reason (its output, if any, is not scored). A shipped agent runs in one long-lived
    :class:`AgentWorker` per parallel case (``process_per_case``: in a process per case, as a command
    agent always does; the same outputs and reports). ``progress``: cases scored out of all, with the
    rate and the time left, on stderr (``benchwright.progress``: a bar on a terminal, else a line every
    few seconds)."""
    from benchwright.progress import Progress

    run_dir = Path(run_dir)
    done = scored_records(run_dir)
    todo = [c for c in cases if c["case_id"] not in done]
    _refuse_unpublishable_ids(todo)
    live = _Live()
    local = threading.local()
    agent_workers: list[AgentWorker] = []

    def worker() -> AgentWorker | None:
        if process_per_case or not agent.shipped:
            return None
        if not hasattr(local, "worker"):
            local.worker = AgentWorker(agent, memory_mb, live)
            agent_workers.append(local.worker)
        return local.worker

    def one(case: dict) -> dict:
        with tempfile.TemporaryDirectory(prefix="wordeval-agent-") as tmp:
            work = Path(tmp)
            ran = run_agent(agent, read_input(case), case["instruction"], work,
                            plan=plan(case) if (plan is not None and agent.needs_plan) else None,
                            timeout_s=timeout_s, memory_mb=memory_mb, live=live, worker=worker())
            ran.pop("output")
            if live.stopping:              # killed by the interruption, not by its own doing
                raise InterruptedError(case["case_id"])
            kept = work / "output.docx"    # missing or not a file: the evaluator says which
            if kept.is_file():
                kept = Path(shutil.copyfile(kept, run_dir / OUTPUTS_DIR / f"{case['case_id']}.docx"))
                ran["output_bytes"] = kept.stat().st_size
                ran["output_sha256"] = hashlib.sha256(kept.read_bytes()).hexdigest()
            t = time.perf_counter()
            if ran["status"] == "ok":
                report = score(case, kept)
            else:
                report = {"case_id": case["case_id"], "passed": False, "rejected": f"agent {ran['reason']}",
                          "checks": [{"name": "agent", "passed": False, "reason": ran["reason"]}]}
            ran["evaluation_ms"] = round((time.perf_counter() - t) * 1000, 2)
        record = {"case_id": case["case_id"], "passed": bool(report.get("passed")),
                  "reason": None if report.get("passed") else (report.get("rejected") or _failed_checks(report)),
                  "agent": ran, "report": report}
        _write_atomically(run_dir / CASES_DIR / f"{case['case_id']}.json",
                          (json.dumps(record, indent=1, sort_keys=True, default=str) + "\n").encode())
        return record

    display = Progress("auto" if progress else "off", prefix="[wordeval]")
    with display.phase("run") as phase:
        scored = phase.task(agent.spec if len(agent.spec) <= 30 else agent.spec[:29] + "…", len(cases),
                            "cases scored", started=False)
        scored.update(len(cases) - len(todo))  # a resumed run: its rate counts from the cases it runs
        _run_all(one, todo, workers, scored, live, agent_workers)
    return {"ran": len(todo), "skipped": len(cases) - len(todo)}


def _refuse_unpublishable_ids(cases: list[dict]) -> None:
    """The run's files are named after case ids: one the build would not publish is refused."""
    from benchwright.fields import clip
    from benchwright.wordeval.cases import CASE_FILE_ROOM, CASE_FOLDERS

    for c in cases:
        problem = CASE_FOLDERS.lexical_problem(c["case_id"], single=True, room=CASE_FILE_ROOM)
        if problem:
            raise BenchwrightError(f"case id {clip(c['case_id'])} {problem}")


def _run_all(one: Callable[[dict], dict], cases: list[dict], workers: int, scored, live: _Live,
             agent_workers: list[AgentWorker]) -> None:
    """``one(case)`` for every case on ``workers`` threads, advancing ``scored`` as each finishes; an
    interruption cancels what has not started and kills every agent still running (``live``), and the
    agents' workers are closed either way."""
    pool = ThreadPoolExecutor(max(1, workers))
    pending = set()
    try:
        queue = iter(cases)
        for case in queue:                 # at most 2 x workers in flight: an interrupt leaves little
            pending.add(pool.submit(one, case))
            if len(pending) >= 2 * max(1, workers):
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    f.result()
                    scored.advance()
        for f in pending:
            f.result()
            scored.advance()
    except BaseException:
        for f in pending:
            f.cancel()
        live.kill_all()                     # an interrupted run leaves no agent running
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        for w in agent_workers:
            w.close()


def _failed_checks(report: dict) -> str:
    names = [c["name"] for c in report.get("checks", []) if not c.get("passed")]
    return "failed " + ", ".join(names) if names else "failed"
