"""WildBox build speed and memory: the Beam build of a synthetic source against the plain reference.

Prints one JSON object: cuboids, beam_wall_s (the pipeline: parse -> annotate -> write), the whole
build's wall time (plus finalize, exports, card, validation), cuboids per second, peak RSS of the
whole process tree (driver and SDK workers; RSS, and PSS which counts shared library pages once), and the same for benchmarks/wildbox_reference.py,
with ratio = beam_wall_s / reference_wall_s.

    python -m benchwright.benchmarks.wildbox_build [--scale full] [--running-mode in_memory|multi_processing]
        [--workers N] [--raw DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def tree_memory_mb(pid: int) -> tuple[float, float]:
    """(RSS, PSS) of a process and all its descendants, in MB, from /proc.

    RSS counts a shared page (the Python, numpy, arrow, OpenCV libraries every worker maps) once per
    process; PSS splits it between them, so the tree's PSS is the memory the build really holds.
    """
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    rss = pss = 0
    stack = [pid]
    while stack:
        p = stack.pop()
        stack += children.get(p, [])
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            continue
    return rss / 1e3, pss / 1e3


def measured(cmd: list[str], env: dict) -> tuple[float, tuple[float, float], dict, str]:
    """(wall seconds, (peak tree RSS MB, peak tree PSS MB), peak PSS per build phase, stdout) of a
    command, sampled every 0.2 s; a phase is the build's latest "[dataset] ..." progress line."""
    t0 = time.perf_counter()
    with tempfile.NamedTemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, env=env)
        peak, phases = (0.0, 0.0), {}
        while proc.poll() is None:
            rss, pss = tree_memory_mb(proc.pid)
            peak = (max(peak[0], rss), max(peak[1], pss))
            with open(out.name) as f:
                marks = [line.split("] ", 1)[1].split(" (")[0].strip() for line in f if line.startswith("[")]
            phase = marks[-1] if marks else "start"
            phases[phase] = round(max(phases.get(phase, 0.0), pss), 1)
            time.sleep(0.2)
        wall = time.perf_counter() - t0
        out.seek(0)
        text = out.read()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed with exit code {proc.returncode}:\n{text[-2000:]}")
    return wall, peak, phases, text


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--scale", default="full", choices=["tiny", "default", "full"])
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--running-mode", default="in_memory", choices=["in_memory", "multi_processing"])
    p.add_argument("--raw", help="where the synthetic source is (written once, reused)")
    p.add_argument("--work", help="scratch folder for the outputs (default: a temporary folder)")
    args = p.parse_args(argv)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GX_ANALYTICS_ENABLED": "false"}
    raw = Path(args.raw or Path(tempfile.gettempdir()) / f"benchwright-wildbox-{args.scale}")
    t = time.perf_counter()
    if not (raw / ".complete").exists():
        from benchwright.wildbox.synth import write_wildbox_source

        shutil.rmtree(raw, ignore_errors=True)
        write_wildbox_source(raw, scale=args.scale, seed=0)
        (raw / ".complete").write_text("")
    synth_s = time.perf_counter() - t
    work = Path(args.work or tempfile.mkdtemp(prefix="benchwright-bench-"))
    shutil.rmtree(work / "beam", ignore_errors=True)
    shutil.rmtree(work / "reference", ignore_errors=True)

    beam_total, beam_peak, beam_phases, _ = measured(
        [sys.executable, "-m", "benchwright.cli", "build", "wildbox", "--source", str(raw), "--out", str(work / "beam"),
         "--running-mode", args.running_mode, "--workers", str(args.workers)], env)
    manifest = json.loads((work / "beam" / "wildbox" / "_build" / "manifest.json").read_text())
    cuboids = manifest["reconciliation"]["units"]["box"]["written"]
    beam_wall = manifest["timings"]["pipeline_s"]

    ref_wall, ref_peak, _, ref_out = measured(
        [sys.executable, "-m", "benchwright.benchmarks.wildbox_reference", str(raw), str(work / "reference")], env)
    ref = json.loads(ref_out.strip().splitlines()[-1])
    print(json.dumps({
        "scale": args.scale,
        "running_mode": args.running_mode,
        "workers": args.workers,
        "cuboids": cuboids,
        "frames": manifest["reconciliation"]["units"]["frame"]["written"],
        "synth_s": round(synth_s, 2),
        "beam_wall_s": round(beam_wall, 2),
        "beam_build_total_s": round(beam_total, 2),
        "beam_timings": manifest["timings"],
        "beam_cuboids_per_s": round(cuboids / beam_wall, 1),
        "beam_peak_rss_mb": round(beam_peak[0], 1),
        "beam_peak_pss_mb": round(beam_peak[1], 1),
        "beam_peak_pss_mb_by_phase": beam_phases,
        "reference_wall_s": ref["wall_s"],
        "reference_process_wall_s": round(ref_wall, 2),
        "reference_cuboids_per_s": round(ref["rows"]["boxes"] / ref["wall_s"], 1),
        "reference_peak_rss_mb": round(ref_peak[0], 1),
        "reference_peak_pss_mb": round(ref_peak[1], 1),
        "ratio": round(beam_wall / ref["wall_s"], 3),
        "same_rows": ref["rows"]["boxes"] == cuboids,
    }, indent=2))


if __name__ == "__main__":
    main()
