"""Workspace-Bench scan benchmark: prints JSON with files/s, MB/s and peak memory of the scan (listing,
hashing, magika typing, text and reference extraction, resolution, implicit edges) against
``sha256sum`` over the same files in the same run (the floor: reading and hashing every byte).

    python -m benchwright.benchmarks.workspace_scan [--source RAW | --scale full] [--workers 2] [--build]

Target: at least 0.5 of sha256sum's throughput with type detection and dependency extraction
included, under 2 GB. ``--build`` also times the whole Beam build of the same source.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from benchwright.arguments import ArgumentParser


def _workspaces(source: str) -> list:
    from benchwright.pipelines.workspace_bench_sources import open_source

    return list(open_source(source).workspaces)


def _entries(source: str) -> dict[str, list[dict]]:
    """Each workspace's listed files (by workspace name), as the scan reads them."""
    from benchwright.workspace_bench.scan import DEFAULT_LIMITS, list_workspace

    return {ws.name: [e for e in list_workspace(ws.url, DEFAULT_LIMITS)[0] if e["path"] not in ws.skip]
            for ws in _workspaces(source)}


def _scan_workspace(ws) -> tuple[int, int, int]:
    """Every step the pipeline runs on one workspace's files (list, read, hash, type, text, references,
    resolution, implicit edges), in one process: (files, bytes, edges)."""
    from benchwright.workspace_bench.deps import describe_workspace

    described = describe_workspace(ws.url, exclude=ws.skip)
    return len(described["files"]), sum(f["size"] for f in described["files"]), len(described["edges"])


def run_scan(source: str, workers: int, order: list[str]) -> dict:
    """The scan of every workspace, in ``order`` (the parent's listing puts big workspaces first, so
    the pool's last task is a small one; listing them here again would be timed twice)."""
    t0 = time.perf_counter()
    rank = {name: i for i, name in enumerate(order)}
    workspaces = sorted(_workspaces(source), key=lambda ws: (rank.get(ws.name, len(rank)), ws.name))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(_scan_workspace, workspaces))
    seconds = time.perf_counter() - t0
    files, nbytes, edges = (sum(r[i] for r in results) for i in range(3))
    return {"files": files, "bytes": nbytes, "edges": edges, "seconds": round(seconds, 2),
            "files_per_s": round(files / seconds, 1), "mb_per_s": round(nbytes / seconds / 1e6, 2), "workers": workers}


def run_sha256sum(paths: list[str]) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run(["xargs", "-0", "sha256sum"], input="\0".join(paths).encode(), stdout=subprocess.DEVNULL,
                          check=True)
    seconds = time.perf_counter() - t0
    nbytes = sum(os.path.getsize(p) for p in paths)
    return {"files": len(paths), "bytes": nbytes, "seconds": round(seconds, 2), "returncode": proc.returncode,
            "files_per_s": round(len(paths) / seconds, 1), "mb_per_s": round(nbytes / seconds / 1e6, 2)}


def _peak_mb(children: bool = False) -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF)
    return round(usage.ru_maxrss / 1024, 1)


def main(argv=None) -> int:
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", help="a Workspace-Bench source (default: write the synthetic one at --scale)")
    ap.add_argument("--scale", default="full", choices=("tiny", "default", "full"))
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--build", action="store_true", help="also time the whole Beam build")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--order", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:  # the scan in its own process, so its peak memory is its own
        scan = run_scan(args.child, args.workers, args.order.split(",") if args.order else [])
        print(json.dumps({**scan, "peak_mb": _peak_mb(), "peak_mb_workers": _peak_mb(True)}))
        return 0
    with tempfile.TemporaryDirectory(prefix="benchwright-scan-") as work:
        source, synth_s = args.source, None
        if source is None:
            from benchwright.workspace_bench.synth import write_source

            source = str(Path(work) / "raw")
            t = time.perf_counter()
            write_source(source, scale=args.scale, seed=0)
            synth_s = round(time.perf_counter() - t, 1)
        listed = _entries(source)
        paths = [e["url"] for entries in listed.values() for e in entries]
        floor = run_sha256sum(paths)
        order = sorted(listed, key=lambda name: (-len(listed[name]), name))
        child = subprocess.run([sys.executable, "-m", "benchwright.benchmarks.workspace_scan", "--child", source,
                                "--workers", str(args.workers), "--order", ",".join(order)],
                               capture_output=True, text=True, check=True)
        scan = json.loads(child.stdout.strip().splitlines()[-1])
        result = {"source": args.source or f"synthetic {args.scale}", "synth_seconds": synth_s, "sha256sum": floor,
                  "scan": scan, "throughput_vs_sha256sum": round(scan["mb_per_s"] / floor["mb_per_s"], 3),
                  "files_per_s_vs_sha256sum": round(scan["files_per_s"] / floor["files_per_s"], 3),
                  "target": ">= 0.5 of sha256sum's MB/s, peak < 2 GB"}
        if args.build:
            out = str(Path(work) / "out")
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "benchwright.cli", "build", "workspace_bench", "--source", source,
                            "--out", out, "--running-mode", "multi_processing", "--workers", str(args.workers)], check=True, capture_output=True,
                           env={**os.environ, "HF_HUB_OFFLINE": "1", "GX_ANALYTICS_ENABLED": "false"})
            result["build"] = {"seconds": round(time.perf_counter() - t, 1), "peak_mb": _peak_mb(True)}
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
