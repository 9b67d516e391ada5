"""Reading a built config back: one place for every loader, card and check."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq


def read_config(root: Path | str, config: str, features, split: str | None = None, columns=None,
                where=None, limit: int | None = None) -> pa.Table:
    """One config (optionally one split) of a local build as a pyarrow Table; an empty table with the
    config's schema when the build has no such files (a source without that part).

    ``where`` (a ``pyarrow.dataset`` expression) keeps the matching rows and ``limit`` the first rows,
    both while scanning: only those rows are held, whatever the config's size (a sample of images)."""
    files = sorted((Path(root) / config).glob(f"{split}-*.parquet" if split else "*.parquet"))
    if not files:
        return features.arrow_schema.empty_table().select(list(columns or features.keys()))
    if where is None and limit is None:
        return pq.ParquetDataset(files).read(columns=columns)
    scan = ds.dataset([str(f) for f in files], format="parquet")
    return scan.head(limit, columns=columns, filter=where) if limit is not None else \
        scan.to_table(columns=columns, filter=where)


def read_row(root: Path | str, config: str, column: str, value, columns: list[str]) -> dict | None:
    """The first row of a local build's ``config`` whose ``column`` equals ``value`` (None when none
    does), holding one row group at a time: the row groups the column's statistics rule out are
    skipped, the others have ``column`` read first and the rest of one row group only where it
    matched. (A filtered dataset scan reads every file's row groups at once: 1.1 GB for one frame
    of the WildBox release, when its image row groups were about 100 MB each.)"""
    for path in sorted((Path(root) / config).glob("*.parquet")):
        parquet = pq.ParquetFile(path)
        # the statistics are per Parquet leaf, not per Arrow field (an Image column before it has two)
        leaves = _leaf_paths(parquet)
        if column not in leaves:
            raise KeyError(f"{path}: no top-level column {column!r} to look a row up by")
        index = leaves.index(column)
        for group in range(parquet.num_row_groups):
            stats = parquet.metadata.row_group(group).column(index).statistics
            if stats is not None and stats.has_min_max and not stats.min <= value <= stats.max:
                continue
            keys = parquet.read_row_group(group, columns=[column]).column(0).to_pylist()
            if value in keys:
                return parquet.read_row_group(group, columns=columns).slice(keys.index(value), 1).to_pylist()[0]
    return None


def parquet_leaf_path(parquet: pq.ParquetFile, column: str) -> str | None:
    """The Parquet column path of ``column`` (``a.b``: field b of a, through lists), None when ``a``
    is not there or the file names its levels otherwise."""
    head, *fields = column.split(".")
    schema = parquet.schema_arrow
    if schema.get_field_index(head) < 0:
        return None
    path, type_ = [head], schema.field(head).type
    for field in fields:
        while is_list_like(type_):
            path += ["list", type_.value_field.name]
            type_ = type_.value_type
        if not pa.types.is_struct(type_) or type_.get_field_index(field) < 0:
            return None
        path.append(field)
        type_ = type_.field(field).type
    leaf = ".".join(path)
    return leaf if leaf in _leaf_paths(parquet) else None


def _leaf_paths(parquet: pq.ParquetFile) -> list[str]:
    """The file's Parquet column paths, in column order (the order of the row groups' statistics)."""
    return [parquet.schema.column(i).path for i in range(len(parquet.schema))]


def is_list_like(type_: pa.DataType) -> bool:
    """A list, large list or fixed-size list type (what a nested column path walks through)."""
    return pa.types.is_list(type_) or pa.types.is_large_list(type_) or pa.types.is_fixed_size_list(type_)


def fixed_size_matrix(column, *shape: int) -> np.ndarray:
    """A (nested) fixed-size list column (an array or a chunked array) as an (n, *shape) float array,
    without a Python loop (its slice offset respected)."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    values = arr
    for _ in shape:
        values = pc.list_flatten(values)
    return np.asarray(values.to_numpy(zero_copy_only=False), float).reshape((len(arr), *shape))


def is_file_storage(type_: pa.DataType) -> bool:
    """A ``datasets`` Image (or Audio) column's storage: struct<bytes: binary, path: string>."""
    return pa.types.is_struct(type_) and {f.name for f in type_} == {"bytes", "path"}
