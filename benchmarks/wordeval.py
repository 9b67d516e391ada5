"""WordEval benchmark: prints JSON with build throughput, evaluator latency and LibreOffice throughput.

    python -m benchwright.benchmarks.wordeval [--eval-sample 200] [--lo-sample 20] [--no-libreoffice]

Targets: building all cases < 60 s without LibreOffice; evaluator < 100 ms per case.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--eval-sample", type=int, default=200)
    ap.add_argument("--lo-sample", type=int, default=20)
    ap.add_argument("--no-libreoffice", action="store_true")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    from benchwright.evaluation import wordeval as ev
    from benchwright.ooxml import gate_docx
    from benchwright.ooxml import libreoffice
    from benchwright.wordeval.build import iter_cases, iter_compositions
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
