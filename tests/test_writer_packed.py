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
