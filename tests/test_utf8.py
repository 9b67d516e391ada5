"""Strings a file put in a record are made encodable before Beam's coder sees them (benchwright.utf8,
applied by every Stage): properties over arbitrary Unicode, surrogates included."""
from __future__ import annotations

import collections

import pyarrow as pa
import pytest
from apache_beam.coders import FastPrimitivesCoder
from hypothesis import given, settings
from hypothesis import strategies as st

from benchwright.errors import RecordError
from benchwright.stage import QUARANTINE, Reject, Stage
from benchwright.utf8 import REPLACEMENT, encodable, encodable_str

# any code point, with surrogates drawn often (uniform draws almost never hit U+D800-U+DFFF)
CHARS = st.one_of(st.characters(), st.characters(categories=["Cs"]), st.characters(max_codepoint=0x7F))
TEXT = st.text(CHARS, max_size=40)
VALUES = st.recursive(
    st.one_of(TEXT, st.integers(), st.floats(allow_nan=False), st.none(), st.binary(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.lists(inner, max_size=5).map(tuple),
                            st.dictionaries(TEXT, inner, max_size=5)),
    max_leaves=30)


def expected(text: str) -> str:
    """The rule, written out code point by code point: a high surrogate followed by a low one is one
    character (UTF-16), any other surrogate is U+FFFD, every other character stays."""
    out, i = [], 0
    while i < len(text):
        c = ord(text[i])
        if 0xD800 <= c <= 0xDBFF and i + 1 < len(text) and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
            out.append(chr(0x10000 + ((c - 0xD800) << 10) + (ord(text[i + 1]) - 0xDC00)))
            i += 2
            continue
        out.append(REPLACEMENT if 0xD800 <= c <= 0xDFFF else text[i])
        i += 1
    return "".join(out)


def strings_in(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings_in(k)
            yield from strings_in(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings_in(v)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_a_string_is_made_encodable_by_the_rule(text):
    fixed = encodable_str(text)
    assert fixed == expected(text)
    assert fixed.encode("utf-8").decode("utf-8") == fixed
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert fixed is text  # nothing to repair: the same object


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_any_record_reaches_beams_coder_and_arrow(value):
    fixed, repaired = encodable(value)
    before, after = list(strings_in(value)), list(strings_in(fixed))
    assert after == [expected(s) for s in before]
    assert repaired == sum(a != b for a, b in zip(before, after))
    assert (fixed is value) == (repaired == 0)
    coder = FastPrimitivesCoder()
    assert coder.decode(coder.encode(fixed)) == fixed
    pa.array(after, pa.string())  # Arrow's string columns take every one


def test_containers_keep_their_types():
    Pair = collections.namedtuple("Pair", "a b")
    fixed, repaired = encodable({"k\udcff": [Pair("\ud83d\ude00", 1), ("x", "\udfff")], "n": b"\xff"})
    assert fixed == {"k\ufffd": [Pair("\U0001F600", 1), ("x", "\ufffd")], "n": b"\xff"} and repaired == 3
    assert isinstance(fixed["k\ufffd"][0], Pair)


def _run(stage: Stage, element):
    stage.setup()
    return list(stage.process(element))


@settings(max_examples=100, deadline=None)
@given(VALUES, TEXT, TEXT)
def test_every_output_of_a_stage_is_encodable(record, reason, locator):
    """What a stage yields (records, quarantine rows) and what a failure says: whatever strings the
    input held, Beam's coder encodes every output (before the fix, ScanFiles died on a lone surrogate)."""
    def fn(element):
        yield Reject("file", locator, reason)
        yield element

    def failing(element):
        raise RecordError(locator, reason)
        yield  # a generator

    coder = FastPrimitivesCoder()
    for stage in (Stage("S", fn, "file"), Stage("F", failing, "file"),
                  Stage("E", lambda e: [(_ for _ in ()).throw(ValueError(reason))], "file")):
        for out in _run(stage, record):
            value = out.value if hasattr(out, "tag") else out
            assert coder.decode(coder.encode(value)) == value
            if hasattr(out, "tag"):
                assert out.tag == QUARANTINE and value["reason"].endswith(encodable_str(reason))


def test_a_surrogate_is_counted_where_the_stage_repaired_it(monkeypatch):
    counts = collections.Counter()

    class Counter:
        def __init__(self, name):
            self.name = name

        def inc(self, n=1):
            counts[self.name] += n

    monkeypatch.setattr("benchwright.stage.counter", Counter)
    out = _run(Stage("ScanFiles", lambda e: [{"reference": "\udcff.csv", "ok": "fine"}], "file"), None)
    assert out == [{"reference": "\ufffd.csv", "ok": "fine"}]
    assert counts["unencodable_strings.ScanFiles"] == 1


@pytest.mark.parametrize("text", ["", "plain", "é\U0001F600"])
def test_encodable_text_is_returned_as_it_is(text):
    assert encodable_str(text) is text and encodable([text])[1] == 0
