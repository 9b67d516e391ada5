"""Reading a build back through its Croissant file (mlcroissant) and through its Parquet (pyarrow), both
normalised to plain Python values, so the tests can show that the metadata describes the data."""
from __future__ import annotations

import io
import math
import socket
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from benchwright.croissant import SPLIT_FIELD, field_specs
from benchwright.writer import parse_shard_name


def _plain(value, spec: dict):
    """A value as mlcroissant or pyarrow gives it, as plain Python: text decoded, images as their pixels."""
    from PIL import Image

    if value is None:
        return None
    if isinstance(value, Image.Image):
        return ("image", value.mode, value.size, value.tobytes())
    if spec.get("data_type") == "sc:ImageObject" and isinstance(value, bytes):
        return _plain(Image.open(io.BytesIO(value)), spec)
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v, spec) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bytes) and not spec.get("binary"):
        return value.decode("utf-8")
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


def _expected(value, spec: dict):
    """A Parquet value (pyarrow's to_pylist) in the shape mlcroissant reads it back (``_actual``)."""
    if "sub_fields" in spec:
        if "shape" in spec:
            return [{s["name"]: _expected(item.get(s["name"]) if item else None, s) for s in spec["sub_fields"]}
                    for item in (value or [])]
        return {s["name"]: _expected((value or {}).get(s["name"]), s) for s in spec["sub_fields"]}
    if spec.get("data_type") == "sc:ImageObject":
        value = value["bytes"] if value else None
    return _plain(value, spec)


def _actual(value, spec: dict):
    """An mlcroissant record's value, keyed by field names instead of ids."""
    if "sub_fields" in spec:
        def one(item):
            return {s["name"]: _actual((item or {}).get(s["id"]), s) for s in spec["sub_fields"]}
        return [one(item) for item in value or []] if "shape" in spec else one(value)
    return _plain(value, spec)


def parquet_rows(root: Path, dataset, config: str) -> list[dict]:
    """A config's rows from its shards (in file order, as mlcroissant reads them), the split added."""
    specs = field_specs(dataset.configs[config], config)
    rows = []
    for shard in sorted((root / config).glob("*.parquet")):
        split = parse_shard_name(shard.as_posix())[1]
        for row in pq.read_table(shard).to_pylist():
            out = {s["name"]: _expected(row[s["name"]], s) for s in specs}
            out.setdefault(SPLIT_FIELD, split)
            rows.append(out)
    return rows


def croissant_rows(root: Path, dataset, config: str, croissant_dataset) -> list[dict]:
    """A config's records as ``mlcroissant.Dataset.records`` yields them, normalised like ``parquet_rows``."""
    specs = field_specs(dataset.configs[config], config)
    rows = []
    for record in croissant_dataset.records(record_set=config):
        out = {s["name"]: _actual(record[s["id"]], s) for s in specs}
        out.setdefault(SPLIT_FIELD, _plain(record[f"{config}/{SPLIT_FIELD}"], {}))
        rows.append(out)
    return rows


@contextmanager
def no_network():
    """Any connection attempt fails (and is recorded): what runs inside must work offline."""
    attempts = []
    real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def connect(self, address):
        attempts.append(address)
        raise OSError(f"network use in an offline test: connect({address!r})")

    def getaddrinfo(host, *args, **kwargs):
        attempts.append(host)
        raise OSError(f"network use in an offline test: getaddrinfo({host!r})")

    socket.socket.connect, socket.getaddrinfo = connect, getaddrinfo
    try:
        yield attempts
    finally:
        socket.socket.connect, socket.getaddrinfo = real_connect, real_getaddrinfo
