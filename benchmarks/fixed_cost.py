"""The fixed cost of a build: CPU seconds of tiny builds, which are almost all start-up, not data.

Most tests build a dataset from its tiny synthetic source, in a pytest worker that has built others before
(or through the command line, in a fresh process). Per dataset, in a process of its own, this prints the
CPU seconds (``resource.getrusage``: the process and the children it waited for, the build's forked
children among them) of the first build in the process (``first_cpu_s``: imports and every first-use cost)
and of a second build of the same source in the same process (``second_cpu_s``: what a later build in a
test worker costs), and their wall seconds; the source is written first (``benchwright synth --scale tiny``),
outside the timed builds.

    python -m benchwright.benchmarks.fixed_cost [--datasets wildbox,wordeval,...] [--work DIR] [--profile FILE]

``--profile FILE`` (one dataset): also writes a cProfile of both builds (FILE.1, FILE.2), to read with pstats.
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchwright.arguments import ArgumentParser

DATASETS = ("wildbox", "wordeval", "workspace_bench", "vlm_unlearning")
ENV = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "GX_ANALYTICS_ENABLED": "false"}


def cpu_s() -> float:
    """CPU seconds so far of this process and the children it waited for (user + system)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure_builds(name: str, source: str, work: Path, profile: str | None) -> dict:
    """In this process: build ``name`` from ``source`` twice (each into a fresh output), each timed."""
    start_cpu, start_wall = cpu_s(), time.perf_counter()
    from benchwright import registry
    from benchwright.build import build
    from benchwright.options import BuildOptions

    figures = {"import_cpu_s": round(cpu_s() - start_cpu, 3)}
    for run in (1, 2):
        cpu, wall = cpu_s(), time.perf_counter()
        options = BuildOptions(out=str(work / f"out{run}"), progress=False)
        if profile:
            import cProfile

            with cProfile.Profile() as prof:
                build(registry.get(name), source, options)
            prof.dump_stats(f"{profile}.{run}")
        else:
            build(registry.get(name), source, options)
        key = "first" if run == 1 else "second"
        figures[f"{key}_cpu_s"] = round(cpu_s() - cpu, 3)
        figures[f"{key}_wall_s"] = round(time.perf_counter() - wall, 3)
    figures["process_cpu_s"] = round(cpu_s() - start_cpu, 3)
    figures["process_wall_s"] = round(time.perf_counter() - start_wall, 3)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="benchwright.benchmarks.fixed_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated (default: all four)")
    parser.add_argument("--work", help="the folder for the sources and builds (default: a temporary one, removed)")
    parser.add_argument("--profile", help="one dataset: write cProfile stats of each build to PROFILE.1, PROFILE.2")
    parser.add_argument("--one", nargs=2, metavar=("DATASET", "SOURCE"), help="(internal) measure in this process")
    args = parser.parse_args(argv)
    if args.one:
        work = Path(args.work)
        print(json.dumps(measure_builds(args.one[0], args.one[1], work, args.profile)))
        return 0
    names = [n for n in args.datasets.split(",") if n]
    if args.profile and len(names) != 1:
        parser.error("--profile takes one dataset")
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="benchwright-fixed-cost-"))
    env = {**os.environ, **ENV}
    results = {}
    try:
        for name in names:
            source = work / name / "raw"
            if not source.exists():
                subprocess.run([sys.executable, "-m", "benchwright.cli", "synth", name, "--scale", "tiny",
                                "--out", str(source)], check=True, env=env, stdout=subprocess.DEVNULL)
            runs = work / name / "runs"
            shutil.rmtree(runs, ignore_errors=True)
            runs.mkdir(parents=True)
            command = [sys.executable, "-m", "benchwright.benchmarks.fixed_cost", "--one", name, str(source),
                       "--work", str(runs)] + (["--profile", args.profile] if args.profile else [])
            done = subprocess.run(command, check=True, env=env, capture_output=True, text=True)
            results[name] = json.loads(done.stdout.strip().splitlines()[-1])
            shutil.rmtree(runs, ignore_errors=True)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    results["total"] = {k: round(sum(r[k] for r in results.values()), 3)
                        for k in ("first_cpu_s", "second_cpu_s", "process_cpu_s")}
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
