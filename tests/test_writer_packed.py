"""The writer packs tables between stages (LZ4 Arrow IPC): the same table comes back, smaller in transit."""
from __future__ import annotations

import pickle

import numpy as np
import pyarrow as pa

from benchwright.writer import Packed, _bytes_per_split


def test_a_packed_table_comes_back_the_same_and_travels_smaller():
    n = 5000
    table = pa.table({
        "id": [f"seg/frame_{i:06d}#{i % 7}" for i in range(n)],
        "corners": pa.FixedSizeListArray.from_arrays(pa.array(np.repeat(np.arange(n, dtype=float), 24)), 24),
        "maybe": pa.array([None if i % 5 == 0 else i for i in range(n)], pa.int32()),
        "split": ["train" if i % 3 else "validation" for i in range(n)],
    }).replace_schema_metadata({"huggingface": '{"info": {}}'})
    packed = Packed.of(table, sizes=True)
    back = pickle.loads(pickle.dumps(packed)).table()
    assert back.equals(table, check_metadata=True) and back.schema.metadata == table.schema.metadata
    assert [c.num_chunks for c in back.columns] == [c.num_chunks for c in table.columns]
    assert dict(packed.sizes) == dict(_bytes_per_split(table)) and Packed.of(table).sizes == ()
    assert len(pickle.dumps(packed)) < 0.7 * len(pickle.dumps(table))
    empty = Packed.of(table.slice(0, 0)).table()
    assert empty.num_rows == 0 and empty.schema == table.schema


def test_row_groups_of_large_rows_stay_small_and_one_row_is_read_back_alone(tmp_path):
    """Rows with embedded files get row groups of about ROW_GROUP_BYTES, however the table is chunked
    (the same bytes on every runner); ``read_row`` finds one row by its id."""
    import pyarrow.parquet as pq

    from benchwright.tables import read_row
    from benchwright.writer import ROW_GROUP_BYTES, row_group_rows, write_parquet

    n, size = 3000, 40_000
    storage = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    # the image column first: its two Parquet leaves come before the id's (statistics are per leaf)
    table = pa.table({"image": pa.array([{"bytes": bytes([i % 251]) * size, "path": f"p{i}"} for i in range(n)], storage),
                      "frame_id": [f"f{i:05d}" for i in range(n)]})
    rows = row_group_rows(table)
    assert rows == ROW_GROUP_BYTES // size and row_group_rows(pa.Table.from_batches(table.to_batches(max_chunksize=7))) == rows
    assert row_group_rows(table.drop_columns(["image"])) == 10_000
    write_parquet(table, str(tmp_path / "frames" / "train-00000-of-00001.parquet"))
    meta = pq.ParquetFile(tmp_path / "frames" / "train-00000-of-00001.parquet").metadata
    assert meta.num_row_groups == -(-n // rows) and meta.row_group(0).num_rows == rows
    # dictionaries and statistics for the flat columns only (the image bytes would overflow a dictionary)
    leaves = {meta.row_group(0).column(i).path_in_schema: meta.row_group(0).column(i) for i in range(3)}
    assert leaves["frame_id"].statistics.has_min_max and "RLE_DICTIONARY" in leaves["frame_id"].encodings
    assert leaves["image.bytes"].statistics is None and "RLE_DICTIONARY" not in leaves["image.bytes"].encodings
    for i in (0, rows - 1, rows, 2999):  # first and last rows of row groups
        row = read_row(tmp_path, "frames", "frame_id", f"f{i:05d}", ["frame_id", "image"])
        assert row["frame_id"] == f"f{i:05d}" and row["image"]["bytes"] == bytes([i % 251]) * size
    assert read_row(tmp_path, "frames", "frame_id", "nope", ["frame_id"]) is None
