"""Reading a built config back: one place for every loader, card and check."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def read_config(root: Path | str, config: str, features, split: str | None = None, columns=None) -> pa.Table:
    """One config (optionally one split) of a local build as a pyarrow Table; an empty table with the
    config's schema when the build has no such files (a source without that part)."""
    files = sorted((Path(root) / config).glob(f"{split}-*.parquet" if split else "*.parquet"))
    if not files:
        return features.arrow_schema.empty_table().select(list(columns or features.keys()))
    return pq.ParquetDataset(files).read(columns=columns)
