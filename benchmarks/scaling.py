"""How a build's cost grows with its input: synth then build, per dataset and scale; prints one JSON object.

    python -m benchwright.benchmarks.scaling [--datasets wildbox,wordeval,...] [--scales tiny,default,full]
        [--work DIR] [--keep] [--table FILE]

For each dataset and scale, one after the other, each in its own process so its time and memory are
its own: ``benchwright synth <ds> --scale S`` then ``benchwright build <ds>`` from that source into a
fresh output. Per run: wall time of each; peak memory of the build as ``ru_maxrss`` of its process
(from ``wait4``: the largest single process among it and the children it waited for) and as the
peak PSS of its whole process tree sampled every 0.2 s (the same as the RSS figure on the default
in-process runner; with ``--running-mode multi_processing`` the Beam workers are separate processes
and only the tree's PSS adds them up); the output's size on disk (each file once, hard links once)
and file count; the rows of every reconciled unit, the primary one named; the build's own phase
timings from its manifest; and the load average when the run started (the machine may be shared).
``--table FILE`` also writes the Markdown table docs/SCALING.md shows. ``--graph-spreads 4,64,800``
counts each source's Dask graph for clusters of those sizes (2 partitions per worker thread), without
running it: what the scheduler would hold.

``--runners in_memory,dask:1,dask:2`` builds each source once per runner, side by side: the default
in-process runner, and Beam's Dask runner (benchwright.runners.dask) on a cluster of N worker processes
this machine starts for the build (``--runner dask --dask-local N``). Per build also: the pipeline's
wall time (the manifest's ``pipeline_s``) and CPU seconds (``pipeline_cpu_s``: of the build's whole
process tree, sampled at the pipeline's start and end; the source's fingerprint, computed by a forked
child meanwhile, among them); the CPU seconds of every process of the build (``wait4``:
the driver and the children it waited for, the cluster's workers among them); the workers' own CPU
seconds and peak PSS (the processes the cluster spawned, with their children, sampled every 0.2 s);
the driver's peak PSS (the rest of the tree); and whether every published file but the manifest and
the validation report is byte-identical to the first runner's build (``identical_to_first``).
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchwright import registry
from benchwright.arguments import ArgumentParser
from benchwright.benchmarks.wildbox_build import descendants, process_table, tree_memory_mb

REPO = Path(__file__).resolve().parents[1]
SCALES = ("tiny", "default", "full")
# a dask worker process (LocalCluster spawns its workers through multiprocessing)
WORKER_MARK = b"multiprocessing.spawn"


def cluster_usage(pid: int, cpu: dict[int, float], table) -> float:
    """The PSS (MB) of the dask worker processes below ``pid`` and their children; records each one's
    CPU seconds so far in ``cpu`` (by pid: its latest reading is its total when it ends). ``table``:
    ``process_table()``'s."""
    children, stats = table
    workers = []
    for child in children.get(pid, []):
        try:
            with open(f"/proc/{child}/cmdline", "rb") as f:
                if WORKER_MARK in f.read():
                    workers.append(child)
        except OSError:
            continue
    pss = 0.0
    for worker in workers:
        pss += tree_memory_mb(worker, children)[1]
        for p in descendants(worker, children):
            if p in stats:
                cpu[p] = (int(stats[p][11]) + int(stats[p][12])) / os.sysconf("SC_CLK_TCK")
    return pss


def tree_cpu_s(pid: int, table) -> float:
    """CPU seconds so far of a process and all its descendants (with the children each has reaped);
    ``table``: ``process_table()``'s."""
    children, stats = table
    return sum(sum(int(x) for x in stats[p][11:15]) for p in descendants(pid, children) if p in stats
               ) / os.sysconf("SC_CLK_TCK")


def run_measured(cmd: list[str], env: dict) -> dict:
    """Wall seconds, ru_maxrss (MB), CPU seconds of the command and the children it waited for, the
    sampled peak tree PSS (MB), and that peak per build phase (the build's latest "[dataset] <phase> ..."
    progress line: running (making the pipeline), pipeline (running it), finalizing, validating,
    rendering, published) of a command, and the CPU seconds of its process tree by the end of each
    phase (so the pipeline's own: pipeline's less start's); with dask workers among its children, their peak PSS and CPU seconds, and the rest's (the
    driver's) peak PSS; raises on failure."""
    t0 = time.perf_counter()
    with tempfile.NamedTemporaryFile("w+") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        peak_pss, phases, cpu_by_phase = 0.0, {}, {}
        peak_driver = peak_cluster = 0.0
        cluster_cpu: dict[int, float] = {}
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            table = process_table()  # one read of /proc per sample
            pss = tree_memory_mb(proc.pid, table[0])[1]
            workers = cluster_usage(proc.pid, cluster_cpu, table)
            peak_pss = max(peak_pss, pss)
            peak_cluster = max(peak_cluster, workers)
            peak_driver = max(peak_driver, pss - workers)
            with open(log.name) as f:  # its own file offset: the child writes through the other
                marks = [line.split("] ", 1)[1].split()[0] for line in f if line.startswith("[") and "] " in line]
            phase = marks[-1] if marks else "start"
            phases[phase] = round(max(phases.get(phase, 0.0), pss), 1)
            cpu_by_phase[phase] = round(tree_cpu_s(proc.pid, table), 1)  # the latest: the phase's end
            time.sleep(0.2)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here (wait4 gives its rusage)
        if proc.returncode != 0:
            log.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed with exit code {proc.returncode}:\n{log.read()[-3000:]}")
    return {"wall_s": round(wall, 2), "maxrss_mb": round(usage.ru_maxrss / 1024, 1),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
            "peak_tree_pss_mb": round(peak_pss, 1), "peak_tree_pss_mb_by_phase": phases,
            "tree_cpu_s_by_phase_end": cpu_by_phase,
            # "running the pipeline" is printed before the graph is made, then the "pipeline" phase's lines
            "pipeline_cpu_s": round(cpu_by_phase.get("pipeline", cpu_by_phase.get("running", 0.0))
                                    - cpu_by_phase.get("start", 0.0), 1),
            "peak_driver_pss_mb": round(peak_driver, 1), "peak_cluster_pss_mb": round(peak_cluster, 1),
            "cluster_cpu_s": round(sum(cluster_cpu.values()), 1)}


def published_hashes(root: Path) -> dict[str, str]:
    """sha256 of every published file but the manifest and the validation report (they describe the run)."""
    out = {}
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = f.relative_to(root).as_posix()
        if rel != "_build/manifest.json" and not rel.startswith("_build/validation/"):
            out[rel] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out


def runner_args(runner: str) -> list[str]:
    """``in_memory`` (the default runner) or ``dask:N`` (a local cluster of N worker processes)."""
    if runner == "in_memory":
        return []
    kind, _, workers = runner.partition(":")
    if kind != "dask" or not workers.isdigit():
        raise SystemExit(f"--runners: {runner!r} is neither in_memory nor dask:N")
    return ["--runner", "dask", "--dask-local", workers]


def disk_usage(root: Path) -> tuple[int, int]:
    """(bytes, files) under ``root``, each inode once (exports hard-link images)."""
    seen, total = set(), 0
    for path in root.rglob("*"):
        st = path.lstat()
        if path.is_file() and (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            total += st.st_size
    return total, len(seen)


def graph_tasks(dataset: str, source: Path, spreads: list[int]) -> dict[int, int]:
    """How many tasks the dataset's pipeline over ``source`` is on the Dask runner, per Reshuffle spread
    (2 partitions per worker thread: 4 is 2 workers of 1 thread, 800 is 100 workers of 4), counted on
    the translated graph without running it (``benchwright.runners.dask.graph_tasks``)."""
    import apache_beam as beam

    from benchwright.build import build_pipeline
    from benchwright.runners import dask as guard

    counts = {}
    with tempfile.TemporaryDirectory() as staging:
        for spread in spreads:
            pipeline = beam.Pipeline(runner=guard.DaskRunner())
            counts[spread] = guard.graph_tasks(build_pipeline(registry.get(dataset), str(source), staging, None,
                                                              pipeline), spread)
            shutil.rmtree(pipeline.local_tempdir, ignore_errors=True)  # made for a run that never comes
    return counts


def measure(dataset: str, scale: str, work: Path, env: dict, runners=("in_memory",),
            spreads: list[int] = ()) -> list[dict]:
    """Synth once, then one build per runner, side by side; one result per build. ``spreads``: also
    count the source's Dask graph for each (``graph_tasks``)."""
    raw = work / f"{dataset}-{scale}-raw"
    outs = [work / f"{dataset}-{scale}-out-{runner.replace(':', '')}" for runner in runners]
    for path in (raw, *outs):
        shutil.rmtree(path, ignore_errors=True)
    cli = [sys.executable, "-m", "benchwright.cli"]
    load = os.getloadavg()
    synth = run_measured(cli + ["synth", dataset, "--out", str(raw), "--scale", scale], env)
    source_bytes, source_files = disk_usage(raw)
    tasks = graph_tasks(dataset, raw, list(spreads)) if spreads else {}
    results, first = [], None
    for runner, out in zip(runners, outs):
        load = os.getloadavg() if results else load
        build = run_measured(cli + ["build", dataset, "--source", str(raw), "--out", str(out), *runner_args(runner)],
                             env)
        root = out / dataset
        manifest = json.loads((root / "_build" / "manifest.json").read_text())
        ds = registry.get(dataset)
        primary = next(u.name for u in ds.units if u.primary)
        units = {u: e["written"] for u, e in manifest["reconciliation"]["units"].items()}
        output_bytes, output_files = disk_usage(root)
        hashes = published_hashes(root)
        first = first or hashes
        results.append({
            "dataset": dataset, "scale": scale, "runner": runner, "load_avg_at_start": [round(x, 2) for x in load],
            "synth_s": synth["wall_s"], "synth_maxrss_mb": synth["maxrss_mb"],
            "source_bytes": source_bytes, "source_files": source_files,
            "build_s": build["wall_s"], "build_maxrss_mb": build["maxrss_mb"], "build_cpu_s": build["cpu_s"],
            "build_peak_tree_pss_mb": build["peak_tree_pss_mb"],
            "build_peak_tree_pss_mb_by_phase": build["peak_tree_pss_mb_by_phase"],
            "build_cpu_s_by_phase_end": build["tree_cpu_s_by_phase_end"], "pipeline_cpu_s": build["pipeline_cpu_s"],
            "driver_peak_pss_mb": build["peak_driver_pss_mb"], "cluster_peak_pss_mb": build["peak_cluster_pss_mb"],
            "cluster_cpu_s": build["cluster_cpu_s"], "pipeline_s": manifest["timings"]["pipeline_s"],
            "output_bytes": output_bytes, "output_files": output_files,
            "primary_unit": primary, "primary_records": units[primary], "units_written": units,
            "build_timings_s": manifest["timings"], "identical_to_first": hashes == first,
            "execution": manifest.get("execution"), "dask_graph_tasks_by_spread": tasks,
        })
    return results


def markdown(result: dict) -> str:
    head = ("| dataset | scale | primary records | synth | build | build peak (ru_maxrss) | output on disk | "
            "load at start |\n|---|---|---:|---:|---:|---:|---:|---:|")
    rows = [f"| {r['dataset']} | {r['scale']} | {r['primary_records']:,} ({r['primary_unit']}) | {r['synth_s']:.1f} s | "
            f"{r['build_s']:.1f} s | {r['build_maxrss_mb']:,.0f} MB | {r['output_bytes'] / 1e6:,.1f} MB "
            f"({r['output_files']:,} files) | {r['load_avg_at_start'][0]:.1f} |" for r in result["runs"]]
    return "\n".join([head, *rows]) + "\n"


def markdown_runners(result: dict) -> str:
    """The side-by-side table of the runners (docs/SCALING.md)."""
    head = ("| dataset | scale | runner | pipeline | pipeline CPU | build | CPU, all processes | of which the workers | "
            "driver peak PSS | workers' peak PSS | identical to in_memory | load at start |\n"
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    rows = [f"| {r['dataset']} | {r['scale']} | {r['runner']} | {r['pipeline_s']:.1f} s | {r['pipeline_cpu_s']:.1f} s | "
            f"{r['build_s']:.1f} s | "
            f"{r['build_cpu_s']:.1f} s | {r['cluster_cpu_s']:.1f} s | {r['driver_peak_pss_mb']:,.0f} MB | "
            f"{r['cluster_peak_pss_mb']:,.0f} MB | {'yes' if r['identical_to_first'] else 'NO'} | "
            f"{r['load_avg_at_start'][0]:.1f} |" for r in result["runs"]]
    return "\n".join([head, *rows]) + "\n"


def _commit() -> str:
    def git(*args):
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + (" (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else "")


def main(argv=None) -> None:
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", default=",".join(registry.published()), help="comma-separated (default: every published dataset)")
    p.add_argument("--scales", default="tiny,default", help=f"comma-separated, of {', '.join(SCALES)}")
    p.add_argument("--work", help="where sources and outputs go (default: a temporary folder, removed)")
    p.add_argument("--keep", action="store_true", help="keep each run's source and output (default: removed after it)")
    p.add_argument("--table", help="also write the Markdown table here")
    p.add_argument("--runners", default="in_memory",
                   help="comma-separated: in_memory (the default runner) and dask:N (Beam's Dask runner on a local "
                        "cluster of N worker processes); each source is built once per runner")
    p.add_argument("--graph-spreads", default="",
                   help="comma-separated partition counts (2 per worker thread): also count each source's Dask "
                        "graph's tasks for a cluster of that size, without running it")
    args = p.parse_args(argv)
    datasets = [d for d in args.datasets.split(",") if d]
    scales = [s for s in args.scales.split(",") if s]
    runners = [r for r in args.runners.split(",") if r]
    for runner in runners:
        runner_args(runner)  # a wrong one fails before anything runs
    for d in datasets:
        registry.get(d)  # an unknown name fails before anything runs
    if bad := sorted(set(scales) - set(SCALES)):
        p.error(f"unknown scales {bad}; of {', '.join(SCALES)}")
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", GX_ANALYTICS_ENABLED="false")
    work = Path(args.work or tempfile.mkdtemp(prefix="benchwright-scaling-"))
    work.mkdir(parents=True, exist_ok=True)
    result = {"date": datetime.date.today().isoformat(), "commit": _commit(), "cpus": os.cpu_count(),
              "load_avg_at_start": [round(x, 2) for x in os.getloadavg()], "runs": []}
    try:
        for dataset in datasets:
            for scale in scales:
                spreads = [int(n) for n in args.graph_spreads.split(",") if n]
                for run in measure(dataset, scale, work, env, runners, spreads):
                    result["runs"].append(run)
                    print(f"{dataset} {scale} {run['runner']}: synth {run['synth_s']} s, build {run['build_s']} s "
                          f"(pipeline {run['pipeline_s']} s), {run['build_maxrss_mb']} MB, identical: "
                          f"{run['identical_to_first']}", file=sys.stderr, flush=True)
                if not args.keep:
                    for path in work.glob(f"{dataset}-{scale}-*"):
                        shutil.rmtree(path, ignore_errors=True)
    finally:
        if not args.work and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.table:
        Path(args.table).write_text(markdown(result) + ("\n" + markdown_runners(result) if runners != ["in_memory"]
                                                        else ""), encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
