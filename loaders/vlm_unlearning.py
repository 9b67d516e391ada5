"""VLM unlearning loaders: a config (one split or all) as a table or as rows, images as bytes.

``load(build, config, split=None)`` returns a pyarrow Table (columns in ``schemas/vlm_unlearning.py``);
``rows(build, config, split)`` the same as a list of dicts, ``image`` as ``{"bytes", "path"}`` (decode
with Pillow: ``Image.open(io.BytesIO(row["image"]["bytes"]))``). ``build`` is a local build folder.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from benchwright import tables
from benchwright.schemas import vlm_unlearning as schema


def load(build: Path | str, config: str, split: str | None = None, columns=None, where=None,
         limit: int | None = None) -> pa.Table:
    """``where`` / ``limit``: only the matching / first rows are read (``benchwright.tables.read_config``)."""
    if config not in schema.CONFIGS:
        raise KeyError(f"unknown config {config!r}; known: {', '.join(schema.CONFIGS)}")
    return tables.read_config(build, config, schema.CONFIGS[config], split=split, columns=columns, where=where,
                              limit=limit)


def rows(build: Path | str, config: str, split: str | None = None, columns=None) -> list[dict]:
    return load(build, config, split, columns).to_pylist()


def views_of(build: Path | str, example_id: str) -> dict[str, dict]:
    """{view: row} of one example across the three view configs."""
    import pyarrow.compute as pc

    out = {}
    for view in schema.VIEWS:
        table = load(build, view)
        hit = table.filter(pc.equal(table.column("example_id"), example_id))
        if hit.num_rows:
            out[view] = hit.to_pylist()[0]
    return out
