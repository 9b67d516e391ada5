"""WordEval baseline agents, and the agent harness's runner (``benchwright run wordeval``).

The shipped agents (``benchwright.wordeval.agents``) bound the oracle from both sides:

* ``null`` returns the input unchanged: it must fail every case (every edit is observable);
* ``replay`` applies the planned operation: it must pass every case;
* ``text-only`` makes the planned textual change by rewriting runs: it fails where formatting or
  structure is the point, and the run's report shows where (per object-property pair, and whether
  text, formatting or structure differed);
* ``libreoffice`` re-saves the input unchanged with LibreOffice: it fails every case; its
  preservation differences are what LibreOffice's re-save alone changes.

Two ways to run them:

    benchwright baseline wordeval --data OUT/wordeval --agent NAME --out DIR [--config ...] [--evaluate]
        in this process (fast; LibreOffice in batches): outputs as DIR/<case_id>.docx
    benchwright run wordeval --agent NAME|CMD --cases OUT/wordeval [--config atomic|compositional|lite|all]
        --out RUN_DIR [--workers N] [--timeout S] [--memory-mb M] [--sample N] [--process-per-case]
        any command as an agent, one process per case under limits, resumable (the harness); a shipped
        agent runs in one long-lived worker per parallel case, under the same limits, with the same results

A run writes ``RUN_DIR/cases/<case_id>.json`` per case, ``RUN_DIR/outputs/``, ``RUN_DIR/summary.json``
(``cases``, ``passed``, ``pass_rate`` as a fraction; per config, subsystem, object-property pair and
check; the agents' exit statuses; for each failed compositional case which of its linked atomic
cases also failed) and ``RUN_DIR/report.md`` with ``report.png``.
"""
from __future__ import annotations

import contextlib
import json
import re
import sys
import threading
from collections import Counter, defaultdict
from collections.abc import Generator
from pathlib import Path

import pyarrow.parquet as pq

from benchwright.arguments import ArgumentParser, parser_of
from benchwright.evaluation.wordeval import (IsolatedEvaluator, OutputSnapshots, evaluate_docx, evaluate_outputs,
                                             load_case, summarize, summary_notes, summary_tables)
from benchwright.progress import Progress, current, use
from benchwright.summary import show, write_json
from benchwright.loaders.wordeval import EXPORTS, read_config
from benchwright.schemas import wordeval as schema
from benchwright.wordeval.agents import SHIPPED
from benchwright.wordeval.agents.common import plan_of
from benchwright.wordeval.stages import CATALOGUE, LIBREOFFICE_BATCH

AGENTS = tuple(SHIPPED)
TEST, LITE = schema.SPLITS
CONFIGS = tuple(schema.CONFIGS)   # the configs' names
CASE_COLUMNS = ["case_id", "instruction", "subsystem", "properties", "unit_id", "seed", "base_document"]


# --------------------------------------------------------------------------- cases of a build

def build_catalogue(data: str | Path) -> str | None:
    """The catalogue folder a build carries (None: an older build; the shipped catalogue is used)."""
    path = Path(data) / CATALOGUE
    return str(path) if path.is_dir() else None


def read_cases(data: str | Path, configs: tuple[str, ...] = CONFIGS, split: str = TEST) -> list[dict]:
    """The cases of ``configs`` in ``split`` (no documents): id, instruction, what a plan and a
    summary need, and the config each belongs to; sorted by id."""
    cases = []
    for config in configs:
        columns = CASE_COLUMNS + (["template", "atomic_case_ids"] if config == "compositional" else [])
        table = read_config(data, config, columns=columns, split=split).to_pylist()
        cases += [{**row, "config": config} for row in table]
    return sorted(cases, key=lambda c: c["case_id"])


def _configs(config: str) -> tuple[tuple[str, ...], str]:
    if config == LITE:
        return CONFIGS, LITE
    return (CONFIGS if config == "all" else (config,)), TEST


def _inputs(data: Path, configs: tuple[str, ...], split: str = TEST, column: str = "input_docx"):
    """(case_id, document bytes), streamed from the Parquet (a build's documents are never all in memory)."""
    for config in configs:
        for f in sorted((data / config).glob(f"{split}-*.parquet")):
            for batch in pq.ParquetFile(f).iter_batches(batch_size=64, columns=["case_id", column]):
                yield from zip(batch.column("case_id").to_pylist(), batch.column(column).to_pylist())


# --------------------------------------------------------------------------- in-process agents

def agent_outputs(data: str | Path, agent: str, configs: tuple[str, ...] = CONFIGS, split: str = TEST):
    """(case_id, output bytes or None, error or None) for every case: the shipped agent's own edit
    function, in this process; LibreOffice re-saves each distinct input once, in batches."""
    from benchwright.wordeval.agents import libreoffice
    from benchwright.wordeval.agents.common import planned_edit

    if agent not in SHIPPED:
        raise ValueError(f"unknown agent {agent!r}; one of {', '.join(AGENTS)}")
    data = Path(data)
    if agent == "libreoffice":
        batch: dict[str, bytes] = {}
        ids: dict[str, list[str]] = defaultdict(list)

        def flush():
            done = libreoffice.resave(batch)
            for key, out in done.items():
                for cid in ids.pop(key):
                    yield cid, out, None if out is not None else "LibreOffice could not re-save the input"
            batch.clear()

        import hashlib
        for cid, docx in _inputs(data, configs, split):
            key = hashlib.sha256(docx).hexdigest()
            if key not in ids:
                batch[key] = docx
            ids[key].append(cid)
            if len(batch) >= LIBREOFFICE_BATCH:
                yield from flush()
        yield from flush()
        return
    if agent == "text-only":
        replayed = {cid: (out, error) for cid, out, error in agent_outputs(data, "replay", configs, split)}
        yield from _text_only(data, replayed, configs, split)
        return
    plans = {c["case_id"]: plan_of(c, build_catalogue(data)) for c in read_cases(data, configs, split)}
    for cid, docx in _inputs(data, configs, split):
        try:
            yield cid, docx if agent == "null" else planned_edit(docx, plans[cid]), None
        except Exception as exc:  # noqa: BLE001 - one case's failure is that case's result
            yield cid, None, f"{type(exc).__name__}: {exc}"


def run_agent(data: str | Path, agent: str, out: str | Path, configs: tuple[str, ...] = CONFIGS) -> int:
    """Write the agent's output for every case of ``configs`` as ``out/<case_id>.docx``; returns the
    number of cases (a case the agent could not edit gets no file, and fails as missing)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    with current().phase(f"agent {agent}") as phase:
        edited = phase.task("edited", len(read_cases(data, configs)), "cases")
        for case_id, docx, _error in edited.iterate(agent_outputs(data, agent, configs)):
            if docx is not None:
                (out / f"{case_id}.docx").write_bytes(docx)
            n += 1
    return n


# --------------------------------------------------------------------------- summaries

_INDEX = re.compile(r"(?<=/)([A-Z])\d+(?=/|$)")


def key_pattern(key: str) -> str:
    """A snapshot key with its positions generalised: ``body/P12/para.spacing.after`` ->
    ``body/P*/para.spacing.after``."""
    key = _INDEX.sub(r"\1*", key)
    return re.sub(r"(cell|row)\d+(\.\d+)?", r"\1*", key)


def key_kind(key: str) -> str:
    """What a differing snapshot key is about: text, formatting, structure or document metadata."""
    last = key.rsplit("/", 1)[-1]
    if last == "text" or last.endswith(".text"):
        return "text"
    if key.startswith(("props/", "settings/")):
        return "metadata"
    if key.startswith("styles/") or last.startswith(("chars.", "para.", "tbl.", "cell", "row", "pg", "cols.", "draw",
                                                     "style", "grid", "num", "sect.", "hdr", "ftr")):
        return "formatting"
    return "structure"


def failure_kinds(report: dict) -> list[str]:
    """Why a failed case failed: the kinds of the keys that differed, or how it was rejected."""
    if report.get("passed"):
        return []
    if report.get("rejected"):
        return ["agent" if str(report["rejected"]).startswith("agent ") else "unreadable"]
    kinds = set()
    for check in report.get("checks", []):
        if check.get("passed"):
            continue
        diffs = check.get("differences") or []
        kinds.update(key_kind(d["key"]) for d in diffs)
        if not diffs:
            kinds.add("structure")     # a target the output does not have at all
    return sorted(kinds)


def _rate(p: int, n: int) -> dict:
    return {"passed": p, "total": n, "rate": round(p / n, 4) if n else None}


def summarize_run(cases: list[dict], records: dict[str, dict], agent: str) -> dict:
    """``summary.json``: the evaluator's aggregation plus per config, the agents' statuses, why each
    object-property pair failed, and for each failed compositional case its linked atomic cases
    that also failed (or passed, or were not run)."""
    scored = [c for c in cases if c["case_id"] in records]
    reports = [records[c["case_id"]]["report"] for c in scored]
    base = summarize(reports)
    per_config, kinds_by_pair = defaultdict(lambda: [0, 0]), defaultdict(Counter)
    for c, r in zip(scored, reports):
        per_config[c["config"]][1] += 1
        per_config[c["config"]][0] += bool(r.get("passed"))
        for kind in failure_kinds(r):
            for pair in c.get("properties") or ["unknown"]:
                kinds_by_pair[pair][kind] += 1
    compositional = {}
    for c in scored:
        if c["config"] != "compositional" or records[c["case_id"]]["passed"]:
            continue
        linked = list(c.get("atomic_case_ids") or [])
        compositional[c["case_id"]] = {
            "linked": linked,
            "also_failed": [a for a in linked if a in records and not records[a]["passed"]],
            "passed": [a for a in linked if a in records and records[a]["passed"]],
            "not_run": [a for a in linked if a not in records],
        }
    agent_runs = [records[c["case_id"]].get("agent") or {} for c in scored]
    mean = lambda xs: round(sum(xs) / len(xs), 3) if xs else None  # noqa: E731
    return {
        "agent": agent,
        "cases": len(scored),
        "passed": base["passed"],
        "pass_rate": base["pass_rate"],
        "not_scored": len(cases) - len(scored),
        "per_config": {k: _rate(*v) for k, v in sorted(per_config.items())},
        "per_subsystem": base["per_subsystem"],
        "per_object_property": base["per_object_property"],
        "per_check": base["per_check"],
        "failure_kinds_by_object_property": {k: dict(sorted(v.items())) for k, v in sorted(kinds_by_pair.items())},
        "agent_status": dict(sorted(Counter(a.get("status", "unknown") for a in agent_runs).items())),
        # how the harness held each agent's process tree, and what agents left running (all ended)
        "containment": dict(sorted(Counter(str(a.get("containment")) for a in agent_runs).items())),
        "left_running": {c["case_id"]: a["left_running"] for c, a in zip(scored, agent_runs) if a.get("left_running")},
        "rejected": dict(sorted(Counter(str(r["rejected"]).split(":", 1)[0] for r in reports
                                        if r.get("rejected")).items())),
        "compositional_failures": compositional,
        "failed_cases": {c["case_id"]: records[c["case_id"]]["reason"] for c in scored
                         if not records[c["case_id"]]["passed"]},
        "seconds": {"agent_mean": mean([a.get("seconds", 0.0) for a in agent_runs]),
                    "agent_cpu_mean": mean([a.get("cpu_s") or 0.0 for a in agent_runs]),
                    "evaluation_ms_mean": mean([a.get("evaluation_ms", 0.0) for a in agent_runs])},
    }


def _percent(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate:.1%}"


def write_report(run_dir: Path, summary: dict) -> Path:
    """``report.md``: the pass rates (overall, per config, per subsystem, per object-property pair with
    what differed), the agents' statuses, linked compositional failures, and ``report.png``."""
    from benchwright.card import markdown_table, pyplot

    plt = pyplot()
    subs = sorted(summary["per_subsystem"], key=lambda s: (schema.SUBSYSTEMS.index(s) if s in schema.SUBSYSTEMS
                                                          else 99, s))
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 0.28 * len(subs) + 1.8), width_ratios=(3, 1))
    ax.barh(range(len(subs)), [summary["per_subsystem"][s]["rate"] or 0.0 for s in subs])
    ax.set_yticks(range(len(subs)), [s.replace("_", " ") for s in subs], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("pass rate")
    ax.set_title(f"{summary['agent']}: pass rate per subsystem", fontsize=9)
    configs = list(summary["per_config"])
    bx.bar(configs, [summary["per_config"][c]["rate"] or 0.0 for c in configs])
    bx.set_ylim(0, 1)
    bx.set_title("atomic vs compositional", fontsize=9)
    bx.tick_params(labelsize=7)
    fig.tight_layout()
    fig.savefig(run_dir / "report.png", dpi=80, metadata={"Software": None})
    plt.close(fig)

    kinds = summary["failure_kinds_by_object_property"]
    pair_rows = [[pair, r["passed"], r["total"], _percent(r["rate"]),
                  ", ".join(f"{k} {n}" for k, n in kinds.get(pair, {}).items()) or "-"]
                 for pair, r in summary["per_object_property"].items()]
    comp_rows = [[cid, ", ".join(v["also_failed"]) or "-", ", ".join(v["passed"]) or "-", ", ".join(v["not_run"]) or "-"]
                 for cid, v in summary["compositional_failures"].items()]
    lines = [
        f"# WordEval run: {summary['agent']}", "",
        f"{summary['passed']} of {summary['cases']} cases passed (pass rate {summary['pass_rate']}).", "",
        "![pass rate per subsystem, atomic vs compositional](report.png)", "",
        "## Atomic against compositional", "",
        markdown_table(["config", "passed", "cases", "pass rate"],
                       [[k, v["passed"], v["total"], _percent(v["rate"])] for k, v in summary["per_config"].items()]), "",
        "## Per subsystem", "",
        markdown_table(["subsystem", "passed", "cases", "pass rate"],
                       [[s, summary["per_subsystem"][s]["passed"], summary["per_subsystem"][s]["total"],
                         _percent(summary["per_subsystem"][s]["rate"])] for s in subs]), "",
        "## Per object-property pair", "",
        "What differed in the failed cases: `text`, `formatting` or `structure` of the document, "
        "`metadata`, an `unreadable` output or an `agent` that failed (timeout, memory, exit status).", "",
        markdown_table(["object-property pair", "passed", "cases", "pass rate", "failed on"], pair_rows), "",
        "## Agent", "",
        markdown_table(["status", "cases"], [[k, v] for k, v in summary["agent_status"].items()]), "",
    ]
    if summary["rejected"]:
        lines += ["Rejected outputs: " + ", ".join(f"{k} ({v})" for k, v in summary["rejected"].items()) + ".", ""]
    if comp_rows:
        lines += ["## Failed compositional cases and their atomic operations", "",
                  markdown_table(["compositional case", "atomic also failed", "atomic passed", "atomic not run"],
                                 comp_rows), ""]
    path = run_dir / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the card: Lite and the baselines

def lite_rows(root: Path, split: str) -> list[dict]:
    """Per case of ``split``: what Lite is stratified and measured by (config, subsystem, base
    document, object-property pairs), its documents' bytes and its oracle's checks."""
    import pyarrow.compute as pc

    from benchwright.wordeval.lite import oracle_checks

    rows = []
    for config in CONFIGS:
        t = read_config(root, config, ["case_id", "subsystem", "base_document", "properties", "oracle",
                                       "input_docx", "reference_docx"], split=split)
        sizes = pc.add(pc.binary_length(t["input_docx"]), pc.binary_length(t["reference_docx"])).to_pylist()
        meta = t.select(["case_id", "subsystem", "base_document", "properties", "oracle"]).to_pylist()
        rows += [{**m, "config": config, "bytes": b, "checks": oracle_checks(m.pop("oracle"))}
                 for m, b in zip(meta, sizes)]
    return rows


def baseline_records(root: Path, agent: str, outputs=None, progress=None) -> dict[str, dict]:
    """Every test case's record for a shipped agent run in this process (or its given ``outputs``:
    (case_id, bytes or None, error)), scored by the evaluator (in process: the outputs are our own
    agents'), LibreOffice's with its preservation differences in full. ``progress``: a
    ``benchwright.progress.Task`` advanced per case."""
    import time

    from benchwright.wordeval.oracle import compare, reference_snapshot

    records, snapshots = {}, OutputSnapshots()   # our agents' outputs repeat: each extracted once
    t = time.perf_counter()
    for cid, out, error in (agent_outputs(root, agent) if outputs is None else outputs):
        case = load_case(root / EXPORTS / cid)
        seconds, t = time.perf_counter() - t, time.perf_counter()
        if out is None:
            report = {"case_id": cid, "passed": False, "rejected": f"agent {error}",
                      "checks": [{"name": "agent", "passed": False, "reason": error}]}
        else:
            report = evaluate_docx(case["reference_docx"], out, case["oracle"], cid, snapshots=snapshots)
            if agent == "libreoffice" and not report["rejected"]:
                # every preservation difference, not the report's first 25: what the re-save trips
                ref, flat = reference_snapshot(case["reference_docx"])
                full = compare(ref, snapshots(out), json.loads(case["oracle"]), flat, max_differences=10**9)
                report["preservation_keys"] = sorted({d["key"] for c in full["checks"] if c["name"] == "preservation"
                                                      for d in c["differences"]})
        records[cid] = {"case_id": cid, "passed": bool(report["passed"]), "report": report,
                        "reason": None if report["passed"] else report.get("rejected") or "failed",
                        "agent": {"status": "ok" if out is not None else "exit", "seconds": round(seconds, 4)}}
        if progress is not None:
            progress.advance()
    return records


def _baseline_runs(root: Path, cases: list[dict], agents: list[str]) -> tuple[dict, dict]:
    """({agent: its run's summary}, LibreOffice's records by case) for every test case, with progress."""
    summaries, lo_records = {}, {}
    # LibreOffice's re-saves run in soffice meanwhile (a third of the card's time, spent in another process)
    meanwhile = _made_meanwhile(agent_outputs(root, "libreoffice")) if "libreoffice" in agents \
        else contextlib.nullcontext()
    with current().phase("card: baseline agents") as phase, meanwhile as resaved:  # minutes on a default build
        edits = phase.task("replay's edits", len(cases), "cases")
        tasks = {agent: phase.task(agent, len(cases), "cases scored", started=False) for agent in agents}
        # text-only writes the text of the planned edit: replay's outputs, computed once for both
        replayed = {cid: (out, error) for cid, out, error in edits.iterate(agent_outputs(root, "replay"))}
        for agent in agents:
            if agent == "replay":
                outputs = ((cid, out, error) for cid, (out, error) in replayed.items())
            elif agent == "text-only":
                outputs = _text_only(root, replayed)
            elif agent == "libreoffice":
                outputs = resaved
            else:
                outputs = None
            records = baseline_records(root, agent, outputs, tasks[agent])
            summaries[agent] = summarize_run(cases, records, agent)
            if agent == "libreoffice":
                lo_records = records
    return summaries, lo_records


# how many of LibreOffice's re-saved documents may wait to be scored (about 60 KB each): every one of a default
# build's 902, so that soffice works through the whole card; a larger build's re-saves wait for the reader
RESAVED_AHEAD = 2048


@contextlib.contextmanager
def _made_meanwhile(items: Generator, ahead: int = RESAVED_AHEAD):
    """``items`` (a generator) run in a thread started now, at most ``ahead`` items before the reader; yields an
    iterator over what it made, in its order, which waits for what is not made yet and raises what the thread
    raised. For work that waits on another process (LibreOffice's soffice), so that this process's own work goes
    on beside it. Leaving the block stops the thread after the item it is making and closes ``items`` (its
    temporary files go): a card that fails early leaves no soffice working for nobody."""
    import queue

    made: queue.Queue = queue.Queue(maxsize=ahead)
    stop = threading.Event()

    def put(entry) -> bool:
        while not stop.is_set():
            try:
                made.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
            put((False, None))
        except BaseException as err:  # noqa: BLE001 - raised again in the reader's thread
            put((False, err))
        finally:
            items.close()

    def read():
        while True:
            more, item = made.get()
            if not more:
                if item is not None:
                    raise item
                return
            yield item

    thread = threading.Thread(target=run, name="benchwright-meanwhile", daemon=True)
    thread.start()
    try:
        yield read()
    finally:
        stop.set()
        thread.join()


def _text_only(root: Path, replayed: dict, configs: tuple[str, ...] = CONFIGS, split: str = TEST):
    """The text-only agent's outputs from the inputs and replay's edited documents."""
    from benchwright.wordeval.agents.text_only import transfer_text

    for cid, docx in _inputs(Path(root), configs, split):
        edited, error = replayed[cid]
        if edited is None:
            yield cid, None, error
            continue
        try:
            yield cid, transfer_text(docx, edited), None
        except Exception as exc:  # noqa: BLE001 - one case's failure is that case's result
            yield cid, None, f"{type(exc).__name__}: {exc}"


def card_tables(build: str, settings) -> dict:
    """The card's Lite section and baseline agents (the dataset's declared ``card_baselines``): ``card_sections``,
    the LibreOffice agent left out of a build whose settings left LibreOffice out."""
    return card_sections(Path(build), settings.libreoffice_gate != "none")


def card_sections(root: Path, libreoffice: bool = True) -> dict:
    """The card's Lite section (distance per attribute, evaluation cost saved) and the baseline agents
    run on every test case (pass rates overall, per config and per subsystem; where text-only fails;
    the preservation checks LibreOffice's re-save trips). ``libreoffice`` False (a build without
    LibreOffice) leaves that agent out."""
    from benchwright.card import markdown_table, pyplot, save_figure
    from benchwright.formats.ooxml.libreoffice import available
    from benchwright.wordeval.lite import lite_statistics

    lite = lite_statistics(lite_rows(root, TEST), lite_rows(root, LITE))
    cases = read_cases(root)
    agents = [a for a in AGENTS if a != "libreoffice" or (libreoffice and available())]
    summaries, lo_records = _baseline_runs(root, cases, agents)
    fmt = _percent
    baseline_rows = [[a, s["cases"], s["passed"], fmt(s["pass_rate"])] +
                     [fmt(s["per_config"].get(c, {}).get("rate")) for c in CONFIGS]
                     for a, s in summaries.items()]
    subsystems = [x for x in schema.SUBSYSTEMS if any(x in s["per_subsystem"] for s in summaries.values())]
    subsystem_rows = [[x] + [fmt(s["per_subsystem"].get(x, {}).get("rate")) for s in summaries.values()]
                      for x in subsystems]
    text_only = summaries["text-only"]
    kinds: Counter = Counter()
    for by_kind in text_only["failure_kinds_by_object_property"].values():
        kinds.update(by_kind)
    passes = [p for p, r in text_only["per_object_property"].items() if r["passed"]]
    tripped: Counter = Counter()
    for r in lo_records.values():
        tripped.update({key_pattern(k) for k in r["report"].get("preservation_keys", [])})
    n_lo = len(lo_records)
    lo_rows = [[f"`{k}`", n, f"{n / n_lo:.0%}"] for k, n in sorted(tripped.items(), key=lambda kv: (-kv[1], kv[0]))]

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(subsystems) + 1.6))
    height = 0.8 / max(1, len(summaries))
    for i, (a, s) in enumerate(summaries.items()):
        ax.barh([y + i * height for y in range(len(subsystems))],
                [s["per_subsystem"].get(x, {}).get("rate") or 0.0 for x in subsystems], height=height, label=a)
    ax.set_yticks([y + 0.4 - height / 2 for y in range(len(subsystems))], [x.replace("_", " ") for x in subsystems])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("pass rate")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    ax.set_title("Baseline agents per subsystem (every test case)")
    fig.tight_layout()
    return {
        "lite": lite,
        "lite_tvd_table": markdown_table(["attribute", "total variation distance (lite vs test)"],
                                         [[k, "n/a" if v is None else f"{v:.4f}"] for k, v in lite["tvd"].items()]),
        "lite_cost_table": markdown_table(["evaluation cost", "test", "lite", "reduction"],
                                          [[k, v["full"], v["lite"], fmt(v["reduction"])]
                                           for k, v in lite["cost"].items()]),
        "baseline_summaries": {a: {k: s[k] for k in ("cases", "passed", "pass_rate")} for a, s in summaries.items()},
        "baseline_table": markdown_table(["agent", "cases", "passed", "pass rate", *CONFIGS], baseline_rows),
        "baseline_subsystem_table": markdown_table(["subsystem", *summaries], subsystem_rows),
        "text_only_failure_table": markdown_table(["what differed", "failed text-only cases × object-property pairs"],
                                                  [[k, n] for k, n in sorted(kinds.items())]),
        "text_only_passes": ", ".join(f"`{p}`" for p in passes) or "none",
        "libreoffice_ran": bool(lo_records),
        "libreoffice_cases": n_lo,
        "libreoffice_table": markdown_table(["preservation key (positions generalised)", "cases tripped", "share"],
                                            lo_rows[:40]) if lo_rows else "",
        "figures_baselines": save_figure(fig, root, "baselines"),
    }


# --------------------------------------------------------------------------- the harness's runner

def run_harness(data: str | Path, agent: str, run_dir: str | Path, config: str = "all", *, workers: int = 2,
                timeout_s: float | None = None, memory_mb: int | None = None, sample: int | None = None,
                seed: int = 0, only: list[str] | None = None, progress: bool = True,
                process_per_case: bool = False) -> dict:
    """Run ``agent`` (a shipped name or a command line) over the cases of a build under the harness,
    score each output in the isolated evaluator, and write the summary and report. A shipped agent
    runs in a long-lived worker per parallel case (``process_per_case``: a process per case)."""
    from benchwright.errors import BenchwrightError
    from benchwright.subsets import select_stratified
    from benchwright.wordeval import harness

    data, run_dir = Path(data), Path(run_dir)
    if not (data / EXPORTS).is_dir():
        raise BenchwrightError(f"{data}: not a built WordEval folder (no {EXPORTS}/)")
    configs, split = _configs(config)
    cases = read_cases(data, configs, split)
    if only:
        unknown = sorted(set(only) - {c["case_id"] for c in cases})
        if unknown:
            raise BenchwrightError(f"no such case in {config}: {', '.join(unknown[:5])}")
        cases = [c for c in cases if c["case_id"] in set(only)]
    if sample is not None and sample < len(cases):
        keep = set(select_stratified(cases, sample, seed, "wordeval-harness-sample",
                                     stratum=lambda c: (c["config"], c["subsystem"]), item_id=lambda c: c["case_id"]))
        cases = [c for c in cases if c["case_id"] in keep]
    timeout_s = harness.DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
    memory_mb = harness.DEFAULT_MEMORY_MB if memory_mb is None else memory_mb
    runner = harness.Agent(agent)
    harness.open_run(run_dir, {"agent": runner.spec, "cases": str(data.resolve()), "config": config,
                               "timeout_s": timeout_s, "memory_mb": memory_mb})
    catalogue = build_catalogue(data)
    local = threading.local()
    evaluators: list[IsolatedEvaluator] = []

    def score(case: dict, output: Path) -> dict:
        if not hasattr(local, "evaluator"):
            local.evaluator = IsolatedEvaluator()
            evaluators.append(local.evaluator)
        return local.evaluator.evaluate(load_case(data / EXPORTS / case["case_id"]), output)

    try:
        counts = harness.run_cases(
            cases, lambda c: (data / EXPORTS / c["case_id"] / "input.docx").read_bytes(), runner, run_dir, score,
            plan=lambda c: plan_of(c, catalogue), workers=workers, timeout_s=timeout_s, memory_mb=memory_mb,
            progress=progress, process_per_case=process_per_case)
    finally:
        for ev in evaluators:
            ev.close()
    summary = summarize_run(cases, harness.scored_records(run_dir), runner.spec)
    summary["run"] = counts
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    write_report(run_dir, summary)
    return summary


def harness_parser() -> ArgumentParser:
    from benchwright.wordeval import harness

    ap = ArgumentParser(prog="benchwright run wordeval",
                                 description="Run an agent (a shipped baseline or any command) over WordEval's cases.")
    ap.add_argument("--agent", required=True,
                    help=f"{' | '.join(AGENTS)} or a command line, run as CMD INPUT INSTRUCTION_FILE OUTPUT "
                         "(or with {input} {instruction} {output} where they go)")
    ap.add_argument("--cases", required=True, help="a built WordEval folder (OUT/wordeval)")
    ap.add_argument("--config", default="all", choices=[*CONFIGS, LITE, "all"],
                    help="lite: the lite split of both configs")
    ap.add_argument("--out", required=True, help="the run's folder; an interrupted run resumes there")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=harness.DEFAULT_TIMEOUT_S, help="seconds per case")
    ap.add_argument("--memory-mb", type=int, default=harness.DEFAULT_MEMORY_MB, help="address space per case")
    ap.add_argument("--sample", type=int, help="only this many cases, stratified by config and subsystem")
    ap.add_argument("--seed", type=int, default=0, help="with --sample")
    ap.add_argument("--case-id", action="append", help="only this case (repeatable)")
    ap.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    ap.add_argument("--process-per-case", action="store_true",
                    help="run a shipped agent in a process of its own per case, as a command agent runs (slower; "
                         "by default it runs in one long-lived worker per parallel case, with the same results)")
    return ap


@parser_of(harness_parser)
def run_harness_cli(argv=None) -> int:
    """``benchwright run wordeval --agent CMD --cases OUT/wordeval --out RUN_DIR ...``"""
    ns = harness_parser().parse_args(argv)
    try:
        summary = run_harness(ns.cases, ns.agent, ns.out, ns.config, workers=ns.workers, timeout_s=ns.timeout,
                              memory_mb=ns.memory_mb, sample=ns.sample, seed=ns.seed, only=ns.case_id,
                              progress=not ns.no_progress, process_per_case=ns.process_per_case)
    except KeyboardInterrupt:
        from benchwright.wordeval.harness import scored_records

        print(f"interrupted: {len(scored_records(Path(ns.out)))} cases scored in {ns.out}; run the same command "
              "again to resume", file=sys.stderr)
        return 130
    print(json.dumps({k: summary[k] for k in ("agent", "cases", "passed", "pass_rate", "per_config",
                                              "agent_status", "run")}, indent=2))
    return 0


def cli_parser() -> ArgumentParser:
    ap = ArgumentParser(prog="benchwright baseline wordeval",
                                 description="Run a shipped baseline agent in this process over a build's cases.")
    ap.add_argument("--data", required=True, help="a built WordEval folder (OUT/wordeval)")
    ap.add_argument("--agent", required=True, choices=sorted(AGENTS))
    ap.add_argument("--out", required=True, help="folder for the outputs, <case_id>.docx")
    ap.add_argument("--config", default="all", choices=[*CONFIGS, "all"])
    ap.add_argument("--evaluate", action="store_true",
                    help="score the outputs with the evaluator: a summary table, every case's report in --report")
    ap.add_argument("--report", help="with --evaluate: write every case's report here (JSON; default OUT/evaluation.json)")
    ap.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    return ap


@parser_of(cli_parser)
def run_cli(argv=None) -> int:
    ns = cli_parser().parse_args(argv)
    configs = CONFIGS if ns.config == "all" else (ns.config,)
    with use(Progress("off" if ns.no_progress else "auto", prefix="[wordeval]")):
        n = run_agent(ns.data, ns.agent, ns.out, configs)
        print(f"wordeval baseline {ns.agent}: {n:,} cases -> {ns.out}", flush=True)
        if ns.evaluate:
            scored = evaluate_outputs(ns.out, Path(ns.data) / EXPORTS)
            report = write_json(ns.report or Path(ns.out) / "evaluation.json", scored)
            show(summary_tables(scored["summary"], f"wordeval baseline {ns.agent}"),
                 summary_notes(scored["summary"], report))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli())
