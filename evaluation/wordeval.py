"""WordEval evaluator: compare an agent's output .docx with the case's reference .docx.

``evaluate_case(case_dir_or_case, output_docx) -> report`` (a dict with top-level boolean
``passed`` and per-check results).  A case passes when

1. the output is a readable, safe .docx (bounded zip, no DOCTYPE, no macros / OLE / ActiveX),
2. every *target* (the unit's object-properties, located by stable anchors in the reference)
   equals the reference within tolerance, and
3. *preservation*: everything else in the canonical snapshot equals the reference, after removing
   the unit's allowed side effects and volatile parts (rsids, paraIds, drawing ids, proofErr,
   lastRenderedPageBreak, dates, app.xml, generated bookmark names, field results, authors).

The snapshot and the comparison are WordEval domain code (``benchwright.wordeval.snapshot``,
``benchwright.wordeval.oracle``); this module loads cases, isolates untrusted outputs, batches
and summarises.  Snapshots are aligned by content (equal items anchored, edited ones paired by similarity), never
by position, so an inserted or deleted paragraph shows up as exactly that instead of shifting
every later comparison.

Untrusted outputs are evaluated in a worker subprocess with an address-space limit
(``resource.setrlimit(RLIMIT_AS)``) and a CPU-time limit per case (30 s by default): the verdict
depends on the work an output takes, not on how loaded the machine is. A generous wall-clock
backstop (ten times the CPU limit, at least 300 s) only stops a worker that makes no progress; each
report records the CPU and wall time it took (``evaluation``). The batch mode keeps workers alive
across cases.  No output crashes the evaluator: a missing, empty, non-zip, hostile
(zip bomb, entity expansion, path traversal, macros) or non-Word file, or one the comparison cannot
handle, is a failed case whose ``rejected`` names the reason.  ``run_cli(args)`` implements
``benchwright evaluate wordeval --case CASE_DIR_OR_ID --output OUTPUT.docx`` and ``--outputs DIR``.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchwright import strict_json
from benchwright.arguments import ArgumentParser, parser_of
from benchwright.errors import BenchwrightError
from benchwright.formats.ooxml.safety import UnsafeDocxError, blocking_flags
from benchwright.memo import Memo
from benchwright.wordeval.oracle import VOLATILE, compare, reference_snapshot, resolve_anchor
from benchwright.wordeval.snapshot import extract_snapshot

if TYPE_CHECKING:
    from benchwright.summary import Table

DEFAULT_CASES_ROOT = Path("exports") / "cases"
DEFAULT_MEMORY_MB = 1024
DEFAULT_CPU_LIMIT_S = 30.0        # CPU seconds one evaluation may use: what decides "too slow"
MIN_WALL_LIMIT_S = 300.0          # the wall-clock backstop is max(this, 10 x the CPU limit)
NATIVE_GRACE_S = 5                # RLIMIT_CPU kills a worker this long past its budget (stuck in C code)


def wall_backstop(cpu_limit_s: float, wall_limit_s: float | None = None) -> float:
    """The wall-clock backstop for a CPU limit: generous, so that only a worker that makes no
    progress (blocked, or starved for minutes) reaches it."""
    return float(wall_limit_s) if wall_limit_s is not None else max(MIN_WALL_LIMIT_S, 10.0 * cpu_limit_s)


# --------------------------------------------------------------------------- in-process evaluation


def _oracle_dict(oracle) -> dict:
    return strict_json.loads(oracle) if isinstance(oracle, (str, bytes)) else dict(oracle)


class OutputSnapshots:
    """Snapshots of outputs by content, the last ``size``, for a caller scoring outputs it made itself that
    repeat (the card's null agent outputs each case's input, and cases share inputs; LibreOffice's re-save one
    output per distinct input). Only successful extractions are kept: a failing output fails again."""

    def __init__(self, size: int = 64):
        self._memo = Memo(size)

    def __call__(self, output_docx: bytes):
        return self._memo.get(hashlib.sha256(output_docx).digest(),
                              lambda: extract_snapshot(output_docx, "output.docx"))


def evaluate_docx(reference_docx: bytes, output_docx: bytes, oracle: dict | str, case_id: str | None = None,
                  extra_allowed: tuple = (), snapshots: OutputSnapshots | None = None) -> dict:
    """Evaluate in this process (trusted inputs / inside the worker).

    ``extra_allowed``: additional key patterns ignored by the preservation check (used by the
    LibreOffice round-trip self-test for properties LibreOffice rewrites). ``snapshots``: the output's
    snapshot from this memo, or the reference's when the output is the reference's bytes (None: extracted here;
    the isolated worker keeps no untrusted output's)."""
    t0 = time.perf_counter()
    oracle = _oracle_dict(oracle)
    report: dict[str, Any] = {
        "case_id": case_id, "passed": False, "rejected": None,
        "subsystem": oracle.get("subsystem"), "command": oracle.get("command"),
        "object_properties": oracle.get("properties", []), "checks": [],
    }

    def rejected(reason: str) -> dict:
        report["rejected"] = reason
        report["checks"] = [{"name": "readable", "passed": False, "reason": reason}]
        report["elapsed_ms"] = round((time.perf_counter() - t0) * 1000, 2)
        return report

    if not output_docx:
        return rejected("empty: the output file is 0 bytes")
    try:
        if snapshots is None:
            out = extract_snapshot(output_docx, "output.docx")
        elif output_docx == reference_docx:  # the reference's bytes (replay's): its snapshot, extracted once
            out = reference_snapshot(reference_docx)[0]
        else:
            out = snapshots(output_docx)
    except UnsafeDocxError as exc:
        return rejected(exc.reason)
    except (TimeoutError, MemoryError):
        raise   # the worker's limits, not a property of the file: reported as such by the worker
    except Exception as exc:  # noqa: BLE001 - any parse failure means the output is unusable
        return rejected(f"unreadable: {type(exc).__name__}: {exc}")
    blocking = blocking_flags(out.flags)
    if blocking:
        return rejected("active content: " + "; ".join(blocking))
    ref, rf = reference_snapshot(reference_docx)
    try:
        result = compare(ref, out, oracle, rf, extra_allowed=tuple(extra_allowed))
    except (TimeoutError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - an output the comparison cannot handle fails, named; never a crash
        return rejected(f"not comparable: {type(exc).__name__}: {exc}")
    report["checks"] = [{"name": "readable", "passed": True, "flags": out.flags}] + result["checks"]
    report["passed"] = result["passed"]
    report["elapsed_ms"] = round((time.perf_counter() - t0) * 1000, 2)
    return report


# --------------------------------------------------------------------------- cases


def load_case(case_dir_or_case, cases_root: str | Path | None = None) -> dict:
    """A case dict (with ``reference_docx`` bytes and ``oracle``) from a dict, a case directory
    or a case id under ``cases_root`` (default ``exports/cases``). A case folder is read by
    ``read_case_dir``: a bad ``case.json`` (not UTF-8, not JSON, a repeated key, no oracle) or a .docx
    that is not the one it records raises ``RecordError`` naming the file."""
    # here, not at the top: the isolated worker never reads a case folder, and cases' imports cost it 0.4 s
    from benchwright.wordeval.cases import read_case_dir

    if isinstance(case_dir_or_case, dict):
        return case_dir_or_case
    p = Path(case_dir_or_case)
    if p.is_dir():
        return read_case_dir(p)
    root = Path(cases_root) if cases_root else DEFAULT_CASES_ROOT
    if (root / str(case_dir_or_case)).is_dir():
        return read_case_dir(root / str(case_dir_or_case))
    raise FileNotFoundError(f"no case directory {case_dir_or_case!r} (looked under {root})")


def _read_output(output_docx) -> bytes:
    if isinstance(output_docx, (bytes, bytearray)):
        return bytes(output_docx)
    return Path(output_docx).read_bytes()


def missing_output(output) -> str | None:
    """Why there is no output file to evaluate (``missing: ...``), or None when there is one."""
    if isinstance(output, (bytes, bytearray)):
        return None
    p = Path(output)
    if not p.exists():
        return f"missing: no output file {p.name}"
    if not p.is_file():
        return f"missing: {p.name} is not a regular file"
    return None


def rejection(case_id: str | None, reason: str, oracle: dict | None = None) -> dict:
    """The report of an output that could not be evaluated at all: a failed case with its reason."""
    oracle = oracle or {}
    return {"case_id": case_id, "passed": False, "rejected": reason, "subsystem": oracle.get("subsystem"),
            "command": oracle.get("command"), "object_properties": oracle.get("properties", []),
            "checks": [{"name": "readable", "passed": False, "reason": reason}]}


# --------------------------------------------------------------------------- isolation


class CpuLimitExceeded(TimeoutError):
    """The evaluation used up its CPU time (ITIMER_PROF)."""


class WallLimitExceeded(TimeoutError):
    """The evaluation reached the wall-clock backstop (ITIMER_REAL)."""


def _set_limits(memory_mb: int) -> None:
    import resource
    mem = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024 * 1024, 64 * 1024 * 1024))
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass


def _cpu_seconds() -> float:
    import resource
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _native_cpu_backstop(cpu_s: float) -> None:
    """RLIMIT_CPU (cumulative per process) moved to ``cpu_s`` + a grace beyond what this process has
    used: SIGXCPU ends a job stuck in C code, where the ITIMER_PROF handler cannot run."""
    import math
    import resource
    soft = math.ceil(_cpu_seconds() + cpu_s) + NATIVE_GRACE_S
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _limited_report(job: dict, reason: str, check: str) -> dict:
    return {"case_id": job.get("case_id"), "passed": False, "rejected": reason,
            "checks": [{"name": "readable", "passed": False, "reason": check}]}


def _worker_main(memory_mb: int, cpu_limit_s: float, wall_limit_s: float) -> int:
    """Loop: one JSON job per stdin line -> one JSON report per stdout line. Each job may use
    ``cpu_limit_s`` of CPU time (ITIMER_PROF; RLIMIT_CPU a little later for native code) and, as a
    backstop, ``wall_limit_s`` of wall-clock time (ITIMER_REAL)."""
    import signal
    _set_limits(memory_mb)

    def on_cpu(signum, frame):
        raise CpuLimitExceeded("evaluation used up its CPU time")

    def on_wall(signum, frame):
        raise WallLimitExceeded("evaluation reached the wall-clock backstop")

    signal.signal(signal.SIGPROF, on_cpu)
    signal.signal(signal.SIGALRM, on_wall)
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        _native_cpu_backstop(cpu_limit_s)
        cpu0, t0 = _cpu_seconds(), time.perf_counter()
        signal.setitimer(signal.ITIMER_PROF, cpu_limit_s)
        signal.setitimer(signal.ITIMER_REAL, wall_limit_s)
        try:
            why = missing_output(job["output"])
            rep = rejection(job.get("case_id"), why) if why else evaluate_docx(
                Path(job["reference"]).read_bytes(), Path(job["output"]).read_bytes(), job["oracle"], job.get("case_id"))
        except CpuLimitExceeded:
            rep = _limited_report(job, f"exceeded the CPU time limit ({cpu_limit_s:g} s of CPU time)", "cpu limit")
        except WallLimitExceeded:
            rep = _limited_report(job, f"reached the wall-clock backstop ({wall_limit_s:g} s) after "
                                       f"{_cpu_seconds() - cpu0:.1f} s of CPU time", "wall-clock backstop")
        except MemoryError:
            rep = _limited_report(job, f"exceeded {memory_mb} MiB", "memory limit")
        except Exception as exc:  # noqa: BLE001 - one job's failure is its report; the worker lives on
            rep = rejection(job.get("case_id"), f"evaluation error: {type(exc).__name__}: {exc}")
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.setitimer(signal.ITIMER_REAL, 0)
        rep["evaluation"] = {"cpu_s": round(_cpu_seconds() - cpu0, 3), "wall_s": round(time.perf_counter() - t0, 3),
                             "cpu_limit_s": cpu_limit_s, "wall_limit_s": wall_limit_s}
        out.write(json.dumps(rep, default=str) + "\n")
        out.flush()
    return 0


class IsolatedEvaluator:
    """A persistent worker subprocess with a memory limit, a CPU-time limit per job and a
    wall-clock backstop (:func:`wall_backstop`).

    A job that kills the worker (memory limit, crash, native code past its CPU time) or gets no
    answer within the backstop yields a rejection report; the worker is restarted for the next job."""

    def __init__(self, memory_mb: int = DEFAULT_MEMORY_MB, cpu_limit_s: float = DEFAULT_CPU_LIMIT_S,
                 wall_limit_s: float | None = None):
        self.memory_mb = memory_mb
        self.cpu_limit_s = float(cpu_limit_s)
        self.wall_limit_s = wall_backstop(self.cpu_limit_s, wall_limit_s)
        self.proc: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def _start(self) -> None:
        cmd = [sys.executable, "-m", "benchwright.evaluation.wordeval", "--worker", "--memory-mb",
               str(self.memory_mb), "--cpu-limit", str(self.cpu_limit_s), "--wall-limit", str(self.wall_limit_s)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, bufsize=1)

    def close(self) -> None:
        if self.proc is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except Exception:  # noqa: BLE001
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def evaluate_paths(self, reference: Path, output: Path, oracle, case_id: str | None = None) -> dict:
        why = missing_output(output)
        if why:
            return rejection(case_id, why, _oracle_dict(oracle))
        with self._lock:
            if self.proc is None or self.proc.poll() is not None:
                self._start()
            job = {"reference": str(reference), "output": str(output), "oracle": _oracle_dict(oracle),
                   "case_id": case_id}
            reply: list[str] = []

            def read():
                try:
                    reply.append(self.proc.stdout.readline())
                except Exception:  # noqa: BLE001
                    reply.append("")

            try:
                self.proc.stdin.write(json.dumps(job) + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                reply.append("")
            reader = threading.Thread(target=read, daemon=True)
            t0 = time.perf_counter()
            if not reply:
                reader.start()
                reader.join(self.wall_limit_s + 30)    # the worker's own backstop answers first
            line = reply[0] if reply else None
            if not line:
                # no answer (the backstop failed too) or the worker died: kill it, reject, say which
                died = self.proc.poll() is not None
                self.proc.kill()
                self.proc.wait()
                code, self.proc = self.proc.returncode, None
                if code == -signal.SIGXCPU:
                    reason, check = (f"exceeded the CPU time limit ({self.cpu_limit_s:g} s of CPU time, "
                                     "stopped in native code)"), "cpu limit"
                elif died:
                    reason, check = "evaluation worker died (memory limit or crash)", "worker died"
                else:
                    reason, check = f"reached the wall-clock backstop ({self.wall_limit_s:g} s)", "wall-clock backstop"
                rep = {"case_id": case_id, "passed": False, "rejected": reason,
                       "checks": [{"name": "readable", "passed": False, "reason": check}]}
                rep["evaluation"] = {"cpu_s": None, "wall_s": round(time.perf_counter() - t0, 3),
                                     "cpu_limit_s": self.cpu_limit_s, "wall_limit_s": self.wall_limit_s}
                return rep
            return json.loads(line)

    def evaluate(self, case: dict, output_docx) -> dict:
        oracle = _oracle_dict(case["oracle"])
        with tempfile.TemporaryDirectory(prefix="wordeval-") as tmp:
            ref = Path(tmp) / "reference.docx"
            ref.write_bytes(case["reference_docx"])
            if isinstance(output_docx, (bytes, bytearray)):
                outp = Path(tmp) / "output.docx"
                outp.write_bytes(output_docx)
            else:
                outp = Path(output_docx)
            rep = self.evaluate_paths(ref, outp, oracle, case.get("case_id"))
        rep.setdefault("subsystem", oracle.get("subsystem"))
        rep.setdefault("command", oracle.get("command"))
        rep.setdefault("object_properties", oracle.get("properties", []))
        return rep


def evaluate_case(case_dir_or_case, output_docx, *, isolate: bool = True, cases_root: str | Path | None = None,
                  memory_mb: int = DEFAULT_MEMORY_MB, cpu_limit_s: float = DEFAULT_CPU_LIMIT_S,
                  wall_limit_s: float | None = None, evaluator: IsolatedEvaluator | None = None) -> dict:
    """Evaluate one output against a case (dir, id or dict). Returns the report dict.

    With ``isolate`` (default) the output is parsed in a resource-limited subprocess."""
    case = load_case(case_dir_or_case, cases_root)
    why = missing_output(output_docx)
    if why:
        return rejection(case.get("case_id"), why, _oracle_dict(case["oracle"]))
    if not isolate:
        rep = evaluate_docx(case["reference_docx"], _read_output(output_docx), case["oracle"], case.get("case_id"))
        return rep
    if evaluator is not None:
        return evaluator.evaluate(case, output_docx)
    with IsolatedEvaluator(memory_mb, cpu_limit_s, wall_limit_s) as ev:
        return ev.evaluate(case, output_docx)


# --------------------------------------------------------------------------- batch


def _rate(p: int, n: int) -> dict:
    return {"passed": p, "total": n, "rate": round(p / n, 4) if n else None}


def summarize(reports: list[dict]) -> dict:
    """Aggregate reports per check, per case, per subsystem and per object-property pair."""
    per_check = defaultdict(lambda: [0, 0])
    per_sub = defaultdict(lambda: [0, 0])
    per_pair = defaultdict(lambda: [0, 0])
    cases = {}
    for r in reports:
        ok = bool(r.get("passed"))
        cases[r.get("case_id")] = {"passed": ok, "rejected": r.get("rejected"),
                                   "failed_checks": [c["name"] for c in r.get("checks", []) if not c.get("passed")]}
        for c in r.get("checks", []):
            name = c["name"].split(":", 1)[0]
            per_check[name][1] += 1
            per_check[name][0] += bool(c.get("passed"))
        for sub in (r.get("subsystem") or "unknown").split("+"):
            per_sub[sub][1] += 1
            per_sub[sub][0] += ok
        for pair in r.get("object_properties") or ["unknown"]:
            per_pair[pair][1] += 1
            per_pair[pair][0] += ok
    n = len(reports)
    return {
        "n_cases": n,
        "passed": sum(1 for r in reports if r.get("passed")),
        "pass_rate": round(sum(1 for r in reports if r.get("passed")) / n, 4) if n else None,
        "per_check": {k: _rate(*v) for k, v in sorted(per_check.items())},
        "per_subsystem": {k: _rate(*v) for k, v in sorted(per_sub.items())},
        "per_object_property": {k: _rate(*v) for k, v in sorted(per_pair.items())},
        "per_case": cases,
    }


def _find_outputs(outputs_dir: Path) -> dict[str, Path]:
    found = {}
    for p in sorted(outputs_dir.iterdir()):
        if p.is_file() and p.suffix.lower() == ".docx":
            found[p.stem] = p
        elif p.is_dir():
            for name in ("output.docx", "result.docx"):
                if (p / name).is_file():
                    found[p.name] = p / name
                    break
    return found


def evaluate_outputs(outputs_dir: str | Path, cases_root: str | Path | None = None, *, isolate: bool = True,
                     workers: int = 1, memory_mb: int = DEFAULT_MEMORY_MB, cpu_limit_s: float = DEFAULT_CPU_LIMIT_S,
                     wall_limit_s: float | None = None) -> dict:
    """Batch mode: ``outputs_dir/<case_id>.docx`` (or ``<case_id>/output.docx``) against
    ``cases_root/<case_id>/``.  Returns ``{"summary": ..., "reports": [...]}``."""
    outputs = _find_outputs(Path(outputs_dir))
    root = Path(cases_root) if cases_root else DEFAULT_CASES_ROOT
    reports: list[dict] = []
    jobs = list(outputs.items())
    evaluators = [IsolatedEvaluator(memory_mb, cpu_limit_s, wall_limit_s)
                  for _ in range(max(1, workers))] if isolate else []

    def run(idx_job):
        idx, (case_id, path) = idx_job
        try:
            case = load_case(root / case_id)
        except (FileNotFoundError, BenchwrightError) as exc:  # no case folder, or its case.json / .docx is bad
            return {"case_id": case_id, "passed": False, "rejected": None, "error": str(exc), "checks": []}
        if isolate:
            return evaluators[idx % len(evaluators)].evaluate(case, path)
        return evaluate_docx(case["reference_docx"], path.read_bytes(), case["oracle"], case_id)

    from benchwright.progress import current   # not at the top: the isolated worker shows no progress

    try:
        with current().phase("evaluating") as phase:
            scored = phase.task("scored", len(jobs), "cases")
            if isolate and len(evaluators) > 1:
                from concurrent.futures import ThreadPoolExecutor
                with ThreadPoolExecutor(len(evaluators)) as pool:
                    reports = list(scored.iterate(pool.map(run, enumerate(jobs))))
            else:
                reports = list(scored.iterate(run(j) for j in enumerate(jobs)))
    finally:
        for ev in evaluators:
            ev.close()
    return {"summary": summarize(reports), "reports": reports}


SHOWN_FAILURES = 10  # failed case ids listed under the summary


def summary_tables(summary: dict, title: str = "WordEval") -> list[Table]:
    """One screen of a batch's ``summarize``: pass rates overall and per subsystem, and per check."""
    from benchwright.summary import Table, percent

    def row(name, r):
        return [name, r["passed"], r["total"], percent(r["rate"])]

    overall = {"passed": summary["passed"], "total": summary["n_cases"], "rate": summary["pass_rate"]}
    return [Table(f"{title}: {summary['passed']:,} of {summary['n_cases']:,} cases passed", ["subsystem", "passed",
                  "cases", "pass rate"], [row(k, r) for k, r in summary["per_subsystem"].items()] + [row("all", overall)]),
            Table("Checks (a case passes when all of its checks pass)", ["check", "passed", "checks", "pass rate"],
                  [row(k, r) for k, r in summary["per_check"].items()])]


def summary_notes(summary: dict, report: str | Path | None) -> list[str]:
    failed = sorted(cid for cid, c in summary["per_case"].items() if not c["passed"])
    notes = []
    if failed:
        more = f" and {len(failed) - SHOWN_FAILURES:,} more" if len(failed) > SHOWN_FAILURES else ""
        notes.append(f"failed: {', '.join(failed[:SHOWN_FAILURES])}{more}")
    notes.append(f"every case's report (checks, differences, per object-property pair): {report}" if report else
                 "every case's report (checks, differences, per object-property pair): add --out REPORT.json")
    return notes


# --------------------------------------------------------------------------- CLI


def cli_parser() -> ArgumentParser:
    ap = ArgumentParser(prog="benchwright evaluate wordeval", description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", help="case directory or case id (under --cases-root)")
    ap.add_argument("--output", help="the agent's output .docx")
    ap.add_argument("--outputs", help="batch: folder of <case_id>.docx outputs")
    ap.add_argument("--cases-root", default=str(DEFAULT_CASES_ROOT))
    ap.add_argument("--out", "--report", dest="report", metavar="REPORT.json",
                    help="batch: write the full JSON report here (every case's checks; a summary table is printed)")
    ap.add_argument("--no-progress", action="store_true", help="batch: no progress on stderr")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB)
    ap.add_argument("--cpu-limit", type=float, default=DEFAULT_CPU_LIMIT_S,
                    help="CPU seconds one evaluation may use (default %(default)s)")
    ap.add_argument("--wall-limit", type=float, default=None,
                    help=f"wall-clock backstop in seconds (default: 10 x the CPU limit, at least {MIN_WALL_LIMIT_S:g})")
    ap.add_argument("--no-isolate", action="store_true", help="evaluate in-process (trusted outputs only)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return ap


@parser_of(cli_parser)
def run_cli(args: list[str] | None = None) -> int:
    """``benchwright evaluate wordeval ...``: one case's JSON report, or a batch's summary tables (its
    full report to ``--out``).

    Exit 0 whether or not the case passed; non-zero only if the evaluation could not run
    (bad arguments, missing case or output file)."""
    args = list(sys.argv[1:] if args is None else args)
    while args and args[0] in ("evaluate", "wordeval"):
        args.pop(0)
    ap = cli_parser()
    try:
        ns = ap.parse_args(args)
    except SystemExit as exc:
        return int(exc.code or 2) if exc.code else 0
    if ns.worker:
        return _worker_main(ns.memory_mb, ns.cpu_limit, wall_backstop(ns.cpu_limit, ns.wall_limit))
    try:
        if ns.outputs:
            if not Path(ns.outputs).is_dir():
                print(json.dumps({"error": f"no such folder {ns.outputs}"}), file=sys.stderr)
                return 2
            from benchwright.progress import Progress, use

            with use(Progress("off" if ns.no_progress else "auto", prefix="[wordeval]")):
                res = evaluate_outputs(ns.outputs, ns.cases_root, isolate=not ns.no_isolate, workers=ns.workers,
                                       memory_mb=ns.memory_mb, cpu_limit_s=ns.cpu_limit, wall_limit_s=ns.wall_limit)
            from benchwright.summary import show, write_json

            report = write_json(ns.report, res) if ns.report else None
            show(summary_tables(res["summary"]), summary_notes(res["summary"], report))
            return 0
        if not ns.case or not ns.output:
            ap.print_usage(sys.stderr)
            print("error: need --case and --output (or --outputs)", file=sys.stderr)
            return 2
        if not Path(ns.output).is_file():
            print(json.dumps({"error": f"no such output file {ns.output}"}), file=sys.stderr)
            return 2
        rep = evaluate_case(ns.case, ns.output, isolate=not ns.no_isolate, cases_root=ns.cases_root,
                            memory_mb=ns.memory_mb, cpu_limit_s=ns.cpu_limit, wall_limit_s=ns.wall_limit)
        print(json.dumps(rep, indent=2, default=str))
        return 0
    except (FileNotFoundError, BenchwrightError) as exc:
        print(json.dumps({"error": str(exc)}), file=sys.stderr)
        return 2


__all__ = ["evaluate_case", "evaluate_docx", "evaluate_outputs", "compare", "summarize", "run_cli", "load_case",
           "IsolatedEvaluator", "resolve_anchor", "VOLATILE", "missing_output", "rejection"]


if __name__ == "__main__":
    sys.exit(run_cli(sys.argv[1:]))
