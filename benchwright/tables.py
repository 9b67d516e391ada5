"""Reading a built config back: one place for every loader, card and check."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
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
