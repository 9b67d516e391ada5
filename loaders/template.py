"""Template loaders: a config of a build as a pyarrow table (SLOT: decoding, views and format exports go here).

``datasets.load_dataset(BUILD, "records")`` reads a build too; these are for the cards, checks, evaluator and
baselines, which read columns without ``datasets``.
"""
from __future__ import annotations

from pathlib import Path

from benchwright import tables
from benchwright.schemas import template as schema


def load(root: Path | str, config: str = "records", split: str | None = None, columns=None):
    """One config of a local build (one split, or all of them), as a pyarrow Table."""
    return tables.read_config(root, config, schema.CONFIGS[config], split, columns=columns)


def labels(root: Path | str, split: str) -> dict[str, str]:
    """{id: label name} of a split of the build."""
    table = load(root, split=split, columns=["id", "label"])
    return {i: schema.LABELS[label] for i, label in zip(table.column("id").to_pylist(),
                                                         table.column("label").to_pylist())}
