"""Workspace-Bench scan, stage by stage, in one process: prints JSON with the seconds each stage of
``describe_workspace`` takes on a folder of real files (by default the Python standard library's
own folder, a few thousand files nobody here wrote), magika per file against its batched Python entry
point and its Rust command-line client, and ``sha256sum`` over the same files.

    python -m benchwright.benchmarks.workspace_bench_scan_stages [--folder DIR] [--limit 3000]
        [--exclude __pycache__ ...]

What it answers: where the scan's time goes (magika's model runs once per file; text and reference
extraction; implicit edges), and whether batching magika's model calls would pay: its CPU per file and
whether the labels and the published (float32) scores stay those of one call per file. Each stage's
CPU seconds are given beside its wall seconds (``<stage>_cpu``): on a shared machine read those.
The pipeline's own end-to-end throughput against sha256sum is ``benchmarks/workspace_scan.py``.
"""
from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from benchwright.arguments import ArgumentParser


def magika_compare(urls: list[str], per_file: list[tuple]) -> dict:
    """magika three ways over the same files: one ``identify_bytes`` call per file (what the scan does),
    its Python batch entry point (``identify_paths``: one ONNX call per 1,000 files) and the Rust
    command-line client its wheel ships (``magika --jsonl``: batched, threaded). CPU seconds (the
    machine is shared: wall times are noise) and how many labels and published scores (float32) equal
    the per-file call's."""
    import numpy as np

    from benchwright.workspace_bench.scan import magika_instance

    def agreement(results: list[tuple]) -> dict:
        return {"same_labels": int(sum(a[0] == b[0] for a, b in zip(per_file, results))),
                "same_float32_scores": int(sum(np.float32(a[1]) == np.float32(b[1]) for a, b in zip(per_file, results)))}

    t = time.process_time()
    batched = [(str(r.prediction.output.label), float(r.prediction.score))
               for r in magika_instance().identify_paths(urls)]
    batched_cpu = time.process_time() - t
    rust = Path(sys.executable).with_name("magika")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([str(rust), "--jsonl", *urls], capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rust_cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    lines = [json.loads(line)["result"]["value"] for line in proc.stdout.splitlines()]
    rust_results = [(v["output"]["label"], v["score"]) for v in lines]
    return {"files": len(urls),
            "python_batched": {"cpu_seconds": round(batched_cpu, 2), **agreement(batched)},
            "rust_cli": {"cpu_seconds": round(rust_cpu, 2), "version": subprocess.run(
                [str(rust), "--version"], capture_output=True, text=True).stdout.strip(), **agreement(rust_results)}}


def run(folder: Path, limit: int, exclude: tuple[str, ...] = ()) -> dict:
    from benchwright.workspace_bench import deps, implicit, scan
    from benchwright.workspace_bench.extract_text import extract_text

    entries, problems = scan.list_workspace(str(folder))
    entries = [e for e in entries if not set(e["path"].split("/")) & set(exclude)][:limit]
    timings: dict[str, float] = {}

    def timed(name, fn):
        t, cpu = time.perf_counter(), time.process_time()
        out = fn()
        timings[name] = round(time.perf_counter() - t, 3)
        timings[name + "_cpu"] = round(time.process_time() - cpu, 3)
        return out

    datas = timed("read", lambda: [scan.read_entry(e) for e in entries])
    paths = [e["path"] for e in entries]
    nbytes = sum(map(len, datas))
    timed("sha256", lambda: [hashlib.sha256(d).hexdigest() for d in datas])
    scan.magika_instance()
    per_file = timed("magika_per_file", lambda: [scan.identify(d)[:2] for d in datas])
    compared = magika_compare([e["url"] for e in entries], per_file)
    types = [scan.decide_file_type(*scan.identify(d)[0::2], scan.extension_of(p)) for d, p in zip(datas, paths)]
    timed("text", lambda: [extract_text(d, t, scan.is_text_type(t), p) for d, (t, _), p in zip(datas, types, paths)])

    def references():
        index = deps.WorkspaceIndex(paths)
        edges = 0
        for d, (t, _), p in zip(datas, types, paths):
            try:
                edges += len(deps.resolve(deps.extract_references(p, d, t), p, index))
            except Exception:  # noqa: BLE001 - an unparsable file: the pipeline records it, here it is skipped
                pass
        return edges

    edges = timed("references_and_resolution", references)
    rows = timed("scan_file", lambda: [scan.scan_file(d, p) for d, p in zip(datas, paths)])
    implicit_count = len(timed("implicit_edges", lambda: implicit.implicit_edges(rows)))
    scan_total = timings["read"] + timings["scan_file"] + timings["references_and_resolution"] + timings["implicit_edges"]

    t = time.perf_counter()
    subprocess.run(["xargs", "-0", "sha256sum"], input="\0".join(e["url"] for e in entries).encode(),
                   stdout=subprocess.DEVNULL, check=True)
    sha256sum = time.perf_counter() - t
    return {
        "folder": str(folder), "files": len(entries), "bytes": nbytes, "listing_problems": len(problems),
        "explicit_edges": edges, "implicit_edges": implicit_count, "stage_seconds": timings,
        "magika": {"per_file_cpu_seconds": timings["magika_per_file_cpu"], **compared},
        "scan": {"seconds": round(scan_total, 2), "files_per_s": round(len(datas) / scan_total, 1),
                 "mb_per_s": round(nbytes / scan_total / 1e6, 2)},
        "sha256sum": {"seconds": round(sha256sum, 2), "files_per_s": round(len(datas) / sha256sum, 1),
                      "mb_per_s": round(nbytes / sha256sum / 1e6, 2)},
        "scan_over_sha256sum": round(scan_total / sha256sum, 2),
        "cpus": os.cpu_count(),
    }


def main(argv=None) -> None:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", default=sysconfig.get_paths()["stdlib"])
    parser.add_argument("--limit", type=int, default=3000)
    parser.add_argument("--exclude", nargs="*", default=["__pycache__"], help="folder names left out")
    args = parser.parse_args(argv)
    print(json.dumps(run(Path(args.folder), args.limit, tuple(args.exclude)), indent=2))


if __name__ == "__main__":
    main()
