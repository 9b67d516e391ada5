"""VLM unlearning build benchmark: prints one JSON object.

    python -m benchwright.benchmarks.vlm_unlearning [--examples 3000] [--routing-scores FILE]

Writes a VLGuard-shaped source of ``--examples`` examples (the embedded default's photographs),
then, each in its own process so peak memory is its own: the real build (``benchwright build``:
pipeline, card, validation) and the floor, a plain single-process loop doing the same per-record
work with the same functions (parse, image check, the three views and their typographic renders,
the one routing score step, the routing rows) and writing the same rows to Parquet, images embedded.
Target: the pipeline within 1.5x of the floor, and the build under 60 s on the 2-core machine.
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
from pathlib import Path

from benchwright.arguments import ArgumentParser


def _peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run_build(source: str, out: str, scores: str | None) -> dict:
    from benchwright import registry
    from benchwright.build import build
    from benchwright.options import BuildOptions

    beam_args = ["--routing-scores", scores] if scores else []
    t = time.perf_counter()
    root = Path(build(registry.get("vlm_unlearning"), source, BuildOptions(out=out, progress=False,
                                                                          beam_args=beam_args)))
    total = time.perf_counter() - t
    manifest = json.loads((root / "_build" / "manifest.json").read_text())
    rows = manifest["reconciliation"]["rows"]
    return {"build_s": round(total, 2), "pipeline_s": manifest["timings"]["pipeline_s"],
            "card_s": manifest["timings"]["card_s"], "finalize_s": manifest["timings"]["finalize_s"],
            "view_rows": sum(sum(rows[v].values()) for v in ("multimodal", "text_only", "image_only")),
            "all_rows": sum(sum(s.values()) for s in rows.values()),
            "bytes": sum(f["bytes"] for f in manifest["files"] if f["path"].endswith(".parquet")),
            "peak_rss_mb": _peak_mb()}


def run_floor(source: str, out: str, scores: str | None) -> dict:
    """The same rows, one process, no Beam: each config sorted by id into one Parquet file."""
    from datasets.table import embed_table_storage

    from benchwright.pipelines import vlm_unlearning as pipe
    from benchwright.pipelines import vlm_unlearning_sources as sources
    from benchwright.schemas import vlm_unlearning as schema
    from benchwright.stage import Read, Reject
    from benchwright.vlm_unlearning.records import SourceRecord
    from benchwright.writer import write_parquet

    t = time.perf_counter()
    fmt, raw, mapping = sources.list_records(source)
    records = {}
    for element in raw:
        for item in sources.parse_record(element, source, fmt, mapping):
            if isinstance(item, SourceRecord):
                records.setdefault(item.record_key, []).append(item)
    out_rows = {c: [] for c in schema.CONFIGS}
    score_inputs, route_inputs = [], []
    for key in sorted(records):
        for record in pipe.deduplicate((key, records[key])):
            if isinstance(record, (Reject, Read)):
                continue
            for built in pipe.build_views(record):
                if isinstance(built, Reject):
                    continue
                for config in ("records", *schema.VIEWS):
                    out_rows[config] += built[config]
                score_inputs += built["score"]
                route_inputs += built["route"]
    plan = pipe.score_examples(score_inputs, scores)
    for pair in route_inputs:
        for config, row in pipe.route_example(pair, plan):
            out_rows[config].append(row)
    n = 0
    for config, rows in out_rows.items():
        id_column = schema.ID_COLUMNS[config]
        rows.sort(key=lambda r: r[id_column])
        table = embed_table_storage(pipe._table(rows, config).select(list(schema.CONFIGS[config])))
        write_parquet(table, os.path.join(out, config, "all.parquet"))
        n += len(rows)
    total = time.perf_counter() - t
    return {"floor_s": round(total, 2), "all_rows": n, "peak_rss_mb": _peak_mb()}


def main(argv=None) -> int:
    p = ArgumentParser(description=__doc__)
    p.add_argument("--examples", type=int, default=3000)
    p.add_argument("--routing-scores", default=None, help="a score file instead of the built-in scorer")
    p.add_argument("--part", choices=["build", "floor"], help=argparse.SUPPRESS)
    p.add_argument("--source", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.part:
        result = (run_build if args.part == "build" else run_floor)(args.source, args.out, args.routing_scores)
        print(json.dumps(result))
        return 0
    from benchwright.vlm_unlearning.synth import write_source

    with tempfile.TemporaryDirectory(prefix="bench-vlm-") as work:
        t = time.perf_counter()
        summary = write_source(Path(work) / "raw", scale="full", examples=args.examples)
        synth_s = round(time.perf_counter() - t, 2)
        parts = {}
        for part in ("floor", "build"):
            cmd = [sys.executable, "-m", "benchwright.benchmarks.vlm_unlearning", "--part", part,
                   "--source", str(Path(work) / "raw"), "--out", str(Path(work) / part)]
            if args.routing_scores:
                cmd += ["--routing-scores", args.routing_scores]
            done = subprocess.run(cmd, capture_output=True, text=True,
                                  env={**os.environ, "GX_ANALYTICS_ENABLED": "false", "HF_HUB_OFFLINE": "1",
                                       "HF_DATASETS_OFFLINE": "1"})
            if done.returncode:
                sys.stderr.write(done.stderr[-3000:])
                return done.returncode
            parts[part] = json.loads(done.stdout.strip().splitlines()[-1])
    build, floor = parts["build"], parts["floor"]
    result = {
        "examples": summary["examples"], "records": summary["records"], "synth_s": synth_s,
        "view_rows": build["view_rows"], "all_rows": build["all_rows"], "parquet_bytes": build["bytes"],
        "build": build, "floor": floor,
        "pipeline_rows_per_s": round(build["all_rows"] / build["pipeline_s"], 1),
        "floor_rows_per_s": round(floor["all_rows"] / floor["floor_s"], 1),
        "pipeline_over_floor": round(build["pipeline_s"] / floor["floor_s"], 3),
        "targets": {"pipeline_within_1.5x_floor": build["pipeline_s"] <= 1.5 * floor["floor_s"],
                    "build_under_60s": build["build_s"] < 60},
        "same_rows": build["all_rows"] == floor["all_rows"],
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
