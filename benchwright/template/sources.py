"""Template's raw format: a folder (any fsspec URL) of JSON Lines files, ``*.jsonl`` at any depth, read in name
order; each non-blank line is one record ``{"id": text, "text": text, "label": one of LABELS, "split": one of
SPLITS}`` and nothing else (a misspelt key is refused, never dropped in silence).

SLOT: one parser per raw format your release has. A parser reads through fsspec, checks what one record holds
and raises ``RecordError(locator, reason)`` naming the file and line: the stage that calls it turns that into
the record's quarantine row, never a stopped build. A source that cannot be read at all is a ``SourceError``.
"""
from __future__ import annotations

import fsspec

from benchwright import fields, strict_json
from benchwright.errors import RecordError, SourceError
from benchwright.files import OutsideRoot, Root, list_files
from benchwright.schemas.template import LABELS, SPLITS

FIELDS = ("id", "text", "label", "split")
SUFFIX = ".jsonl"
MAX_ID_BYTES = 256  # an id is a short name; a longer one is a mistake in the source, not a record


def source_files(url: str) -> list[str]:
    """The source's JSON Lines files, as paths relative to it, sorted; a ``SourceError`` when it has none."""
    fs, root = fsspec.core.url_to_fs(url)
    if not fs.isdir(root):
        raise SourceError(f"{url}: not a folder; `benchwright synth template --out DIR` writes a source")
    prefix = root.rstrip("/") + "/"
    files = [path.removeprefix(prefix) for path in list_files(url) if path.endswith(SUFFIX)]
    if not files:
        raise SourceError(f"{url}: no {SUFFIX} file in it; `benchwright synth template --out DIR` writes a source")
    return files


def read_lines(url: str, rel: str):
    """(locator ``<file>:<line>``, the line's text or a ``RecordError`` for a line that is not UTF-8) of every
    non-blank line of the source's file ``rel``. A line ends at "\\n" only (a JSON string may hold U+2028)."""
    try:
        path = Root(url, "the source").join(rel, "file")
    except OutsideRoot as err:
        raise RecordError(rel, str(err)) from None
    with fsspec.open(path, "rb") as f:
        data = f.read()
    for number, raw in enumerate(data.split(b"\n"), start=1):
        locator = f"{rel}:{number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            yield locator, RecordError(locator, f"not UTF-8: byte 0x{raw[err.start]:02x} at column {err.start + 1}")
            continue
        if line.strip():
            yield locator, line


def parse_record(line: str, locator: str) -> dict:
    """One line -> ``{"id", "text", "label", "split"}``, every field checked; a ``RecordError`` naming the line
    and what is wrong (not JSON, a repeated key, nesting too deep, a missing, unknown or mistyped field)."""
    try:
        record = strict_json.loads(line)
    except ValueError as err:
        raise RecordError(locator, f"not JSON: {getattr(err, 'msg', err)}") from None
    if not isinstance(record, dict):
        raise RecordError(locator, f"a record is a JSON object, got {fields.quote(record)}")
    missing = [k for k in FIELDS if k not in record]
    unknown = sorted(k for k in record if k not in FIELDS)
    if missing or unknown:
        raise RecordError(locator, "; ".join([f"field {', '.join(missing)} is missing"] * bool(missing)
                                             + [f"unknown field {', '.join(map(fields.clip, unknown))}"] * bool(unknown)))
    for name in FIELDS:
        fields.string(record[name], name, locator)
    if len(record["id"].encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:
        raise RecordError(locator, f"'id' is longer than {MAX_ID_BYTES} bytes: {fields.clip(record['id'])}")
    for name, allowed in (("label", LABELS), ("split", SPLITS)):
        if record[name] not in allowed:
            raise RecordError(locator, f"'{name}' {fields.clip(record[name])} is not one of {', '.join(allowed)}")
    return record
