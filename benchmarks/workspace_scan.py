"""Workspace-Bench scan benchmark: prints JSON with files/s, MB/s, CPU seconds and peak memory of the
scan (listing, hashing, magika typing, text and reference extraction, resolution, implicit edges),
spread over ``--workers`` processes file by file as the pipeline spreads it, against ``sha256sum`` over
the same files in the same run, before and after the scan (the floor: reading and hashing every byte,
one process). The load average at the start of each is in the JSON: on a shared machine only the ratios
count.

    python -m benchwright.benchmarks.workspace_scan [--source RAW | --scale full | --size-sample BYTES]
        [--workers 2] [--build]

``--size-sample 1.5e9`` scans a generated workspace with the release's size profile (about 1 MB per file,
log-normal: ``benchmarks/workspace_size_sample.py``), written under a temporary folder and deleted after.
Targets (issue 27): on the size sample, scan wall <= 2x sha256sum's; on a real folder of a few thousand
small files, >= 1,000 files/s on 2 cores. ``--build`` also times the whole Beam build of the same source.
"""
from __future__ import annotations

import argparse
import json
import os
import posixpath
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from benchwright.arguments import ArgumentParser


def _workspaces(source: str) -> list:
    from benchwright.workspace_bench.sources import open_source

    return list(open_source(source).workspaces)


def _entries(source: str) -> dict[str, list[dict]]:
    """Each workspace's listed files (by workspace name), as the scan reads them."""
    from benchwright.workspace_bench.scan import DEFAULT_LIMITS, list_workspace

    return {ws.name: [e for e in list_workspace(ws.url, DEFAULT_LIMITS)[0] if e["path"] not in ws.skip]
            for ws in _workspaces(source)}


def _describe_files(entries: list[dict]) -> list[tuple]:
    """The pipeline's ScanFiles step on a few files: (workspace, row, references) or (workspace, path, problem)."""
    from benchwright.errors import RecordError
    from benchwright.workspace_bench.deps import describe_file

    out = []
    for e in entries:
        try:
            row, refs, _ = describe_file(e)
            out.append((e["workspace"], row, refs))
        except RecordError as err:
            out.append((e["workspace"], e["path"], err.reason))
    return out


def run_scan(source: str, workers: int, chunk: int) -> dict:
    """Every step the pipeline runs on the workspaces' files, spread over ``workers`` processes file by
    file as the pipeline spreads them (a folder source is one workspace): list each workspace, then read,
    hash, type, extract text and references of every file (``deps.describe_file``, ``chunk`` files per
    task), then per workspace resolve the references against its index and infer the implicit edges."""
    from benchwright.workspace_bench import deps, implicit
    from benchwright.workspace_bench.scan import DEFAULT_LIMITS, list_workspace

    t0 = time.perf_counter()
    entries = []
    for ws in _workspaces(source):
        entries += [{**e, "workspace": ws.name} for e in list_workspace(ws.url, DEFAULT_LIMITS)[0]
                    if e["path"] not in ws.skip]
    # big files first, so that no worker is left with a big one at the end
    entries.sort(key=lambda e: (-e["size"], e["workspace"], e["path"]))
    chunks = [entries[i:i + chunk] for i in range(0, len(entries), chunk)]
    scanned: dict[str, list] = {}
    problems = 0
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for part in pool.map(_describe_files, chunks):
            for workspace, row, refs in part:
                if isinstance(row, dict):
                    scanned.setdefault(workspace, []).append((row, refs))
                else:
                    problems += 1
    edges = 0
    for workspace, described in scanned.items():
        rows = sorted((r for r, _ in described), key=lambda r: r["path"])
        index = deps.WorkspaceIndex([r["path"] for r in rows], {r["path"]: r["sha256"] for r in rows},
                                    posixpath.basename(workspace))
        edges += sum(len(deps.resolve(refs, row["path"], index)) for row, refs in described)
        edges += len(implicit.implicit_edges(rows))
    seconds = time.perf_counter() - t0
    files = sum(len(d) for d in scanned.values())
    nbytes = sum(r["size"] for d in scanned.values() for r, _ in d)
    return {"files": files, "problems": problems, "bytes": nbytes, "edges": edges, "seconds": round(seconds, 2),
            "files_per_s": round(files / seconds, 1), "mb_per_s": round(nbytes / seconds / 1e6, 2),
            "workers": workers, "chunk": chunk}


def run_sha256sum(paths: list[str]) -> dict:
    """``sha256sum`` over the files, one process (the floor: reading and hashing every byte)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(["xargs", "-0", "sha256sum"], input="\0".join(paths).encode(), stdout=subprocess.DEVNULL,
                          check=True)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    nbytes = sum(os.path.getsize(p) for p in paths)
    return {"files": len(paths), "bytes": nbytes, "seconds": round(seconds, 2), "returncode": proc.returncode,
            "cpu_seconds": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2),
            "files_per_s": round(len(paths) / seconds, 1), "mb_per_s": round(nbytes / seconds / 1e6, 2),
            "load_at_start": round(os.getloadavg()[0], 1)}


def _peak_mb(children: bool = False) -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF)
    return round(usage.ru_maxrss / 1024, 1)


def _cpu_seconds(children: bool) -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(argv=None) -> int:
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", help="a Workspace-Bench source or any folder (default: write the synthetic one at --scale)")
    ap.add_argument("--scale", default="full", choices=("tiny", "default", "full"))
    ap.add_argument("--size-sample", type=float, metavar="BYTES",
                    help="scan a generated sample of about BYTES with the release's size profile instead")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--chunk", type=int, default=16, help="files per task given to a worker")
    ap.add_argument("--build", action="store_true", help="also time the whole Beam build")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:  # the scan in its own process, so its peak memory and CPU are its own
        scan = run_scan(args.child, args.workers, args.chunk)
        print(json.dumps({**scan, "cpu_seconds": round(_cpu_seconds(False) + _cpu_seconds(True), 2),
                          "peak_mb": _peak_mb(), "peak_mb_workers": _peak_mb(True)}))
        return 0
    with tempfile.TemporaryDirectory(prefix="benchwright-scan-") as work:
        source, made = args.source, None
        if source is None and args.size_sample:
            from benchwright.benchmarks.workspace_size_sample import write_size_sample

            source = str(Path(work) / "sample")
            t = time.perf_counter()
            made = {**write_size_sample(source, int(args.size_sample)), "seconds": round(time.perf_counter() - t, 1)}
        elif source is None:
            from benchwright.workspace_bench.synth import write_source

            source = str(Path(work) / "raw")
            t = time.perf_counter()
            write_source(source, scale=args.scale, seed=0)
            made = {"scale": args.scale, "seconds": round(time.perf_counter() - t, 1)}
        listed = _entries(source)
        paths = [e["url"] for entries in listed.values() for e in entries]
        run_sha256sum(paths)  # warm the page cache: every run below reads the files from memory
        floor = run_sha256sum(paths)
        load = round(os.getloadavg()[0], 1)
        child = subprocess.run([sys.executable, "-m", "benchwright.benchmarks.workspace_scan", "--child", source,
                                "--workers", str(args.workers), "--chunk", str(args.chunk)],
                               capture_output=True, text=True, check=True)
        scan = {**json.loads(child.stdout.strip().splitlines()[-1]), "load_at_start": load}
        floor_after = run_sha256sum(paths)
        floor_wall = (floor["seconds"] + floor_after["seconds"]) / 2
        result = {"source": args.source or ("size sample" if args.size_sample else f"synthetic {args.scale}"),
                  "made": made, "sha256sum": floor, "scan": scan, "sha256sum_after": floor_after,
                  "scan_wall_over_sha256sum": round(scan["seconds"] / floor_wall, 2),
                  "scan_cpu_over_sha256sum": round(scan["cpu_seconds"] / max(0.01, (floor["cpu_seconds"]
                                                                                   + floor_after["cpu_seconds"]) / 2), 2),
                  "files_per_cpu_second": round(scan["files"] / max(0.01, scan["cpu_seconds"]), 1),
                  "targets": {"size sample": "scan wall <= 2x sha256sum", "small-file folder": ">= 1,000 files/s on 2 cores"}}
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
