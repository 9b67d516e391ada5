"""Transforms every dataset pipeline shares: quarantining stages, the dataset writer, the quarantine writer.

A stage is a generator function ``fn(element)`` that yields records, ``Reject`` rows for sub-records
it refuses, or raises ``RecordError`` for the whole element. ``Stage`` turns both kinds of failure
into quarantine (or filtered) rows and counts everything, so finalize can reconcile
``read == written + quarantined + filtered`` per unit.

The writer takes ``pyarrow.Table`` batches already in a config's arrow schema (hot work stays
columnar), shards rows by a stable hash of their id, sorts each shard by id and writes Parquet with
fixed settings, so output bytes do not depend on the runner or the worker count.
"""
from __future__ import annotations

import dataclasses
import json
import math
import posixpath
from typing import Any, Callable, Iterable

import apache_beam as beam
import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from apache_beam.metrics import Metrics
from datasets.table import embed_table_storage

from benchwright.errors import RecordError
from benchwright.hashing import stable_hash64

QUARANTINE = "quarantine"
FILTERED = "filtered"
METRICS_NAMESPACE = "benchwright"

# Parquet settings are part of the output's identity: change them and every sha256 changes.
PARQUET_OPTIONS = dict(
    compression="zstd",
    compression_level=3,
    use_dictionary=True,
    write_statistics=True,
    data_page_size=1 << 20,
    row_group_size=10_000,
)
TARGET_SHARD_BYTES = 128 << 20


@dataclasses.dataclass(frozen=True)
class Reject:
    """A sub-record a stage refuses: ``kind`` is quarantine (bad input) or filtered (a rule, with reason)."""

    unit: str  # what was lost: "segment", "frame", "box", ...
    locator: str
    reason: str
    kind: str = QUARANTINE
    count: int = 1  # how many units this row stands for


def counter(name: str):
    return Metrics.counter(METRICS_NAMESPACE, name)


def read_counter(unit: str):
    """Counts units read from the source; finalize reconciles it against written + rejected."""
    return counter(f"read.{unit}")


class Stage(beam.DoFn):
    """Runs a stage function with quarantine: failures become tagged rows, never lost, never fatal."""

    def __init__(self, name: str, fn: Callable[[Any], Iterable[Any]], unit: str,
                 locate: Callable[[Any], str] = str):
        self._name, self._fn, self._unit, self._locate = name, fn, unit, locate

    def setup(self):
        self._in = counter(f"stage.{self._name}.in")
        self._failed = counter(f"stage.{self._name}.failed")
        self._rejected = {k: counter(f"{k}.{self._name}") for k in (QUARANTINE, FILTERED)}

    def process(self, element, *side_inputs):
        self._in.inc()
        try:
            # Materialise first: a generator that fails half-way must not leak half its output.
            outputs = list(self._fn(element, *side_inputs))
        except RecordError as err:
            self._failed.inc()
            yield beam.pvalue.TaggedOutput(QUARANTINE, self._row(Reject(self._unit, err.locator, err.reason)))
            return
        except Exception as err:  # an unexpected failure still names the element; finalize counts it
            self._failed.inc()
            reason = f"{type(err).__name__}: {err}"
            yield beam.pvalue.TaggedOutput(QUARANTINE, self._row(Reject(self._unit, self._locate(element), reason)))
            return
        for out in outputs:
            if isinstance(out, Reject):
                self._rejected[out.kind].inc(out.count)
                yield beam.pvalue.TaggedOutput(out.kind, self._row(out))
            else:
                yield out

    def _row(self, reject: Reject) -> dict:
        return {"stage": self._name, **dataclasses.asdict(reject)}


def run_stage(pcoll, name: str, fn, unit: str, locate=str, side_inputs=()):
    """``pcoll | Stage`` with outputs (main, quarantine, filtered); side inputs go to ``fn`` after the element."""
    return pcoll | name >> beam.ParDo(Stage(name, fn, unit, locate), *side_inputs).with_outputs(
        QUARANTINE, FILTERED, main="main")


# ---------------------------------------------------------------------------------------------
# The dataset writer


def num_shards_for(total_bytes: int) -> int:
    return max(1, math.ceil(total_bytes / TARGET_SHARD_BYTES))


def shard_file_name(config: str, split: str, shard: int, num_shards: int) -> str:
    return f"{config}/{split}-{shard:05d}-of-{num_shards:05d}.parquet"


def stable_hashes(ids: Iterable[str]) -> np.ndarray:
    return np.fromiter((stable_hash64(i) for i in ids), dtype=np.uint64)


class _SplitIntoShards(beam.DoFn):
    """(table) -> ((split, shard), sub-table) using the per-split shard counts as a side input."""

    def __init__(self, id_column: str):
        self._id_column = id_column

    def process(self, table: pa.Table, num_shards: dict):
        for split in sorted(set(table.column("split").to_pylist())):
            part = table.filter(pc.equal(table.column("split"), split))
            n = num_shards[split]
            shard = stable_hashes(part.column(self._id_column).to_pylist()) % np.uint64(n)
            for s in np.unique(shard):
                yield (split, int(s)), part.take(pa.array(np.flatnonzero(shard == s)))


class _WriteShard(beam.DoFn):
    def __init__(self, root: str, config: str, id_column: str, schema: pa.Schema):
        self._root, self._config, self._id_column, self._schema = root, config, id_column, schema

    def setup(self):
        self._rows = counter(f"written.{self._config}")

    def process(self, keyed, num_shards: dict):
        (split, shard), tables = keyed
        # the split may travel as a column the config does not declare (it is the file name's part)
        table = pa.concat_tables(list(tables)).select(self._schema.names).cast(self._schema)
        table = table.take(pc.sort_indices(table, sort_keys=[(self._id_column, "ascending")]))
        # Image / binary features travel as paths and are read only here, where the shard is written:
        # the shuffle never carries the image bytes.
        table = embed_table_storage(table)
        ids = table.column(self._id_column)
        if len(pc.unique(ids)) != len(ids):
            raise ValueError(f"{self._config}/{split}: duplicate {self._id_column} values in shard {shard}")
        name = shard_file_name(self._config, split, shard, num_shards[split])
        write_parquet(table, posixpath.join(self._root, name))
        self._rows.inc(table.num_rows)
        yield {"config": self._config, "split": split, "shard": shard,
               "num_shards": num_shards[split], "path": name, "rows": table.num_rows}


def write_parquet(table: pa.Table, url: str) -> None:
    fs, path = fsspec.core.url_to_fs(url)
    fs.makedirs(posixpath.dirname(path), exist_ok=True)
    with fs.open(path, "wb") as f:
        pq.write_table(table, f, **PARQUET_OPTIONS)


class WriteConfig(beam.PTransform):
    """Writes one config's tables as ``<root>/<config>/<split>-SSSSS-of-NNNNN.parquet``.

    Shard counts come from the data's size (so they are the same on every runner), rows are
    assigned by a stable hash of ``id_column`` and sorted by it inside each shard.
    """

    def __init__(self, root: str, config: str, features, id_column: str):
        super().__init__()
        self._root, self._config, self._id_column = root, config, id_column
        self._schema = features.arrow_schema

    def expand(self, tables):
        num_shards = (
            tables
            | "SizePerSplit" >> beam.FlatMap(_bytes_per_split)
            | "SumSizes" >> beam.CombinePerKey(sum)
            | "ShardCounts" >> beam.combiners.ToDict()
            | "ToShardCounts" >> beam.Map(lambda sizes: {s: num_shards_for(b) for s, b in sizes.items()})
        )
        side = beam.pvalue.AsSingleton(num_shards)
        return (
            tables
            | "SplitIntoShards" >> beam.ParDo(_SplitIntoShards(self._id_column), side)
            | "GroupShards" >> beam.GroupByKey()
            | "WriteShards" >> beam.ParDo(_WriteShard(self._root, self._config, self._id_column, self._schema), side)
        )


def _bytes_per_split(table: pa.Table):
    """(split, bytes) including the files Image columns will embed at write time."""
    splits = table.column("split")
    for split in sorted(set(splits.to_pylist())):
        part = table.filter(pc.equal(splits, split))
        yield split, part.nbytes + _external_bytes(part)


def _external_bytes(table: pa.Table) -> int:
    total = 0
    for field in table.schema:
        if pa.types.is_struct(field.type) and {f.name for f in field.type} == {"bytes", "path"}:
            column = table.column(field.name).combine_chunks()
            for data, path in zip(column.field("bytes").to_pylist(), column.field("path").to_pylist()):
                if data is None and path:
                    fs, p = fsspec.core.url_to_fs(path)
                    total += fs.size(p)
    return total


def rows_to_table(rows: list[dict], features) -> pa.Table:
    """Rows already in storage form (ClassLabel ints, Image dicts) to a table in the config's schema."""
    return pa.Table.from_pylist(rows, schema=features.arrow_schema)


# ---------------------------------------------------------------------------------------------
# The quarantine writer


class WriteRejects(beam.PTransform):
    """Writes reject rows to ``<root>/_build/<kind>/<stage>.jsonl``, sorted, one JSON object per line."""

    def __init__(self, root: str, kind: str):
        super().__init__()
        self._root, self._kind = root, kind

    def expand(self, rows):
        return (
            rows
            | "ByStage" >> beam.Map(lambda r: (r["stage"], r))
            | "GroupByStage" >> beam.GroupByKey()
            | "WriteJsonl" >> beam.Map(self._write)
        )

    def _write(self, keyed):
        stage, rows = keyed
        rows = sorted(rows, key=lambda r: (r["locator"], r["reason"], r["unit"]))
        url = posixpath.join(self._root, "_build", self._kind, f"{stage}.jsonl")
        fs, path = fsspec.core.url_to_fs(url)
        fs.makedirs(posixpath.dirname(path), exist_ok=True)
        with fs.open(path, "w") as f:
            for row in rows:
                f.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")
        return {"kind": self._kind, "stage": stage, "rows": len(rows)}
