"""Statistics of a build, per config, split and column, computed columnar over the written Parquet.

Written by every build to ``_build/statistics/statistics.json`` (the shape below), read by the
drift against the previous build (``benchwright.drift``), ``benchwright diff``, the card's quality
section and the validation report. The same files give the same bytes: values are computed from
sorted arrays (a mean or a quantile never depends on the order rows were written in) and the JSON
is written with sorted keys.

Shape (``format`` is ``benchwright-statistics/1``)::

    {"format": ..., "dataset": name, "quantile_levels": [0.0, 0.05, ..., 1.0], "histogram_bins": 10,
     "top_k": 10, "categorical_max_distinct": 50,
     "configs": {config: {"splits": {split: {"rows": n, "columns": {path: entry}}}}}}

A column ``path`` is the column name; a struct field adds ``.field`` and a list's elements ``[]``
(``objects[].depth``: the ``depth`` of every object of every row). Every ``entry`` has ``kind``,
``type`` (the Arrow type), ``count`` (non-null values) and ``missing`` (nulls); then by kind:

- ``numeric`` (integers and floats): ``nan``, and over the finite values ``min``, ``max``, ``mean``,
  ``std``, ``quantiles`` (at ``quantile_levels``, linear interpolation) and ``histogram``
  (``{"edges": [...], "counts": [...]}``, ``histogram_bins`` equal bins from min to max);
- ``categorical`` (ClassLabels by name, booleans, strings with at most ``categorical_max_distinct``
  distinct values that repeat: at most half as many as values): ``distinct`` and ``values``, every ``[value, count]`` by count then value;
  strings add ``lengths``;
- ``text`` (strings with more distinct values): ``distinct``, ``top`` (the ``top_k`` most frequent)
  and ``lengths``;
- ``binary``: ``lengths`` (bytes);
- ``list``: ``lengths`` (elements per row); the elements are described under ``path[]``;
- ``struct``: its fields are described under ``path.field``;
- ``image`` (a ``datasets.Image`` column): ``checked`` (how each image was read: ``"header"``, its
  format and size from its header, no pixel decoded, the default; ``"decode"``, every image's bytes
  fully decoded: ``compute_statistics(decode_images=True)``, ``benchwright build --decode-images``),
  ``bytes`` (sizes), ``failures`` and ``failed_examples`` (how many images, and the id of up to 5
  rows, whose header does not read, or with ``"decode"`` whose bytes do not decode), ``width`` and
  ``height`` (numeric, of the images read) and ``formats`` (``[format, count]``);
- ``other``: counts only.

``lengths``, ``bytes``, ``width`` and ``height`` are numeric summaries (``min`` ... ``histogram``).
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import posixpath
from pathlib import Path

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchwright import published
from benchwright.files import map_in_threads
from benchwright.layout import STATISTICS
from benchwright.tables import is_list_like
from benchwright.writer import is_binary, parse_shard_name

FORMAT = "benchwright-statistics/1"
QUANTILE_LEVELS = tuple(round(i * 0.05, 2) for i in range(21))
HISTOGRAM_BINS = 10
TOP_K = 10
CATEGORICAL_MAX_DISTINCT = 50
FAILED_EXAMPLES = 5


def compute_statistics(dataset, root: str | Path, decode_images: bool = False) -> dict:
    """Statistics of the build at ``root`` (a local folder or any fsspec URL of a build folder).
    ``decode_images``: decode every image (else each one's header only: its format and size)."""
    fs, base = fsspec.core.url_to_fs(str(root))
    configs = {}
    for config, features in dataset.configs.items():
        by_split = _shards_by_split(fs, base, config)
        configs[config] = {"splits": {split: _split_statistics(fs, by_split[split], features,
                                                               dataset.id_columns.get(config), decode_images)
                                      for split in _ordered(by_split)}}
    return {"format": FORMAT, "dataset": dataset.name, "quantile_levels": list(QUANTILE_LEVELS),
            "histogram_bins": HISTOGRAM_BINS, "top_k": TOP_K, "categorical_max_distinct": CATEGORICAL_MAX_DISTINCT,
            "configs": configs}


def image_statistics(dataset, root: str | Path, decode_images: bool = True) -> dict:
    """The image columns' entries only, shaped as ``compute_statistics``'s (``{"configs": {config: {"splits":
    {split: {"columns": {name: entry}}}}}}``, configs without an image column left out): what checking
    every image needs, without the other columns' statistics."""
    from datasets import Image

    fs, base = fsspec.core.url_to_fs(str(root))
    configs = {}
    for config, features in dataset.configs.items():
        names = [name for name, f in features.items() if isinstance(f, Image)]
        if names:
            by_split = _shards_by_split(fs, base, config)
            configs[config] = {"splits": {split: {"columns": {name: _image_statistics(
                fs, by_split[split], name, dataset.id_columns.get(config), decode_images) for name in names}}
                for split in _ordered(by_split)}}
    return {"configs": configs}


def _shards_by_split(fs, base: str, config: str) -> dict[str, list[str]]:
    by_split: dict[str, list[str]] = {}
    for path in sorted(fs.glob(posixpath.join(base, config, "*.parquet"))):
        by_split.setdefault(parse_shard_name(path)[1], []).append(path)
    return by_split


def write_statistics(dataset, root: Path, decode_images: bool = False) -> dict:
    stats = compute_statistics(dataset, root, decode_images)
    dump_json(Path(root) / STATISTICS, stats)
    return stats


def read_statistics(root: str) -> dict | None:
    """The statistics a build stored (local folder or URL), or None when it has none."""
    return published.read_json_or_none(published.join(str(root), STATISTICS))


def statistics_of(dataset, root: str) -> dict:
    """The stored statistics of a build, computed from its Parquet when it has none (an older build)."""
    return read_statistics(root) or compute_statistics(dataset, root)


def dump_json(path: Path, obj) -> None:
    """Deterministic JSON (sorted keys, no NaN: a value that is not a number is stored as null)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n",
                    encoding="utf-8")


def _ordered(splits) -> list[str]:
    order = {"train": 0, "validation": 1, "test": 2}
    return sorted(splits, key=lambda s: (order.get(s, 9), s))


# ---------------------------------------------------------------------------------------------
# One split of one config


def _split_statistics(fs, files: list[str], features, id_column: str | None, decode_images: bool) -> dict:
    from datasets import Image  # ~2 s to import; a build has imported it already

    image_columns = [name for name, f in features.items() if isinstance(f, Image)]
    plain = [name for name in features if name not in image_columns]
    with contextlib.ExitStack() as opened:
        # each file opened once for the split: its footer read once, not once per column
        parquets = [pq.ParquetFile(opened.enter_context(fs.open(f, "rb"))) for f in files]
        present = set(parquets[0].schema_arrow.names) if parquets else set(plain)
        rows = sum(parquet.metadata.num_rows for parquet in parquets)
        columns: dict[str, dict] = {}
        for name in (n for n in plain if n in present):
            # one column of the split in memory at a time (the driver's peak is the widest column, not the table)
            chunks = [parquet.read(columns=[name]).column(name) for parquet in parquets]
            arr = (pa.chunked_array([c for chunk in chunks for c in chunk.chunks], type=chunks[0].type) if chunks
                   else features.arrow_schema.empty_table().column(name))
            _describe(columns, name, arr.combine_chunks(), features[name])
    for name in image_columns:
        columns[name] = _image_statistics(fs, files, name, id_column, decode_images)
    return {"rows": rows, "columns": dict(sorted(columns.items()))}


def _describe(out: dict, path: str, arr: pa.Array, feature) -> None:
    """Adds the entry of ``arr`` (and of its fields or elements) to ``out`` under ``path``."""
    from datasets import ClassLabel

    t = arr.type
    entry = {"type": str(t), "count": len(arr) - arr.null_count, "missing": arr.null_count}
    if isinstance(feature, ClassLabel):
        entry["kind"] = "categorical"
        names = feature.names
        codes = pc.drop_null(arr).to_numpy(zero_copy_only=False).astype(np.int64)
        counts = np.bincount(codes[(codes >= 0) & (codes < len(names))], minlength=len(names))
        unknown = int(((codes < 0) | (codes >= len(names))).sum())
        values = [[names[i], int(c)] for i, c in enumerate(counts) if c] + ([["<out of range>", unknown]] if unknown else [])
        entry.update(distinct=len(values), values=_by_count(values))
    elif pa.types.is_integer(t) or pa.types.is_floating(t):
        entry["kind"] = "numeric"
        entry.update(_numeric(pc.drop_null(arr).to_numpy(zero_copy_only=False)))
    elif pa.types.is_boolean(t):
        entry["kind"] = "categorical"
        entry.update(_value_counts(arr))
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        counts = _value_counts(arr, most=CATEGORICAL_MAX_DISTINCT)  # more distinct values: text, top TOP_K only
        # categorical: few values, and values that repeat (an id column is text however short the split)
        few = counts["distinct"] <= CATEGORICAL_MAX_DISTINCT and counts["distinct"] <= max(1, entry["count"] // 2)
        entry["kind"] = "categorical" if few else "text"
        if entry["kind"] == "text":
            counts = {"distinct": counts["distinct"], "top": counts["values"][:TOP_K]}
        entry.update(counts, lengths=_numeric(pc.drop_null(pc.utf8_length(arr)).to_numpy(zero_copy_only=False)))
    elif is_binary(t):
        entry["kind"] = "binary"
        entry["lengths"] = _numeric(pc.drop_null(pc.binary_length(arr)).to_numpy(zero_copy_only=False))
    elif is_list_like(t):
        entry["kind"] = "list"
        entry["lengths"] = _numeric(pc.drop_null(pc.list_value_length(arr)).to_numpy(zero_copy_only=False))
        _describe(out, f"{path}[]", pc.list_flatten(arr), getattr(feature, "feature", None))
    elif pa.types.is_struct(t):
        entry["kind"] = "struct"
        for i in range(t.num_fields):
            name = t.field(i).name
            child = feature.get(name) if isinstance(feature, dict) else None
            _describe(out, f"{path}.{name}", pc.struct_field(arr, [i]), child)
    else:
        entry["kind"] = "other"
    out[path] = entry


def _numeric(values: np.ndarray) -> dict:
    """Summary of numbers, order-independent: every figure is taken from the sorted finite values."""
    values = np.asarray(values)
    if values.dtype.kind == "f":
        finite = np.isfinite(values)
        nan = int((~finite).sum())
        values = values[finite]
    else:
        nan = 0
    v = np.sort(values.astype(np.float64))
    if not len(v):
        return {"nan": nan, "min": None, "max": None, "mean": None, "std": None, "quantiles": None, "histogram": None}
    counts, edges = np.histogram(v, bins=HISTOGRAM_BINS, range=(v[0], v[-1]) if v[-1] > v[0] else None)
    return {"nan": nan, "min": float(v[0]), "max": float(v[-1]), "mean": float(v.sum() / len(v)),
            "std": float(np.sqrt(((v - v.sum() / len(v)) ** 2).sum() / len(v))),
            "quantiles": [float(q) for q in np.quantile(v, QUANTILE_LEVELS)],
            "histogram": {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts]}}


def _value_counts(arr: pa.Array, most: int | None = None) -> dict:
    """``distinct`` and ``values`` (``_by_count``); with ``most``, only the first ``most`` values when
    there are more, ordered in Arrow (its byte order of UTF-8 strings is Python's order of str), so an
    id column's hundreds of thousands of values never become Python objects."""
    counts = pc.value_counts(pc.drop_null(arr))
    distinct = len(counts)
    if most is not None and distinct > most:
        order = pc.sort_indices(pa.table({"count": counts.field("counts"), "value": counts.field("values")}),
                                sort_keys=[("count", "descending"), ("value", "ascending")])
        counts = counts.take(order[:most])
    values = [[v, int(c)] for v, c in zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist())]
    return {"distinct": distinct, "values": _by_count(values)}


def _by_count(values: list[list]) -> list[list]:
    """Most frequent first, ties by value (booleans and strings alike): a fixed order for any input order."""
    return sorted(values, key=lambda vc: (-vc[1], str(vc[0])))


# ---------------------------------------------------------------------------------------------
# Images: each image's header gives its format and size (no pixel decoded); with ``decode_images`` every
# image's bytes are decoded too, which proves them (``benchwright validate`` always does: validate.check_data)

HEADER, DECODE = "header", "decode"


def _image_statistics(fs, files: list[str], column: str, id_column: str | None, decode: bool = False) -> dict:
    sizes, widths, heights, formats, failed = [], [], [], {}, []
    missing = count = 0
    memo: dict[bytes, tuple] = {}  # rows sharing an image (VLM views) decode it once
    wanted = [column] + ([id_column] if id_column else [])
    for f, first_row, table in _row_groups(fs, files, wanted):  # one row group's images in memory at a time
        images = table.column(column).combine_chunks()
        data = pc.struct_field(images, [0]) if pa.types.is_struct(images.type) else images
        ids = table.column(id_column).to_pylist() if id_column else [None] * table.num_rows
        blobs = data.to_pylist()
        if decode:
            # Hashing and decoding release the GIL: a row group's images are keyed, then its new ones decoded,
            # on a few threads; the results are then taken in row order, as one thread would.
            keys = map_in_threads(_image_key, blobs)
            new = list(dict.fromkeys(k for k in keys if k is not None and k not in memo))
            blob_of = {k: b for k, b in zip(keys, blobs) if k is not None}
            memo.update(zip(new, map_in_threads(_decode, [blob_of[k] for k in new])))
            del blob_of
            results = [None if k is None else memo[k] for k in keys]
        else:  # a header is read in microseconds: neither threads nor a memo would pay for themselves
            results = [None if blob is None else _header(blob) for blob in blobs]
        for i, (blob, result) in enumerate(zip(blobs, results)):
            if blob is None:
                missing += 1
                continue
            count += 1
            sizes.append(len(blob))
            if result is None:
                failed.append(ids[i] if ids[i] is not None else f"{posixpath.basename(f)}#{first_row + i}")
                continue
            fmt, w, h = result
            widths.append(w)
            heights.append(h)
            formats[fmt] = formats.get(fmt, 0) + 1
    return {"kind": "image", "type": "image", "checked": DECODE if decode else HEADER, "count": count,
            "missing": missing, "bytes": _numeric(np.asarray(sizes, dtype=np.int64)),
            "failures": len(failed), "failed_examples": sorted(map(str, failed))[:FAILED_EXAMPLES],
            "width": _numeric(np.asarray(widths, dtype=np.int64)),
            "height": _numeric(np.asarray(heights, dtype=np.int64)),
            "formats": _by_count([[k, v] for k, v in formats.items()])}


def image_failures(entry: dict) -> tuple[str, int]:
    """(how the images were checked, how many failed) of an image entry; statistics stored before the
    header reading (every image decoded, its count under ``decode_failures``) read as ``"decode"``."""
    if "checked" not in entry:
        return DECODE, entry["decode_failures"]
    return entry["checked"], entry["failures"]


def _row_groups(fs, files: list[str], columns: list[str]):
    """(file, its first row's index in the file, table) of each row group of ``files``, in order."""
    for f in files:
        with fs.open(f, "rb") as handle:
            parquet = pq.ParquetFile(handle)
            first_row = 0
            for group in range(parquet.num_row_groups):
                table = parquet.read_row_group(group, columns=columns)
                yield f, first_row, table
                first_row += table.num_rows


def _image_key(blob: bytes | None) -> bytes | None:
    """The memo key of an image's bytes (None for a missing image)."""
    return None if blob is None else hashlib.blake2b(blob, digest_size=16).digest()


def _header(blob: bytes) -> tuple[str, int, int] | None:
    """(format, width, height) from an image's header (Pillow's lazy open: nothing past it is read), else
    None: bytes that are no image Pillow knows, or a header that claims a decompression bomb."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(blob)) as im:
            return im.format or "unknown", int(im.size[0]), int(im.size[1])
    except Exception:  # noqa: BLE001 - Pillow raises many types for bad bytes; any of them is a failure
        return None


def _decode(blob: bytes) -> tuple[str, int, int] | None:
    """(format, width, height) of an image whose bytes decode fully, else None. JPEGs decode at
    1/8 scale (every entropy-coded byte is still read, so a truncated or corrupt file still fails)."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(blob)) as im:
            fmt, (w, h) = im.format or "unknown", im.size
            if fmt == "JPEG":
                im.draft(im.mode, (max(1, w // 8), max(1, h // 8)))
            im.load()
        return fmt, int(w), int(h)
    except Exception:  # noqa: BLE001 - Pillow raises many types for bad bytes; any of them is a failure
        return None


# ---------------------------------------------------------------------------------------------
# For people: the card's summary


def column_summary(entry: dict) -> str:
    """One short phrase for a column entry (the card and the report)."""
    kind = entry["kind"]
    missing = f"; {entry['missing']:,} missing" if entry.get("missing") else ""
    if kind == "numeric":
        if entry["min"] is None:
            return f"no values{missing}"
        q = entry["quantiles"]
        nan = f"; {entry['nan']:,} NaN" if entry.get("nan") else ""
        return f"mean {_g(entry['mean'])}, median {_g(q[10])}, [{_g(entry['min'])}, {_g(entry['max'])}]{nan}{missing}"
    if kind == "categorical":
        total = sum(c for _, c in entry["values"]) or 1
        shown = ", ".join(f"{_short(v)} {100 * c / total:.0f}%" for v, c in entry["values"][:3])
        more = f" (+{entry['distinct'] - 3} more)" if entry["distinct"] > 3 else ""
        return f"{shown}{more}{missing}" if shown else f"no values{missing}"
    if kind == "text":
        return f"{entry['distinct']:,} distinct, {_g(entry['lengths']['mean'])} chars on average{missing}"
    if kind in ("binary", "list"):
        lengths = entry["lengths"]
        unit = "bytes" if kind == "binary" else "items"
        if lengths["min"] is None:
            return f"no values{missing}"
        return f"{_g(lengths['mean'])} {unit} on average, [{_g(lengths['min'])}, {_g(lengths['max'])}]{missing}"
    if kind == "image":
        size = (f"{_g(entry['width']['min'])}-{_g(entry['width']['max'])} x "
                f"{_g(entry['height']['min'])}-{_g(entry['height']['max'])} px" if entry["width"]["min"] is not None
                else "no readable image")
        fmts = ", ".join(f"{f} {c:,}" for f, c in entry["formats"])
        checked, failures = image_failures(entry)
        bad = "do not decode" if checked == DECODE else "with a header that does not read (pixels not decoded)"
        return f"{size}, {fmts or 'no format'}; {failures:,} {bad}{missing}"
    return f"{entry['count']:,} values{missing}"


def _short(value, width: int = 24) -> str:
    text = str(value)
    return text if len(text) <= width else text[:width - 1] + "\u2026"


def _g(x) -> str:
    return "n/a" if x is None else (f"{x:,}" if isinstance(x, int) else f"{x:.4g}")
