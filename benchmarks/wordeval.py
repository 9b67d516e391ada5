"""WordEval benchmark: prints JSON with build throughput, evaluator latency and LibreOffice throughput.

    python -m benchwright.benchmarks.wordeval [--eval-sample 200] [--lo-sample 20] [--no-libreoffice]
    python -m benchwright.benchmarks.wordeval --large [--paragraphs 10000] [--rows 6000]
    python -m benchwright.benchmarks.wordeval --harness [--data OUT/wordeval] [--workers 2] [--agent replay]
        [--sample N]

Targets: building all cases < 60 s without LibreOffice; evaluator < 100 ms per case; a generated
large document (10,000 paragraphs and a 6,000-row table, ~5 MB of XML) snapshots and evaluates,
unchanged and with every paragraph edited, in a few seconds, and passes the structural gate in a
few seconds too, also with the table's first column merged top to bottom (``--large``). ``--harness``:
the agent harness (``benchwright run wordeval``) over every case of a build with the ``replay`` agent,
scored in the isolated evaluator, run twice side by side: in the agent's long-lived workers, then in a
process per case; cases per second, wall and CPU seconds (the whole process tree), the agent's and the
evaluator's time per case, the idle rate the CPU seconds allow, and whether both runs gave the same
outputs and reports (targets: >= 10 cases/s with 2 workers; evaluator under 100 ms mean); without
``--data`` the shipped catalogue is built first (without the LibreOffice gate) into a temporary folder.
"""
from __future__ import annotations

import io
import json
import os
import random
import statistics
import sys
import time

from benchwright.arguments import ArgumentParser

_WORDS = ("river survey station sample growth northern southern report quarterly measured estimate water basin "
          "annual flow rate level season results analysis method field data team region").split()


def large_document(n_paragraphs: int = 10000, n_rows: int = 6000, n_cols: int = 3, seed: int = 0) -> bytes:
    """A deterministic .docx with ``n_paragraphs`` body paragraphs (a Heading 1 every 50) followed
    by one ``n_rows`` x ``n_cols`` table, written with python-docx."""
    import docx
    from benchwright.formats.ooxml.package import normalize_docx

    rng = random.Random(seed)
    d = docx.Document()
    for i in range(n_paragraphs):
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 40)))
        if i % 50 == 0:
            d.add_heading(f"Section {i // 50 + 1}: {words[:40]}", level=1)
        else:
            d.add_paragraph(f"{i}. {words}.")
    if n_rows:
        table = d.add_table(rows=n_rows, cols=n_cols)
        for r, row in enumerate(table.rows):
            for c, cell in enumerate(row.cells):
                cell.text = f"r{r} c{c} {rng.choice(_WORDS)}"
    buf = io.BytesIO()
    d.save(buf)
    return normalize_docx(buf.getvalue())


def edit_every_paragraph(data: bytes) -> bytes:
    """The same document with one character appended to every non-empty paragraph of the body
    (table cells included): each paragraph is still similar to, but no longer equal to, its original."""
    from benchwright.formats.ooxml.ns import qn
    from benchwright.formats.ooxml.package import Package

    pkg = Package.from_bytes(data)
    main = pkg.main_part()
    for p in pkg.xml(main).iter(qn("w:p")):
        texts = list(p.iter(qn("w:t")))
        if texts:
            texts[-1].text = (texts[-1].text or "") + "*"
    return pkg.to_bytes()


def merge_first_column(data: bytes) -> bytes:
    """The same document with the first column of its first table merged vertically from the top
    row to the bottom one (``w:vMerge`` restart, then continue), as Word writes a merged column."""
    from benchwright.formats.ooxml.ns import qn
    from benchwright.formats.ooxml.package import Package
    from benchwright.formats.ooxml.schema_order import get_or_add

    pkg = Package.from_bytes(data)
    tbl = pkg.xml(pkg.main_part()).find(".//" + qn("w:tbl"))
    for i, tr in enumerate(tbl.iter(qn("w:tr"))):
        merge = get_or_add(get_or_add(tr.find(qn("w:tc")), "w:tcPr"), "w:vMerge")
        if i == 0:
            merge.set(qn("w:val"), "restart")
    return pkg.to_bytes()


def large_document_benchmark(n_paragraphs: int, n_rows: int) -> dict:
    """Snapshot and in-process evaluation times on ``large_document`` (the first call pays the
    style cache; each step is timed once, as the worker would run it)."""
    import zipfile
    from benchwright.evaluation import wordeval as ev
    from benchwright.wordeval import oracle as wordeval_oracle
    from benchwright.wordeval.snapshot import extract_snapshot

    t = time.perf_counter()
    ref = large_document(n_paragraphs, n_rows)
    gen_s = time.perf_counter() - t
    edited = edit_every_paragraph(ref)
    oracle = {"targets": [], "allowed_side_effects": []}
    out = {"paragraphs": n_paragraphs, "table_rows": n_rows, "docx_bytes": len(ref),
           "document_xml_bytes": zipfile.ZipFile(io.BytesIO(ref)).getinfo("word/document.xml").file_size,
           "generate_seconds": round(gen_s, 2)}
    t, c = time.perf_counter(), time.process_time()
    snap = extract_snapshot(ref)
    out["snapshot_seconds"] = round(time.perf_counter() - t, 2)
    out["snapshot_cpu_seconds"] = round(time.process_time() - c, 2)   # wall time on a shared machine varies
    out["snapshot_paragraphs"] = len(snap.stories["body"])
    wordeval_oracle._REF_CACHE.clear()
    for name, output in (("unchanged", ref), ("every_paragraph_edited", edited)):
        t, c = time.perf_counter(), time.process_time()
        rep = ev.evaluate_docx(ref, output, oracle)
        dt, dc = time.perf_counter() - t, time.process_time() - c
        pres = [x for x in rep["checks"] if x["name"] == "preservation"]
        out[f"evaluate_{name}"] = {"seconds": round(dt, 2), "cpu_seconds": round(dc, 2), "passed": rep["passed"],
                                   "rejected": rep["rejected"],
                                   "n_differences": pres[0]["n_differences"] if pres else None}
    t = time.perf_counter()
    rep = ev.evaluate_docx(ref, edited, oracle)
    out["evaluate_every_paragraph_edited_reference_cached_seconds"] = round(time.perf_counter() - t, 2)
    # as `benchwright evaluate wordeval` runs it: a worker with the default memory and time limits
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp, ev.IsolatedEvaluator() as iso:
        paths = {}
        for name, data in (("reference", ref), ("edited", edited)):
            paths[name] = Path(tmp) / f"{name}.docx"
            paths[name].write_bytes(data)
        for name, output in (("unchanged", "reference"), ("every_paragraph_edited", "edited")):
            t = time.perf_counter()
            rep = iso.evaluate_paths(paths["reference"], paths[output], oracle)
            out[f"isolated_{name}"] = {"seconds": round(time.perf_counter() - t, 2), "passed": rep["passed"],
                                       "rejected": rep["rejected"]}
    # the structural gate every built file passes (no LibreOffice), on the document and with its
    # table's first column merged top to bottom (python-docx's row.cells made that quadratic)
    from benchwright.formats.ooxml.gate import gate_docx, python_docx_reload
    merged = merge_first_column(ref)
    for name, data in (("gate", ref), ("gate_first_column_merged", merged)):
        t, c = time.perf_counter(), time.process_time()
        problems = gate_docx(data)
        out[name] = {"seconds": round(time.perf_counter() - t, 2), "cpu_seconds": round(time.process_time() - c, 2),
                     "problems": problems}
    t = time.perf_counter()
    problems = python_docx_reload(merged)
    out["python_docx_reload_first_column_merged"] = {"seconds": round(time.perf_counter() - t, 2),
                                                     "problems": problems}
    out["limits"] = {"memory_mb": ev.DEFAULT_MEMORY_MB, "cpu_limit_s": ev.DEFAULT_CPU_LIMIT_S,
                     "wall_limit_s": ev.wall_backstop(ev.DEFAULT_CPU_LIMIT_S)}
    out["target_seconds"] = 5
    return out


def _harness_run(data, agent: str, run_dir, workers: int, process_per_case: bool, sample: int | None) -> dict:
    """One harness run: wall and CPU seconds (this process and every process it waited for: the
    agents' workers or processes, their supervisors, the evaluators) and the per-case means."""
    import resource
    from pathlib import Path

    from benchwright.baselines.wordeval import run_harness

    def cpu() -> float:
        return sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                   for f in ("ru_utime", "ru_stime"))

    load = round(os.getloadavg()[0], 1)
    t, c = time.perf_counter(), cpu()
    summary = run_harness(data, agent, run_dir, workers=workers, progress=False, process_per_case=process_per_case,
                          sample=sample)
    wall, spent = time.perf_counter() - t, cpu() - c
    records = [json.loads(p.read_text()) for p in sorted((Path(run_dir) / "cases").glob("*.json"))]
    ev_ms = [r["agent"]["evaluation_ms"] for r in records]
    agent_s = [r["agent"]["seconds"] for r in records]
    agent_cpu = [r["agent"]["cpu_s"] or 0.0 for r in records]
    ev_cpu = [(r["report"].get("evaluation") or {}).get("cpu_s") or 0.0 for r in records]
    n = summary["cases"]
    return {
        "process": "per case" if process_per_case else "worker", "load_at_start": load,
        "cases": n, "passed": summary["passed"], "pass_rate": summary["pass_rate"],
        "wall_seconds": round(wall, 1), "cases_per_second": round(n / wall, 2),
        "cpu_seconds": round(spent, 1), "cpu_seconds_per_case": round(spent / n, 3),
        # on an idle machine a run's CPU seconds do not grow (load only adds to them): it takes no longer
        # than its CPU seconds on one core, and no less than them spread over every core it can use
        "idle_cases_per_second": {"at_least": round(n / spent, 1),
                                  "at_most": round(n * min(workers, os.cpu_count() or 1) / spent, 1)},
        "agent_seconds_per_case": {"mean": round(statistics.mean(agent_s), 3),
                                   "median": round(statistics.median(agent_s), 3)},
        "agent_cpu_seconds_per_case": round(statistics.mean(agent_cpu), 3),
        "evaluator_cpu_seconds_per_case": round(statistics.mean(ev_cpu), 3),
        # isolated evaluator as the harness uses it: one persistent worker per harness thread
        "evaluator_ms_per_case": {"mean": round(statistics.mean(ev_ms), 2), "median": round(statistics.median(ev_ms), 2),
                                  "p95": round(sorted(ev_ms)[int(0.95 * (len(ev_ms) - 1))], 2), "target_mean": 100},
    }


def _same_results(a, b) -> dict:
    """Whether two runs over the same cases gave the same outputs and reports (times, temporary
    paths and the way the agent ran aside)."""
    from pathlib import Path

    volatile = {"seconds", "cpu_s", "max_rss_mb", "evaluation_ms", "command", "process", "elapsed_ms", "evaluation"}

    def results(run) -> dict:
        out = {}
        for p in sorted((Path(run) / "cases").glob("*.json")):
            r = json.loads(p.read_text())
            output = Path(run) / "outputs" / f"{p.stem}.docx"
            out[p.stem] = ({k: v for k, v in r["agent"].items() if k not in volatile},
                           {k: v for k, v in r["report"].items() if k not in volatile}, r["passed"], r["reason"],
                           output.read_bytes() if output.is_file() else None)
        return out

    ra, rb = results(a), results(b)
    return {"cases": len(ra), "identical": ra == rb, "differing": sorted(k for k in ra if ra[k] != rb.get(k))[:10]}


def harness_benchmark(data: str | None, agent: str = "replay", workers: int = 2, sample: int | None = None) -> dict:
    """The harness over the cases of a build with ``agent``, a shipped agent in its long-lived workers
    and then in a process per case, side by side in one run, and whether both gave the same results;
    builds the shipped catalogue when no ``data`` is given. ``sample``: only this many cases (the
    harness's stratified ``--sample``, the same in both runs)."""
    import tempfile
    from pathlib import Path

    from benchwright.baselines.wordeval import read_cases
    from benchwright.wordeval.agents import SHIPPED

    out: dict = {"agent": agent, "workers": workers, "cpu_count": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="wordeval-harness-bench-") as tmp:
        if data is None:
            from benchwright.build import build
            from benchwright.options import BuildOptions
            from benchwright.pipelines.wordeval import WordEval

            ds = WordEval().configured(libreoffice_gate="none")
            t = time.perf_counter()
            data = build(ds, None, BuildOptions(out=str(Path(tmp) / "out"), progress=False))
            out["build_seconds"] = round(time.perf_counter() - t, 1)
        out["cases_total"] = len(read_cases(data))
        modes = [False, True] if agent in SHIPPED else [True]
        runs = {}
        for per_case in modes:
            runs[per_case] = Path(tmp) / ("per-case" if per_case else "worker")
            out["per_case" if per_case else "worker"] = _harness_run(data, agent, runs[per_case], workers, per_case,
                                                                     sample)
        if len(runs) == 2:
            out["same_results"] = _same_results(runs[False], runs[True])
            w, c = out["worker"], out["per_case"]
            out["worker_over_per_case"] = {"cases_per_second": round(w["cases_per_second"] / c["cases_per_second"], 2),
                                           "cpu_seconds_per_case": round(w["cpu_seconds_per_case"]
                                                                         / c["cpu_seconds_per_case"], 3)}
    out["target_cases_per_second"] = 10
    return out


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--eval-sample", type=int, default=200)
    ap.add_argument("--lo-sample", type=int, default=20)
    ap.add_argument("--no-libreoffice", action="store_true")
    ap.add_argument("--large", action="store_true", help="only the generated large-document benchmark")
    ap.add_argument("--paragraphs", type=int, default=10000)
    ap.add_argument("--rows", type=int, default=6000)
    ap.add_argument("--harness", action="store_true", help="only the agent harness over every case of a build")
    ap.add_argument("--data", help="with --harness: a built WordEval folder (default: build the shipped catalogue)")
    ap.add_argument("--agent", default="replay", help="with --harness: the agent")
    ap.add_argument("--workers", type=int, default=2, help="with --harness: parallel cases")
    ap.add_argument("--sample", type=int, help="with --harness: only this many cases (stratified)")
    args = ap.parse_args(argv)
    if args.harness:
        print(json.dumps({"harness": harness_benchmark(args.data, args.agent, args.workers, args.sample)}, indent=2))
        return 0
    if args.large:
        print(json.dumps({"large_document": large_document_benchmark(args.paragraphs, args.rows),
                          "cpu_count": os.cpu_count()}, indent=2))
        return 0

    t0 = time.perf_counter()
    from benchwright.evaluation import wordeval as ev
    from benchwright.formats.ooxml import gate_docx
    from benchwright.formats.ooxml import libreoffice
    from benchwright.wordeval.cases import iter_cases, iter_compositions
    from benchwright.wordeval.catalogue import load_catalogue
    import_s = time.perf_counter() - t0

    seeds = tuple(int(s) for s in args.seeds.split(","))
    cat = load_catalogue()
    t0 = time.perf_counter()
    atomic = list(iter_cases(cat, seeds))
    t_atomic = time.perf_counter() - t0
    t0 = time.perf_counter()
    comps = list(iter_compositions(cat, seeds, atomic_ids={c["case_id"] for c in atomic}))
    t_comp = time.perf_counter() - t0
    n_cases = len(atomic) + len(comps)

    sample = (atomic + comps)[:: max(1, n_cases // args.eval_sample)][: args.eval_sample]
    # in-process evaluator: reference passes / input fails, one output per call
    lat = []
    for c in sample:
        for out in (c["reference_docx"], c["input_docx"]):
            t = time.perf_counter()
            ev.evaluate_docx(c["reference_docx"], out, c["oracle"])
            lat.append(time.perf_counter() - t)
    # isolated evaluator (subprocess with limits), persistent worker: amortised per case
    iso_lat = []
    with ev.IsolatedEvaluator() as iso:
        t = time.perf_counter()
        iso.evaluate(sample[0], sample[0]["reference_docx"])
        startup = time.perf_counter() - t
        for c in sample:
            t = time.perf_counter()
            iso.evaluate(c, c["input_docx"])
            iso_lat.append(time.perf_counter() - t)
    # structural gates (no LibreOffice)
    gate_files = [c["reference_docx"] for c in sample]
    t = time.perf_counter()
    for data in gate_files:
        gate_docx(data)
    gate_s = (time.perf_counter() - t) / len(gate_files)

    result = {
        "cases": {"atomic": len(atomic), "compositional": len(comps), "seeds": list(seeds)},
        "build": {
            "atomic_seconds": round(t_atomic, 2), "compositional_seconds": round(t_comp, 2),
            "total_seconds": round(t_atomic + t_comp, 2),
            "cases_per_second": round(n_cases / (t_atomic + t_comp), 2),
            "target_total_seconds": 60, "import_seconds": round(import_s, 2),
        },
        "evaluator_in_process_ms": {
            "n": len(lat), "mean": round(statistics.mean(lat) * 1000, 2),
            "median": round(statistics.median(lat) * 1000, 2),
            "p95": round(sorted(lat)[int(0.95 * (len(lat) - 1))] * 1000, 2), "target": 100,
        },
        "evaluator_isolated_ms": {
            "n": len(iso_lat), "worker_startup": round(startup * 1000, 1),
            "mean_per_case": round(statistics.mean(iso_lat) * 1000, 2),
            "median_per_case": round(statistics.median(iso_lat) * 1000, 2),
        },
        "gate_ms_per_file_without_libreoffice": round(gate_s * 1000, 2),
        "cpu_count": os.cpu_count(),
    }
    if not args.no_libreoffice and libreoffice.available():
        files = {f"f{i}": c["reference_docx"] for i, c in enumerate(sample[: args.lo_sample])}
        t = time.perf_counter()
        res = libreoffice.libreoffice_gate(files)
        dt = time.perf_counter() - t
        one = {"single": sample[0]["reference_docx"]}
        t = time.perf_counter()
        libreoffice.libreoffice_gate(one)
        single = time.perf_counter() - t
        result["libreoffice_gate"] = {
            "batch_files": len(files), "batch_seconds": round(dt, 2),
            "files_per_second": round(len(files) / dt, 2), "single_file_seconds": round(single, 2),
            "failures": sum(1 for v in res.values() if v),
        }
    else:
        result["libreoffice_gate"] = None
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
