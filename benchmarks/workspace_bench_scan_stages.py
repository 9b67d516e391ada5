"""Workspace-Bench scan, stage by stage, in one process: prints JSON with the seconds each stage of
``describe_workspace`` takes on a folder of real files (by default the Python standard library's
own folder, a few thousand files nobody here wrote), magika per file against magika batched, and
``sha256sum`` over the same files.

    python -m benchwright.benchmarks.workspace_bench_scan_stages [--folder DIR] [--limit 3000] [--batch 64]
        [--exclude __pycache__ ...]

What it answers: where the scan's time goes (magika's model runs once per file; text and reference
extraction; implicit edges), and whether batching magika's model calls would pay (it reads the same
head and tail bytes; only the ONNX call is batched, through magika's internal feature extraction).
The pipeline's own end-to-end throughput against sha256sum is ``benchmarks/workspace_scan.py``.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sysconfig
import time
from pathlib import Path

from benchwright.arguments import ArgumentParser


def _magika_batched(datas: list[bytes], batch: int) -> list[str]:
    """magika's labels with one model call per ``batch`` files (its internal feature extraction and
    post-processing, as identify_paths does for paths; identify_bytes has no batch form)."""
    from magika.types import Seekable

    from benchwright.workspace_bench.scan import magika_instance

    m = magika_instance()
    labels: list[str] = []
    for start in range(0, len(datas), batch):
        chunk = datas[start:start + batch]
        results, features = {}, []
        for i, data in enumerate(chunk):
            result, feature = m._get_result_or_features_from_seekable(Seekable(io.BytesIO(data)), Path(str(i)))
            if result is not None:
                results[str(i)] = result
            else:
                features.append((Path(str(i)), feature))
        results.update(m._get_results_from_features(features))
        labels += [str(results[str(i)].prediction.output.label) for i in range(len(chunk))]
    return labels


def run(folder: Path, limit: int, batch: int, exclude: tuple[str, ...] = ()) -> dict:
    from benchwright.workspace_bench import deps, implicit, scan
    from benchwright.workspace_bench.extract_text import extract_text

    entries, problems = scan.list_workspace(str(folder))
    entries = [e for e in entries if not set(e["path"].split("/")) & set(exclude)][:limit]
    timings: dict[str, float] = {}

    def timed(name, fn):
        t = time.perf_counter()
        out = fn()
        timings[name] = round(time.perf_counter() - t, 3)
        return out

    datas = timed("read", lambda: [scan.read_entry(e) for e in entries])
    paths = [e["path"] for e in entries]
    nbytes = sum(map(len, datas))
    timed("sha256", lambda: [hashlib.sha256(d).hexdigest() for d in datas])
    scan.magika_instance()
    per_file = timed("magika_per_file", lambda: [scan.identify(d)[0] for d in datas])
    batched = timed("magika_batched", lambda: _magika_batched(datas, batch))
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
        "magika": {"per_file_files_per_s": round(len(datas) / timings["magika_per_file"], 1),
                   "batched_files_per_s": round(len(datas) / timings["magika_batched"], 1), "batch": batch,
                   "same_labels": sum(a == b for a, b in zip(per_file, batched)) == len(datas)},
        "scan": {"seconds": round(scan_total, 2), "files_per_s": round(len(datas) / scan_total, 1),
                 "mb_per_s": round(nbytes / scan_total / 1e6, 2)},
        "sha256sum": {"seconds": round(sha256sum, 2), "files_per_s": round(len(datas) / sha256sum, 1),
                      "mb_per_s": round(nbytes / sha256sum / 1e6, 2)},
        "scan_over_sha256sum": round(sha256sum / scan_total, 4),
        "cpus": os.cpu_count(),
    }


def main(argv=None) -> None:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", default=sysconfig.get_paths()["stdlib"])
    parser.add_argument("--limit", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--exclude", nargs="*", default=["__pycache__"], help="folder names left out")
    args = parser.parse_args(argv)
    print(json.dumps(run(Path(args.folder), args.limit, args.batch, tuple(args.exclude)), indent=2))


if __name__ == "__main__":
    main()
