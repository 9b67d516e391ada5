"""What Template's pipeline stages do to one element (``pipelines/template.py`` runs them, no Beam here): a source
file's lines become records (a bad line is its record's quarantine row, a record below the word count a filtered
row), and of the records that share an id the first is kept.

SLOT: your stage functions. Each takes one element and yields records (dicts in the config's storage form, each
with its ``split``), ``Reject`` rows for what it refuses and ``Read`` marks for sub-units it read; an exception
fails the whole element (quarantined, counted, never a stopped build).
"""
from __future__ import annotations

from benchwright import fields
from benchwright.errors import RecordError
from benchwright.records import FILTERED, SPLIT_COLUMN, Reject
from benchwright.template.sources import parse_record, read_lines

UNIT = "record"  # what is read and reconciled (the declaration's Unit)


def parse_file(element: tuple[str, str], min_words: int):
    """Every record of one source file ``(source URL, file relative to it)``, with its words counted."""
    url, rel = element
    for locator, line in read_lines(url, rel):
        try:
            if isinstance(line, RecordError):
                raise line
            record = parse_record(line, locator)
        except RecordError as err:
            yield Reject(UNIT, err.locator, err.reason)
            continue
        words = len(record["text"].split())
        if words < min_words:  # a documented rule, not bad input: a filtered row
            yield Reject(UNIT, locator, f"{words} words, fewer than min_words ({min_words})", kind=FILTERED)
            continue
        yield {"id": record["id"], "text": record["text"], "label": record["label"], "num_words": words,
               SPLIT_COLUMN: record["split"], "locator": locator}  # locator: not a column (ToTables leaves it out)


def first_of_each_id(keyed: tuple[str, list[dict]]):
    """The records that share an id: the first in file and line order kept, each later one quarantined naming
    it (the writer refuses a repeated id, and which copy wins must not depend on the runner)."""
    record_id, records = keyed
    first, *later = sorted(records, key=source_order)
    yield first
    for record in later:
        yield Reject(UNIT, record["locator"], f"id {fields.clip(record_id)} repeats the record at {first['locator']}")


def source_order(record: dict) -> tuple[str, int]:
    rel, line = record["locator"].rsplit(":", 1)
    return rel, int(line)
