"""The dataset writer and the quarantine writer, shared by every dataset pipeline.

The writer takes ``pyarrow.Table`` batches already in a config's arrow schema (hot work stays
columnar), shards rows by a stable hash of their id, sorts each shard by id and writes Parquet with
fixed settings, so output bytes do not depend on the runner or the worker count. Every location is
an fsspec URL.
"""
from __future__ import annotations

import math
import os
import posixpath
from typing import Iterable

import apache_beam as beam
import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from datasets import Features, Value
from datasets.table import embed_table_storage

from benchwright import strict_json
from benchwright.files import map_in_threads
from benchwright.hashing import stable_hash64
from benchwright.memory import release_freed_memory
from benchwright.records import SPLIT_COLUMN
from benchwright.stage import counter
from benchwright.tables import is_file_storage

# Parquet settings are part of the output's identity: change them and every sha256 changes. Dictionary
# encoding and min/max statistics go to the flat, non-binary columns only (``parquet_options``): on a
# WildBox boxes shard, dictionaries tried on nested float columns (cuboids) and image bytes overflowed
# and fell back, costing 2x the write time and 20% more bytes, and no reader filters on them.
PARQUET_OPTIONS = dict(
    compression="zstd",
    compression_level=3,
    data_page_size=1 << 20,
)
# Rows per row group: at most 10,000, fewer where rows are large (embedded images, documents) so that a
# row group holds about 32 MB. Reading one row (a card's sample frame, the dataset viewer) reads its
# whole row group: 10,000 WildBox frames were a 100 MB group and 340 MB of memory to read one frame.
MAX_ROW_GROUP_ROWS = 10_000
ROW_GROUP_BYTES = 32 << 20
TARGET_SHARD_BYTES = 128 << 20


def num_shards_for(total_bytes: int) -> int:
    return max(1, math.ceil(total_bytes / TARGET_SHARD_BYTES))


def shard_file_name(config: str, split: str, shard: int, num_shards: int) -> str:
    return f"{config}/{split}-{shard:05d}-of-{num_shards:05d}.parquet"


def parse_shard_name(path: str) -> tuple[str, str, int, int]:
    """``.../<config>/<split>-SSSSS-of-NNNNN.parquet`` -> (config, split, shard, num_shards)."""
    config = posixpath.basename(posixpath.dirname(path))
    split, rest = posixpath.basename(path)[: -len(".parquet")].split("-", 1)
    shard, num_shards = rest.split("-of-")
    return config, split, int(shard), int(num_shards)


def stable_hashes(ids: Iterable[str]) -> np.ndarray:
    return np.fromiter((stable_hash64(i) for i in ids), dtype=np.uint64)


class Packed:
    """A table as LZ4-compressed Arrow IPC, with its bytes per split (``_bytes_per_split``) taken before
    packing. Between stages a runner holds every table of a config in memory (the shard counts need
    them all), encoded by pickling: packed, a full-scale WildBox build holds ~40% less there; unpacking
    gives the same table (schema, values and chunks), so the written bytes do not change."""

    __slots__ = ("ipc", "sizes")

    def __init__(self, ipc: bytes, sizes: tuple):
        self.ipc, self.sizes = ipc, sizes

    @classmethod
    def of(cls, table: pa.Table, sizes: bool = False) -> "Packed":
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression="lz4")) as writer:
            writer.write_table(table)
        return cls(sink.getvalue().to_pybytes(), tuple(_bytes_per_split(table)) if sizes else ())

    def table(self) -> pa.Table:
        return pa.ipc.open_stream(self.ipc).read_all()

    def __reduce__(self):
        return Packed, (self.ipc, self.sizes)


class _SplitIntoShards(beam.DoFn):
    """(packed table) -> ((split, shard), packed sub-table) using the per-split shard counts as a side input."""

    def __init__(self, id_column: str):
        self._id_column = id_column

    def process(self, packed: Packed, num_shards: dict):
        table = packed.table()
        for split in sorted(set(table.column(SPLIT_COLUMN).to_pylist())):
            part = table.filter(pc.equal(table.column(SPLIT_COLUMN), split))
            n = num_shards[split]
            shard = stable_hashes(part.column(self._id_column).to_pylist()) % np.uint64(n)
            for s in np.unique(shard):
                yield (split, int(s)), Packed.of(part.take(pa.array(np.flatnonzero(shard == s))))


class _WriteShard(beam.DoFn):
    def __init__(self, root: str, config: str, id_column: str, schema: pa.Schema):
        self._root, self._config, self._id_column, self._schema = root, config, id_column, schema

    def setup(self):
        self._rows = counter(f"written.{self._config}")

    def process(self, keyed, num_shards: dict):
        (split, shard), packed = keyed
        # the split may travel as a column the config does not declare (it is the file name's part)
        table = pa.concat_tables([p.table() for p in packed]).select(self._schema.names).cast(self._schema)
        table = table.take(pc.sort_indices(table, sort_keys=[(self._id_column, "ascending")]))
        # Image / binary features travel as paths and are read only here, where the shard is written:
        # the shuffle never carries the image bytes.
        table = embed_table_storage(_read_local_files(table))
        ids = table.column(self._id_column)
        if len(pc.unique(ids)) != len(ids):
            raise ValueError(f"{self._config}/{split}: duplicate {self._id_column} values in shard {shard}")
        name = shard_file_name(self._config, split, shard, num_shards[split])
        write_parquet(table, posixpath.join(self._root, name))
        rows = table.num_rows
        self._rows.inc(rows)
        del table, ids
        # a shard's copies (concatenated, sorted, its files embedded) are freed now, but glibc and Arrow's
        # pool would keep them: the next shard, or the next step of a worker, would start from this peak
        release_freed_memory(collect=False)
        yield {"config": self._config, "split": split, "shard": shard,
               "num_shards": num_shards[split], "path": name, "rows": rows}


def write_parquet(table: pa.Table, url: str) -> None:
    fs, path = fsspec.core.url_to_fs(url)
    fs.makedirs(posixpath.dirname(path), exist_ok=True)
    with fs.open(path, "wb") as f:
        pq.write_table(table, f, row_group_size=row_group_rows(table), **parquet_options(table.schema))


def parquet_options(schema: pa.Schema) -> dict:
    """``PARQUET_OPTIONS`` with dictionaries and statistics for the flat, non-binary columns."""
    flat = [field.name for field in schema if not pa.types.is_nested(field.type) and not is_binary(field.type)]
    return {**PARQUET_OPTIONS, "use_dictionary": flat, "write_statistics": flat}


def row_group_rows(table: pa.Table) -> int:
    """Rows per row group for ``table``, from the bytes of its binary columns (embedded files): the
    values' lengths, not ``nbytes``, which depends on how the table happens to be chunked on a runner."""
    total = 0
    for field, column in zip(table.schema, table.columns):
        if is_file_storage(field.type):
            column = pc.struct_field(column, "bytes")
        elif not is_binary(field.type):
            continue
        total += pc.sum(pc.binary_length(column)).as_py() or 0
    if not total:
        return MAX_ROW_GROUP_ROWS
    return max(1, min(MAX_ROW_GROUP_ROWS, ROW_GROUP_BYTES * table.num_rows // total))


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
        tables = tables | "Pack" >> beam.Map(Packed.of, sizes=True)  # fused with the step making the tables
        num_shards = (
            tables
            | "SizePerSplit" >> beam.FlatMap(lambda packed: packed.sizes)
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


def is_binary(type_: pa.DataType) -> bool:
    """A binary or large binary type (bytes kept as they are: no dictionary, no min/max)."""
    return pa.types.is_binary(type_) or pa.types.is_large_binary(type_)


def _bytes_per_split(table: pa.Table):
    """(split, bytes) including the files Image columns will embed at write time."""
    splits = table.column(SPLIT_COLUMN)
    for split in sorted(set(splits.to_pylist())):
        part = table.filter(pc.equal(splits, split))
        yield split, part.nbytes + _external_bytes(part)


def _external_bytes(table: pa.Table) -> int:
    total = 0
    for field in table.schema:
        if is_file_storage(field.type):
            column = table.column(field.name).combine_chunks()
            for data, path in zip(column.field("bytes").to_pylist(), column.field("path").to_pylist()):
                if data is None and path:
                    local = _local_path(path)
                    total += os.path.getsize(local) if local is not None else _size(path)
    return total


def _size(url: str) -> int:
    fs, p = fsspec.core.url_to_fs(url)
    return fs.size(p)


def _local_path(path: str) -> str | None:
    """The local path of a file path or file:// URL, None for other URLs."""
    return path[len("file://"):] if path.startswith("file://") else path if "://" not in path else None


def _read_file(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _read_local_files(table: pa.Table) -> pa.Table:
    """Fills the bytes of (bytes, path) columns from local files, on a few threads: datasets'
    ``embed_table_storage`` (which then finds them filled) opens each file through fsspec, which costs
    more than the read; other URLs are left to it."""
    for i, field in enumerate(table.schema):
        if not is_file_storage(field.type):
            continue
        column = table.column(i).combine_chunks()
        datas, paths = column.field("bytes").to_pylist(), column.field("path").to_pylist()
        todo = [k for k, (d, p) in enumerate(zip(datas, paths)) if d is None and p and _local_path(p) is not None]
        if not todo:
            continue
        for k, data in zip(todo, map_in_threads(_read_file, [_local_path(paths[k]) for k in todo])):
            datas[k] = data
        filled = pa.StructArray.from_arrays([pa.array(datas, field.type.field("bytes").type), column.field("path")],
                                            fields=list(field.type), mask=column.is_null())
        table = table.set_column(i, field, filled)
    return table


def with_split(features):
    """``features`` plus the ``split`` column a table carries into the writer. A config that does not
    declare ``split`` keeps it out of its files (the split is then the file name's only)."""
    return Features({**features, SPLIT_COLUMN: Value("string")})


def rows_to_table(rows: list[dict], features) -> pa.Table:
    """Rows in storage form (Image dicts) to a table in the config's schema; a ClassLabel column may
    hold names, stored as their ids (an unknown name raises: the stage that made the row validates)."""
    from datasets import ClassLabel

    labels = {k: f for k, f in features.items() if isinstance(f, ClassLabel)}
    if labels:
        rows = [{**r, **{k: f.str2int(r[k]) for k, f in labels.items() if isinstance(r.get(k), str)}} for r in rows]
    return pa.Table.from_pylist(rows, schema=features.arrow_schema)


class ToTables(beam.PTransform):
    """Rows in storage form, each with its split (``SPLIT_COLUMN``) -> pyarrow tables of ``features`` and the split,
    ``min_rows`` to ``max_rows`` rows each (Beam's ``BatchElements``): what a dataset's ``expand`` gives the writer
    for one config. A column ``features`` does not name is left out."""

    def __init__(self, features, min_rows: int, max_rows: int):
        super().__init__()
        self._features, self._min, self._max = features, min_rows, max_rows

    def expand(self, rows):
        return (rows
                | "Batch" >> beam.BatchElements(min_batch_size=self._min, max_batch_size=self._max)
                | "Table" >> beam.Map(config_table, self._features))


def config_table(rows: list[dict], features) -> pa.Table:
    """Rows of one config in storage form, each with its split -> the config's table (``features``' columns and the
    split, in their order)."""
    return rows_to_table([{k: r.get(k) for k in features} | {SPLIT_COLUMN: r[SPLIT_COLUMN]} for r in rows],
                         with_split(features))


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
                f.write(strict_json.dumps_line(row) + "\n")
        return {"kind": self._kind, "stage": stage, "rows": len(rows)}
