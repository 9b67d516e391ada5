"""The VLM unlearning sources, read through fsspec (any URL).

``vlguard``: VLGuard's release layout: ``train.json`` / ``test.json`` at the root and each file's
images under the folder of the same name (``train/bad_ads/<uuid>.png``: where ``train.zip`` and
``test.zip`` unpack). The embedded default (``benchwright synth vlm_unlearning``) has the same layout.

``mapped``: benchmarks of the same shape (MLLMU-Bench, FIUBench, CLEAR) through ``mapping.yaml`` at
the root, which names the annotation files (a JSON array, JSON Lines for ``.jsonl``, or Parquet as
``datasets`` writes it for ``.parquet``: the Hugging Face releases, whose Image column holds each
image's bytes), the image root and which field holds the id, image, instruction, response, role and
optional description:

```yaml
benchmark: CLEAR
image_root: images            # relative to the mapping's folder
files:
  - {path: forget10.jsonl, role: forget}
  - {path: retain90.jsonl, role: retain}
  - {path: test.jsonl, split: test}        # role from fields.role
fields: {id: id, image: image_path, instruction: question, response: answer, role: kind, description: caption}
roles: {forget10: forget, retain90: retain}  # source role values -> forget | retain
```

A file with a fixed ``role`` needs no role field (only files without one read it). Without
``fields.id`` (the Hugging Face releases have no id column) a record's id is its position in its
file (``records.mapped_record``). A record's key is its file's path without the extension and its id
(``forget10/7``), so files of one name in different folders (``forget05/train-00000-of-00001.parquet``,
``retain95/train-00000-of-00001.parquet``) keep their records apart. A test file's rows keep their
role in ``subset`` (``forget`` or ``retain``): the evaluator scores them as the sets ``test_forget``
and ``test_retain``.

Annotation files are read on the driver (a file that is not JSON, or not a list of records, is a
``SourceError`` naming it: the build is refused); each record is then checked on its own in the
pipeline (``parse_record``), so a bad record is quarantined, never fatal.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import posixpath

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from benchwright import strict_json, strict_yaml
from benchwright.errors import RecordError, SourceError
from benchwright.fields import clip
from benchwright.files import Root, file_version
from benchwright.records import Read, Reject
from benchwright.tables import is_file_storage
from benchwright.vlm_unlearning.config import FORMATS
from benchwright.vlm_unlearning import records as rec

VLGUARD_FILES = ("train.json", "test.json")


def detect_format(url: str) -> str:
    fs, root = fsspec.core.url_to_fs(url)
    if fs.exists(posixpath.join(root, rec.MAPPING_FILE)):
        return "mapped"
    if any(fs.exists(posixpath.join(root, name)) for name in VLGUARD_FILES):
        return "vlguard"
    raise SourceError(f"{url}: neither a VLGuard source ({' / '.join(VLGUARD_FILES)}) nor a mapped one "
                      f"({rec.MAPPING_FILE}); `benchwright synth vlm_unlearning --out DIR` writes one")


def read_mapping(url: str) -> rec.Mapping:
    where = posixpath.join(url, rec.MAPPING_FILE)
    try:
        with fsspec.open(where, "rt", encoding="utf-8") as f:
            doc = strict_yaml.load(f)
    except (OSError, UnicodeDecodeError) as err:
        raise SourceError(f"{where}: cannot read the mapping: {err}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise SourceError(f"{where}: malformed YAML{f' (line {mark.line + 1})' if mark else ''}: "
                          f"{getattr(err, 'problem', err)}") from None
    return rec.parse_mapping(doc, where)


def _load_records(url: str, name: str, image_field: str | None = None) -> list:
    """A file's records: a JSON array, JSON Lines (``.jsonl``) or Parquet (``.parquet``)."""
    linked_out = Root(url, "the source").link_problem(posixpath.join(url, name))
    if linked_out:  # an annotation file whose bytes are not the source's
        raise SourceError(f"{name}: the file {linked_out}")
    if name.endswith(".parquet"):
        return _load_parquet_records(url, name, image_field)
    try:
        with fsspec.open(posixpath.join(url, name), "rt", encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as err:
        raise SourceError(f"{name}: cannot read: {err}") from None
    if name.endswith(".jsonl"):  # a bad line is one bad record (quarantined by parse_record), not a bad file
        return [_json_line(line, n) for n, line in strict_json.json_lines(text)]
    try:
        data = strict_json.loads(text)
    except ValueError as err:  # malformed, a repeated key, an integer past Python's digit limit
        where = f" (line {err.lineno})" if isinstance(err, json.JSONDecodeError) else ""
        raise SourceError(f"{name}: not valid JSON{where}: {getattr(err, 'msg', err)}") from None
    if not isinstance(data, list):
        raise SourceError(f"{name}: expected a JSON array of records, got {type(data).__name__}")
    return [_travelling(record, f"index={i}") for i, record in enumerate(data)]


@dataclasses.dataclass(frozen=True)
class Unreadable:
    """A record that cannot be read as it is: a JSON Lines line that is not a JSON value, a record nested
    deeper than the code that carries it walks. Quarantined naming its place (``where``: ``line=N``, ``index=N``)."""

    where: str
    reason: str


def _travelling(record, where: str):
    """``record``, or ``Unreadable`` when it nests too deeply to travel as it is (``strict_json.depth_problem``:
    Beam's coder, ``repr`` and the UTF-8 repair walk it recursively)."""
    problem = strict_json.depth_problem(record)
    return record if problem is None else Unreadable(where, f"the record is {problem}")


def _json_line(text: str, number: int):
    try:
        return _travelling(strict_json.loads(text), f"line={number}")
    except ValueError as err:
        return Unreadable(f"line={number}", f"not valid JSON: {getattr(err, 'msg', err)}")


def _load_parquet_records(url: str, name: str, image_field: str | None) -> list:
    """A Parquet file's records, one row group at a time. The image bytes stay in the file: a row
    whose Image value holds bytes gets ``{EMBEDDED_KEY: url of file, column, row group, row, version,
    "path": ...}`` (the pipeline reads the bytes, ``read_image_bytes``); a row holding only a path
    refers to a file under the image root, as in JSON."""
    where = posixpath.join(url, name)
    rows: list[dict] = []
    try:
        version = _file_version(where)
        with fsspec.open(where, "rb") as f:
            parquet = pq.ParquetFile(f)
            names = parquet.schema_arrow.names
            embedded = image_field in names and is_file_storage(parquet.schema_arrow.field(image_field).type)
            columns = [c for c in names if c != image_field or not embedded] + ([f"{image_field}.path"] if embedded else [])
            for group in range(parquet.num_row_groups):
                part = parquet.read_row_group(group, columns=columns).to_pylist()
                if embedded:
                    stored = parquet.read_row_group(group, columns=[f"{image_field}.bytes"]).column(image_field)
                    has_bytes = stored.combine_chunks().field("bytes").is_valid().to_pylist()
                    for i, (row, held) in enumerate(zip(part, has_bytes)):
                        path = (row.get(image_field) or {}).get("path")
                        row[image_field] = {rec.EMBEDDED_KEY: rec.embedded_image_url(where, image_field, group, i, version),
                                            "path": path} if held else path
                rows += part
    except (OSError, pa.ArrowException) as err:
        raise SourceError(f"{name}: not a readable Parquet file: {err}") from None
    return rows


def _file_version(url: str) -> str:
    """``files.file_version`` of the file at ``url``."""
    fs, path = fsspec.core.url_to_fs(url)
    return file_version(fs.info(path)).replace("&", "")  # it travels in an embedded image's url


@functools.lru_cache(maxsize=2)  # records arrive grouped by row group (the pipeline groups them so)
def _row_group_images(file_url: str, column: str, group: int, version: str) -> list:
    if _file_version(file_url) != version:
        raise OSError(f"{file_url} changed since it was listed")
    with fsspec.open(file_url, "rb") as f:
        stored = pq.ParquetFile(f).read_row_group(group, columns=[f"{column}.bytes"]).column(column)
        return stored.combine_chunks().field("bytes").to_pylist()


def image_group(url: str) -> tuple:
    """The unit images are read in: a Parquet row group for an embedded image, else the file."""
    embedded = rec.parse_embedded_image_url(url)
    return (embedded.file_url, embedded.group) if embedded else (url, 0)


def read_image_bytes(url: str) -> bytes:
    """An image's bytes: the file at ``url``, or the row of a Parquet file's Image column an embedded
    image's url names. Raises ``FileNotFoundError`` / ``OSError`` like ``open``."""
    embedded = rec.parse_embedded_image_url(url)
    if embedded is None:
        with fsspec.open(url, "rb") as f:
            return f.read()
    images = _row_group_images(embedded.file_url, embedded.column, embedded.group, embedded.version)
    if embedded.row >= len(images) or images[embedded.row] is None:
        raise OSError(f"{embedded.file_url} row group {embedded.group} has no image at row {embedded.row}")
    return images[embedded.row]


def list_records(url: str, fmt: str | None = None) -> tuple[str, list[tuple[str, int, object]], rec.Mapping | None]:
    """(format, [(file, index, raw record)], mapping) of the source at ``url``; the format is
    detected when not given. Mapped files are checked against the mapping here: a field the mapping
    names that the file's records lack entirely (a misspelt field) is a ``SourceError``."""
    fmt = fmt or detect_format(url)
    if fmt not in FORMATS:
        raise SourceError(f"unknown source format {fmt!r}; one of {', '.join(FORMATS)}")
    fs, root = fsspec.core.url_to_fs(url)
    out = []
    if fmt == "vlguard":
        names = [n for n in VLGUARD_FILES if fs.exists(posixpath.join(root, n))]
        if not names:
            raise SourceError(f"{url}: no {' or '.join(VLGUARD_FILES)}")
        for name in names:
            out += [(name, i, raw) for i, raw in enumerate(_nonempty(_load_records(url, name), name))]
        return fmt, out, None
    mapping = read_mapping(url)
    for mapped in mapping.files:
        rows = _nonempty(_load_records(url, mapped.path, mapping.fields["image"]), mapped.path)
        keys = set().union(*(r for r in rows if isinstance(r, dict))) if rows else set()
        # the description is optional per record; a file with a fixed role need not hold the role field
        unread = {"description"} | ({"role"} if mapped.role is not None else set())
        for part, field in sorted(mapping.fields.items()):
            if rows and field not in keys and part not in unread:
                raise SourceError(f"{posixpath.join(url, rec.MAPPING_FILE)}: fields/{part} names {field!r}, which "
                                  f"no record of {mapped.path} has (its fields: {', '.join(sorted(keys)[:12])})")
        out += [(mapped.path, i, raw) for i, raw in enumerate(rows)]
    return fmt, out, mapping


def _nonempty(records: list, name: str) -> list:
    """An annotation file's records; a file that holds none is refused naming it (an empty VLGuard train.json
    would otherwise build a set without forget or retain examples)."""
    if not records:
        kind = ("a Parquet file with no rows" if name.endswith(".parquet") else "no JSON Lines"
                if name.endswith(".jsonl") else "an empty JSON array")
        raise SourceError(f"{name}: holds no records ({kind}); every annotation file the source has must hold some")
    return records


def image_root(url: str, fmt: str, source_file: str, mapping: rec.Mapping | None) -> str:
    if fmt == "vlguard":  # VLGuard: train.json's images under train/, test.json's under test/
        return posixpath.join(url, rec.file_stem(source_file))
    return posixpath.join(url, mapping.image_root)


def _pairs_in(raw, fmt: str) -> int:
    if fmt == "mapped":
        return 1
    pairs = raw.get("instr-resp") if isinstance(raw, dict) else None
    return len(pairs) if isinstance(pairs, list) else 0


def parse_record(element, url: str, fmt: str, mapping: rec.Mapping | None):
    """The stage function that reads one record (``source=True``): yields the ``SourceRecord`` with
    ``Read("example", n)`` for its good pairs, and ``Reject`` rows for bad pairs or a bad record
    (whose pairs are quarantined with it, so examples reconcile too)."""
    source_file, index, raw = element
    if isinstance(raw, Unreadable):
        yield from reject_record(f"{source_file}#{raw.where}", raw.reason, _pairs_in(raw, fmt))
        return
    root = image_root(url, fmt, source_file, mapping)
    try:
        if fmt == "vlguard":
            record, problems = rec.vlguard_record(raw, source_file, index, root)
        else:
            mapped = next(m for m in mapping.files if m.path == source_file)
            record, problems = rec.mapped_record(raw, mapping, mapped, index, root), []
    except RecordError as err:
        yield from reject_record(err.locator, err.reason, _pairs_in(raw, fmt))
        return
    for p in problems:
        yield Reject("example", p.locator, p.reason)
    if not record.examples:
        yield Reject("record", record.locator, "no usable instruction-response pair (each is quarantined)")
        return
    # path text leaving the root is refused by the parser; a symlink (of the file or a folder above it)
    # leaving it, here: its bytes are not the source's (object storage has no links)
    linked_out = rec.image_link_problem(record.image_url, root) if rec.parse_embedded_image_url(
        record.image_url) is None else None
    if linked_out:
        yield from reject_record(record.locator, f"image {clip(record.image_path)} {linked_out}", len(record.examples))
        return
    yield Read("example", len(record.examples))
    yield record


def reject_record(locator: str, reason: str, examples: int):
    """A refused record, and its examples with it (one row standing for all of them)."""
    yield Reject("record", locator, reason)
    if examples:
        yield Reject("example", locator, f"its record is refused: {reason}", count=examples)
