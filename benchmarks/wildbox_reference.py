"""The WildBox transformation without Beam: one process, the same parsers and numpy batches, pyarrow out.

The yardstick for the Beam build (benchmarks/wildbox_build.py): it lists the source, parses and
annotates each segment with the pipeline's own functions, then shards, sorts and writes Parquet
exactly as the dataset writer does. What is left between the two is Beam's overhead.

    python -m benchwright.benchmarks.wildbox_reference SOURCE OUT
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def run(source: str, out: str) -> dict:
    from benchwright.stage import Read, Reject
    from benchwright.writer import num_shards_for, shard_file_name, stable_hashes, write_parquet
    from benchwright.pipelines.wildbox import DATASET
    from benchwright.splits import assign, majority, split_of
    from benchwright.wildbox.stages import annotate_segment
    from benchwright.wildbox.sources import discover, parse_unit
    from benchwright.errors import RecordError

    t0 = time.perf_counter()
    fmt, units = discover(source)
    segments, rejects = [], 0
    for unit in units:
        try:
            for item in parse_unit(source, fmt, unit):
                if isinstance(item, Reject):
                    rejects += 1
                else:
                    segments.append(item)
        except RecordError:
            rejects += 1
    videos = {}
    for seg in segments:
        videos.setdefault(seg.video_id, []).append(seg.species)
    rule = DATASET.split_rule
    splits = assign({v: majority(s) for v, s in videos.items() if majority(s)}, rule)
    tables = {cfg: [] for cfg in DATASET.configs}
    for seg in segments:
        for item in annotate_segment(seg, split_of(splits, seg.video_id, rule)):
            if isinstance(item, Reject):
                rejects += 1
            elif not isinstance(item, Read):  # Read: the counters' business, not the tables'
                for cfg, table in item.items():
                    tables[cfg].append(table)
    rows = {}
    for cfg, parts in tables.items():
        table = pa.concat_tables(parts)
        id_col = DATASET.id_columns[cfg]
        for split in sorted(set(table["split"].to_pylist())):
            part = table.filter(pc.equal(table["split"], split))
            n = num_shards_for(part.nbytes)
            shard = stable_hashes(part[id_col].to_pylist()) % np.uint64(n)
            for s in range(n):
                piece = part.take(pa.array(np.flatnonzero(shard == s)))
                piece = piece.take(pc.sort_indices(piece, sort_keys=[(id_col, "ascending")]))
                write_parquet(piece, str(Path(out) / shard_file_name(cfg, split, s, n)))
        rows[cfg] = table.num_rows
    return {"wall_s": round(time.perf_counter() - t0, 3), "rows": rows, "rejects": rejects}


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], sys.argv[2])))
