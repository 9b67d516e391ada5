"""WordEval loaders: a config as a table, and case folders for agents that want files."""
from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from benchwright import tables
from benchwright.schemas import wordeval as schema

EXPORTS = "exports/cases"


def read_config(root: Path | str, config: str, columns=None, split: str | None = "test"):
    """One config of a build; the ``test`` split unless told (``lite`` repeats some of its rows)."""
    return tables.read_config(root, config, schema.CONFIGS[config], split, columns=columns)


def export_cases(root: Path) -> dict:
    """``exports/cases/<case_id>/{input.docx, reference.docx, case.json}`` for every case, streamed."""
    from benchwright.files import Root
    from benchwright.wordeval.cases import CASE_FILE_ROOM, write_case_dir

    folders = Root(root / EXPORTS, EXPORTS)  # a case id that would not name one folder in it is refused
    counts = {}
    for config in schema.CONFIGS:
        n = 0
        for f in sorted((root / config).glob("test-*.parquet")):   # lite's rows are test's rows
            for batch in pq.ParquetFile(f).iter_batches(batch_size=64):
                for case in batch.to_pylist():
                    write_case_dir(case, folders.join(case["case_id"], "case id", single=True, room=CASE_FILE_ROOM))
                    n += 1
        counts[config] = n
    return {"case_dirs": counts}
