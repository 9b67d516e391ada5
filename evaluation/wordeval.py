"""WordEval evaluator: compare an agent's output .docx with the case's reference .docx.

``evaluate_case(case_dir_or_case, output_docx) -> report`` (a dict with top-level boolean
``passed`` and per-check results).  A case passes when

1. the output is a readable, safe .docx (bounded zip, no DOCTYPE, no macros / OLE / ActiveX),
2. every *target* (the unit's object-properties, located by stable anchors in the reference)
   equals the reference within tolerance, and
3. *preservation*: everything else in the canonical snapshot equals the reference, after removing
   the unit's allowed side effects and volatile parts (rsids, paraIds, drawing ids, proofErr,
   lastRenderedPageBreak, dates, app.xml, generated bookmark names, field results, authors).

Snapshots are aligned by content (equal items anchored, edited ones paired by similarity), never
by position, so an inserted or deleted paragraph shows up as exactly that instead of shifting
every later comparison.

Untrusted outputs are evaluated in a worker subprocess with an address-space limit
(``resource.setrlimit(RLIMIT_AS)``), a CPU limit and a wall-clock timeout; the batch mode keeps
workers alive across cases.  ``run_cli(args)`` implements
``benchwright evaluate wordeval --case CASE_DIR_OR_ID --output OUTPUT.docx`` and ``--outputs DIR``.
"""
from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict, defaultdict
from pathlib import Path
from typing import Any

from benchwright.ooxml.safety import UnsafeDocxError, blocking_flags
from benchwright.evaluation.wordeval_snapshot import (
    Snapshot, align_snapshots, extract_snapshot, flatten, snapshot_dict,
)

DEFAULT_CASES_ROOT = Path("exports") / "cases"
DEFAULT_MEMORY_MB = 1024
DEFAULT_TIMEOUT_S = 30.0

# Never compared in the preservation check (a unit may still target them explicitly).
VOLATILE = (
    "props/core.lastModifiedBy", "props/core.revision", "props/core.created", "props/core.modified",
    "props/core.lastPrinted", "comment/*/author", "comment/*/initials", "revisions/*/author",
    "fields/*/result", "styles/*/used", "styles/*/priority", "styles/*/hidden", "styles/*/semiHidden", "styles/*/qFormat",
    "styles/*/custom",
    # formatting inside comment bodies (Word and LibreOffice restyle them freely); the comment's
    # text, anchor and position are still compared
    "comment/*/P*/chars.*", "comment/*/P*/para.*", "comment/*/P*/style",
)
DEFAULT_TOLERANCE = (
    ("*/para.ind.*", 2), ("*/para.spacing.*", 2), ("*/para.tabs", 2), ("sections/*/pg*", 20),
    ("sections/*/cols.space", 2), ("tables/*/grid", 2), ("tables/*/tbl.tblW.w", 2), ("tables/*/tbl.tblInd.w", 2),
    ("tables/*/cell*.tcW.w", 2), ("tables/*/row*.trHeight*", 2), ("tables/*/tbl.tblCellMar.*", 2),
    ("*/draw*.cx", 12700), ("*/draw*.cy", 12700), ("*/draw*.offset", 12700), ("styles/*/pPr.*", 2),
    ("*/chars.spacing", 2),
)


# --------------------------------------------------------------------------- comparison


def _compile(patterns, flags: int = 0) -> re.Pattern | None:
    pats = list(patterns)
    if not pats:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in pats), flags)


_VOLATILE_RE = _compile(VOLATILE)
_DEFAULT_TOL = [(re.compile(fnmatch.translate(p)), float(t)) for p, t in DEFAULT_TOLERANCE]


def _tolerance(key: str, overrides: dict) -> float:
    for pat, tol in overrides.items():
        if fnmatch.fnmatchcase(key, pat) or fnmatch.fnmatchcase(key.rsplit("/", 1)[-1], pat):
            return float(tol)
    for rx, tol in _DEFAULT_TOL:
        if rx.match(key):
            return tol
    return 0.0


def close(a: Any, b: Any, tol: float) -> bool:
    if a == b:
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= tol
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        return all(close(x, y, tol) for x, y in zip(a, b))
    return False


def _style_names(flat: dict) -> set[str]:
    return {k.split("/", 2)[1] for k in flat if k.startswith("styles/")}


def _para_index_to_section(snap: Snapshot, idx: int) -> int:
    acc = 0
    for i, sec in enumerate(snap.sections):
        acc += sec["n_paras"]
        if idx < acc:
            return i
    return len(snap.sections) - 1


def _find_para(paras, prefix: str) -> int | None:
    want = prefix.strip()
    for i, p in enumerate(paras):
        if p.read.strip().startswith(want):
            return i
    return None


def resolve_anchor(snap: Snapshot, anchor: dict | None) -> list[str]:
    """Key prefixes of the object an anchor names, in the (reference) snapshot; [] if not found."""
    if anchor is None:
        return [""]
    a = anchor
    if "document" in a:
        return [a["document"]] if a["document"] in ("settings", "props", "sections", "tables", "fields") else [""]
    body = snap.stories.get("body", [])
    story = a.get("story", "body")
    if story in ("header", "footer"):
        sidx = _para_index_to_section(snap, _find_para(body, a["section"]) or 0) if a.get("section") else \
            len(snap.sections) - 1
        typ = {"primary": "default", "first": "first", "even": "even"}[a.get("hf_type", "primary")]
        sname = f"{story}/S{sidx}/{typ}"
        if "paragraph" in a:
            j = _find_para(snap.stories.get(sname, []), a["paragraph"])
            return [f"{sname}/P{j}"] if j is not None else []
        return [sname]
    if story in ("footnote", "endnote") and "note" in a:
        for n in snap.notes.get(story, []):
            txt = "\n".join(p.read for p in snap.stories[n["story"]]).strip()
            if txt.startswith(a["note"]):
                return [n["story"]]
        return []
    if "comment" in a:
        for c in snap.comments:
            if c["text"].startswith(a["comment"]):
                return [c["story"]]
        return []
    if "paragraphs" in a:
        out = []
        for pfx in a["paragraphs"]:
            i = _find_para(body, pfx)
            if i is None:
                return []
            out.append(f"body/P{i}")
        return out
    if "table" in a:
        spec = a["table"]
        for i, t in enumerate(snap.tables):
            if "caption" in spec and (t.get("caption") or "").startswith(spec["caption"]):
                return [f"tables/T{i}"]
            if "first_cell" in spec and t["text"] and t["text"][0] and t["text"][0][0].startswith(spec["first_cell"]):
                return [f"tables/T{i}"]
        return []
    if "image" in a:
        for i, p in enumerate(body):
            if any(d.get("descr") == a["image"].get("descr") for d in p.drawings):
                return [f"body/P{i}"]
        return []
    if "paragraph" in a:
        i = _find_para(body, a["paragraph"])
        return [f"body/P{i}"] if i is not None else []
    if "section" in a:
        i = _find_para(body, a["section"]) if a["section"] else None
        return [f"sections/S{_para_index_to_section(snap, i) if i is not None else len(snap.sections) - 1}"]
    if "style" in a:
        for name in snap.styles:
            if name.lower() == str(a["style"]).lower():
                return [f"styles/{name}"]
        return []
    if "bookmark" in a:
        return [f"bookmarks/{a['bookmark']}"]
    if "content_control" in a:
        for i, s in enumerate(snap.sdts):
            if s.get("tag") == a["content_control"]:
                return [f"sdts/D{i}"]
        return []
    if "property" in a:
        return ["props"]
    return [""]


def _patterns(prefixes: list[str], keys: list[str]) -> list[str]:
    out = []
    for pfx in prefixes:
        for k in keys:
            out.append(k if not pfx or k.startswith("/") else f"{pfx}/{k}")
    return [p.lstrip("/") for p in out]


def compare(ref: Snapshot, out: Snapshot, oracle: dict, ref_flat: dict | None = None,
            max_differences: int = 25, extra_allowed: tuple = ()) -> dict:
    """Target and preservation checks of ``out`` against ``ref`` under ``oracle``."""
    al = align_snapshots(ref, out)
    rf = ref_flat if ref_flat is not None else snapshot_dict(ref)
    of = flatten(out, al)
    tol_over = oracle.get("tolerance") or {}
    union = set(rf) | set(of)
    checks = []
    extra_re = _compile(extra_allowed, re.IGNORECASE)
    target_keys: set[str] = set()
    all_target_prefixes: list[str] = []
    for t in oracle.get("targets", []):
        prefixes = resolve_anchor(ref, t.get("anchor"))
        all_target_prefixes += [p for p in prefixes if p]
        rx = _compile(_patterns(prefixes, t["keys"]), re.IGNORECASE)
        keys = sorted(k for k in union if rx.match(k) and not (extra_re is not None and extra_re.match(k))) \
            if rx is not None else []
        name = "target:" + ",".join(t["keys"])
        if not prefixes:
            checks.append({"name": name, "passed": False, "anchor": t.get("anchor"),
                           "reason": "target not found in reference"})
            continue
        if not keys:
            # the property is at its default (absent) in both documents
            checks.append({"name": name, "passed": True, "anchor": t.get("anchor"), "keys": 0})
            continue
        diffs = [{"key": k, "expected": rf.get(k), "actual": of.get(k)} for k in keys
                 if not close(rf.get(k), of.get(k), _tolerance(k, tol_over))]
        target_keys.update(keys)
        checks.append({"name": name, "passed": not diffs, "anchor": t.get("anchor"), "keys": len(keys),
                       "differences": diffs[:max_differences]})
    # preservation
    allowed = list(extra_allowed)
    for pat in oracle.get("allowed_side_effects", []):
        if "{target}" in pat:
            allowed += [pat.replace("{target}", p) for p in all_target_prefixes]
        else:
            allowed.append(pat)
    ref_styles, out_styles = _style_names(rf), _style_names(of)
    allowed_re = _compile(allowed, re.IGNORECASE)
    found = []   # (key, difference): sorted once at the end, only the differences
    missing = object()
    for k in union - target_keys:
        a, b = rf.get(k, missing), of.get(k, missing)
        if a == b:
            continue
        a = None if a is missing else a
        b = None if b is missing else b
        if _VOLATILE_RE.match(k) or (allowed_re is not None and allowed_re.match(k)):
            continue
        if k.startswith("styles/"):
            name = k.split("/", 2)[1]
            if name not in ref_styles:
                continue   # extra styles in the output are harmless; their effects show in effective values
            if not (rf.get(f"styles/{name}/used") or rf.get(f"styles/{name}/custom")):
                continue   # definitions of unused built-in styles: only compared when a unit targets them
            if name not in out_styles:
                if rf.get(f"styles/{name}/used") or rf.get(f"styles/{name}/custom"):
                    if k.endswith("/type"):
                        found.append((k, {"key": f"styles/{name}", "expected": "present", "actual": "missing"}))
                continue
        if not close(a, b, _tolerance(k, tol_over)):
            found.append((k, {"key": k, "expected": a, "actual": b}))
    diffs = [d for _, d in sorted(found, key=lambda kd: kd[0])]
    checks.append({"name": "preservation", "passed": not diffs, "n_differences": len(diffs),
                   "differences": diffs[:max_differences]})
    return {"passed": all(c["passed"] for c in checks), "checks": checks}


# --------------------------------------------------------------------------- in-process evaluation

_REF_CACHE: "OrderedDict[str, tuple[Snapshot, dict]]" = OrderedDict()


def _reference(reference_docx: bytes) -> tuple[Snapshot, dict]:
    key = hashlib.sha256(reference_docx).hexdigest()
    if key in _REF_CACHE:
        _REF_CACHE.move_to_end(key)
        return _REF_CACHE[key]
    snap = extract_snapshot(reference_docx, "reference.docx")
    val = (snap, snapshot_dict(snap))
    _REF_CACHE[key] = val
    while len(_REF_CACHE) > 64:
        _REF_CACHE.popitem(last=False)
    return val


def _oracle_dict(oracle) -> dict:
    return json.loads(oracle) if isinstance(oracle, (str, bytes)) else dict(oracle)


def evaluate_docx(reference_docx: bytes, output_docx: bytes, oracle: dict | str, case_id: str | None = None,
                  extra_allowed: tuple = ()) -> dict:
    """Evaluate in this process (trusted inputs / inside the worker).

    ``extra_allowed``: additional key patterns ignored by the preservation check (used by the
    LibreOffice round-trip self-test for properties LibreOffice rewrites)."""
    t0 = time.perf_counter()
    oracle = _oracle_dict(oracle)
    report: dict[str, Any] = {
        "case_id": case_id, "passed": False, "rejected": None,
        "subsystem": oracle.get("subsystem"), "command": oracle.get("command"),
        "object_properties": oracle.get("properties", []), "checks": [],
    }
    try:
        out = extract_snapshot(output_docx, "output.docx")
    except UnsafeDocxError as exc:
        report["rejected"] = exc.reason
        report["checks"] = [{"name": "readable", "passed": False, "reason": exc.reason}]
        report["elapsed_ms"] = round((time.perf_counter() - t0) * 1000, 2)
        return report
    except (TimeoutError, MemoryError):
        raise   # the worker's limits, not a property of the file: reported as such by the worker
    except Exception as exc:  # noqa: BLE001 - any parse failure means the output is unusable
        reason = f"unreadable: {type(exc).__name__}: {exc}"
        report["rejected"] = reason
        report["checks"] = [{"name": "readable", "passed": False, "reason": reason}]
        report["elapsed_ms"] = round((time.perf_counter() - t0) * 1000, 2)
        return report
    blocking = blocking_flags(out.flags)
    if blocking:
        reason = "active content: " + "; ".join(blocking)
        report["rejected"] = reason
        report["checks"] = [{"name": "readable", "passed": False, "reason": reason}]
        report["elapsed_ms"] = round((time.perf_counter() - t0) * 1000, 2)
        return report
    ref, rf = _reference(reference_docx)
    result = compare(ref, out, oracle, rf, extra_allowed=tuple(extra_allowed))
    report["checks"] = [{"name": "readable", "passed": True, "flags": out.flags}] + result["checks"]
    report["passed"] = result["passed"]
    report["elapsed_ms"] = round((time.perf_counter() - t0) * 1000, 2)
    return report


# --------------------------------------------------------------------------- cases


def load_case(case_dir_or_case, cases_root: str | Path | None = None) -> dict:
    """A case dict (with ``reference_docx`` bytes and ``oracle``) from a dict, a case directory
    or a case id under ``cases_root`` (default ``exports/cases``)."""
    from benchwright.wordeval.build import read_case_dir
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


# --------------------------------------------------------------------------- isolation


def _set_limits(memory_mb: int, cpu_s: int) -> None:
    import resource
    mem = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    if cpu_s:
        _cpu_budget(cpu_s)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024 * 1024, 64 * 1024 * 1024))
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass


def _cpu_budget(cpu_s: int) -> None:
    """Allow ``cpu_s`` more CPU seconds from now (RLIMIT_CPU is cumulative per process; the soft
    limit is moved forward before each job, SIGXCPU ends a job stuck in C code)."""
    import resource
    ru = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(ru.ru_utime + ru.ru_stime) + cpu_s
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _worker_main(memory_mb: int, timeout_s: float, cpu_s: int) -> int:
    """Loop: one JSON job per stdin line -> one JSON report per stdout line."""
    import signal
    _set_limits(memory_mb, cpu_s)

    def on_alarm(signum, frame):
        raise TimeoutError("evaluation timed out")

    signal.signal(signal.SIGALRM, on_alarm)
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        _cpu_budget(cpu_s)
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
        try:
            rep = evaluate_docx(Path(job["reference"]).read_bytes(), Path(job["output"]).read_bytes(),
                                job["oracle"], job.get("case_id"))
        except TimeoutError:
            rep = {"case_id": job.get("case_id"), "passed": False, "rejected": f"timed out after {timeout_s}s",
                   "checks": [{"name": "readable", "passed": False, "reason": "timeout"}]}
        except MemoryError:
            rep = {"case_id": job.get("case_id"), "passed": False, "rejected": f"exceeded {memory_mb} MiB",
                   "checks": [{"name": "readable", "passed": False, "reason": "memory limit"}]}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        out.write(json.dumps(rep, default=str) + "\n")
        out.flush()
    return 0


class IsolatedEvaluator:
    """A persistent worker subprocess with memory / CPU / wall-time limits.

    A job that kills the worker (memory limit, crash) or exceeds the wall-clock timeout yields a
    rejection report; the worker is restarted for the next job."""

    def __init__(self, memory_mb: int = DEFAULT_MEMORY_MB, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.memory_mb = memory_mb
        self.timeout_s = timeout_s
        self.proc: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def _start(self) -> None:
        cmd = [sys.executable, "-m", "benchwright.evaluation.wordeval", "--worker", "--memory-mb",
               str(self.memory_mb), "--timeout", str(self.timeout_s)]
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
            if not reply:
                reader.start()
                reader.join(self.timeout_s + 5)
            line = reply[0] if reply else None
            if not line:
                # timed out (no reply) or the worker died (memory limit, crash): kill it, reject
                died = self.proc.poll() is not None
                self.proc.kill()
                self.proc.wait()
                self.proc = None
                reason = "evaluation worker died (memory limit or crash)" if died else \
                    f"timed out after {self.timeout_s:.0f}s"
                return {"case_id": case_id, "passed": False, "rejected": reason,
                        "checks": [{"name": "readable", "passed": False, "reason": reason}]}
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
                  memory_mb: int = DEFAULT_MEMORY_MB, timeout_s: float = DEFAULT_TIMEOUT_S,
                  evaluator: IsolatedEvaluator | None = None) -> dict:
    """Evaluate one output against a case (dir, id or dict). Returns the report dict.

    With ``isolate`` (default) the output is parsed in a resource-limited subprocess."""
    case = load_case(case_dir_or_case, cases_root)
    if not isolate:
        rep = evaluate_docx(case["reference_docx"], _read_output(output_docx), case["oracle"], case.get("case_id"))
        return rep
    if evaluator is not None:
        return evaluator.evaluate(case, output_docx)
    with IsolatedEvaluator(memory_mb, timeout_s) as ev:
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
                     workers: int = 1, memory_mb: int = DEFAULT_MEMORY_MB,
                     timeout_s: float = DEFAULT_TIMEOUT_S) -> dict:
    """Batch mode: ``outputs_dir/<case_id>.docx`` (or ``<case_id>/output.docx``) against
    ``cases_root/<case_id>/``.  Returns ``{"summary": ..., "reports": [...]}``."""
    outputs = _find_outputs(Path(outputs_dir))
    root = Path(cases_root) if cases_root else DEFAULT_CASES_ROOT
    reports: list[dict] = []
    jobs = list(outputs.items())
    evaluators = [IsolatedEvaluator(memory_mb, timeout_s) for _ in range(max(1, workers))] if isolate else []

    def run(idx_job):
        idx, (case_id, path) = idx_job
        try:
            case = load_case(root / case_id)
        except FileNotFoundError as exc:
            return {"case_id": case_id, "passed": False, "rejected": None, "error": str(exc), "checks": []}
        if isolate:
            return evaluators[idx % len(evaluators)].evaluate(case, path)
        return evaluate_docx(case["reference_docx"], path.read_bytes(), case["oracle"], case_id)

    try:
        if isolate and len(evaluators) > 1:
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(len(evaluators)) as pool:
                reports = list(pool.map(run, enumerate(jobs)))
        else:
            reports = [run(j) for j in enumerate(jobs)]
    finally:
        for ev in evaluators:
            ev.close()
    return {"summary": summarize(reports), "reports": reports}


# --------------------------------------------------------------------------- CLI


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="benchwright evaluate wordeval", description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", help="case directory or case id (under --cases-root)")
    ap.add_argument("--output", help="the agent's output .docx")
    ap.add_argument("--outputs", help="batch: folder of <case_id>.docx outputs")
    ap.add_argument("--cases-root", default=str(DEFAULT_CASES_ROOT))
    ap.add_argument("--report", help="batch: also write the full JSON report here")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB)
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S)
    ap.add_argument("--no-isolate", action="store_true", help="evaluate in-process (trusted outputs only)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return ap


def run_cli(args: list[str] | None = None) -> int:
    """``benchwright evaluate wordeval ...``: prints the JSON report.

    Exit 0 whether or not the case passed; non-zero only if the evaluation could not run
    (bad arguments, missing case or output file)."""
    args = list(sys.argv[1:] if args is None else args)
    while args and args[0] in ("evaluate", "wordeval"):
        args.pop(0)
    ap = _parser()
    try:
        ns = ap.parse_args(args)
    except SystemExit as exc:
        return int(exc.code or 2) if exc.code else 0
    if ns.worker:
        return _worker_main(ns.memory_mb, ns.timeout, int(ns.timeout) + 2)
    try:
        if ns.outputs:
            if not Path(ns.outputs).is_dir():
                print(json.dumps({"error": f"no such folder {ns.outputs}"}), file=sys.stderr)
                return 2
            res = evaluate_outputs(ns.outputs, ns.cases_root, isolate=not ns.no_isolate, workers=ns.workers,
                                   memory_mb=ns.memory_mb, timeout_s=ns.timeout)
            if ns.report:
                Path(ns.report).write_text(json.dumps(res, indent=2, default=str), encoding="utf-8")
            print(json.dumps(res["summary"], indent=2, default=str))
            return 0
        if not ns.case or not ns.output:
            ap.print_usage(sys.stderr)
            print("error: need --case and --output (or --outputs)", file=sys.stderr)
            return 2
        if not Path(ns.output).is_file():
            print(json.dumps({"error": f"no such output file {ns.output}"}), file=sys.stderr)
            return 2
        rep = evaluate_case(ns.case, ns.output, isolate=not ns.no_isolate, cases_root=ns.cases_root,
                            memory_mb=ns.memory_mb, timeout_s=ns.timeout)
        print(json.dumps(rep, indent=2, default=str))
        return 0
    except FileNotFoundError as exc:
        print(json.dumps({"error": str(exc)}), file=sys.stderr)
        return 2


__all__ = ["evaluate_case", "evaluate_docx", "evaluate_outputs", "compare", "summarize", "run_cli", "load_case",
           "IsolatedEvaluator", "resolve_anchor", "VOLATILE"]


if __name__ == "__main__":
    sys.exit(run_cli(sys.argv[1:]))
