"""The core's record checks (issue 25): quarantine rows made in one place (reasons in words, at most
1 KB), strict JSON and YAML readers (repeated keys, nesting), integer ranges from the Features, names
no file system takes. Property tests run them on random input."""
from __future__ import annotations

import io
import json
import re

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from benchwright import strict_json, strict_yaml
from benchwright.errors import MAX_REASON_BYTES, RecordError, describe_exception, reason_in_words
from benchwright.stage import Reject, Stage, reject_row

TYPE_NAME = re.compile(r"(^|: |; |\()([a-z_.]*[A-Z]\w*(Error|Exception|Invalid|ZipFile))(:|\)|$)")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=3000), st.text(max_size=3000),
       st.sampled_from(["", "KeyError: ", "pyarrow.lib.ArrowInvalid: ", "x: PdfReadError: ", "(OverflowError)"]))
def test_a_quarantine_row_says_its_reason_in_words_in_at_most_1_kb(reason, locator, prefix):
    row = reject_row("Stage", Reject("box", locator, prefix + reason))
    assert len(row["reason"].encode("utf-8", "surrogatepass")) <= MAX_REASON_BYTES
    assert len(row["locator"].encode("utf-8", "surrogatepass")) <= MAX_REASON_BYTES
    if prefix:
        assert not TYPE_NAME.search(row["reason"][: len(prefix) + 2])


def test_a_short_reason_in_words_is_kept_and_a_long_one_says_how_much_was_cut():
    assert reason_in_words("unknown class 'ValueError'") == "unknown class 'ValueError'"  # a quoted value stays
    assert reason_in_words("KeyError: 'id'") == "missing key: 'id'"
    assert reason_in_words("pdf does not parse: PdfReadError: EOF") == "pdf does not parse: pdf read error: EOF"
    cut = reason_in_words("unknown class " + "x" * 1_000_000)
    assert cut.startswith("unknown class xxx") and cut.endswith("more bytes)") and len(cut.encode()) <= 1024


def test_an_unexpected_failure_in_a_stage_is_quarantined_in_words():
    def fails(element):
        yield {"id": element}
        raise OverflowError("Python int too large to convert to C long")

    stage = Stage("Parse", fails, unit="record")
    stage.setup()
    (out,) = list(stage.process("a.json"))
    row = out.value
    assert (row["unit"], row["locator"]) == ("record", "a.json")
    assert row["reason"] == "number out of range: Python int too large to convert to C long"
    assert describe_exception(KeyError("id")) == "missing key 'id'"


def test_a_record_nested_too_deeply_to_encode_fails_its_element_not_the_build():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    stage = Stage("Parse", lambda element: [{"value": deep, "text": "\udcff"}], unit="record")
    stage.setup()
    (out,) = list(stage.process("a.json"))
    assert out.tag == "quarantine" and "nested too deeply" in out.value["reason"]


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a": ' * 100_000 + "1" + "}" * 100_000])
def test_json_nested_100000_deep_is_a_value_error(text):
    with pytest.raises(ValueError, match="nested deeper than the JSON decoder"):
        strict_json.loads(text)
    with pytest.raises(ValueError, match="nested deeper than the JSON decoder"):
        strict_json.raw_decode("x = " + text, 4)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 3000), st.sampled_from(["[]", "{}"]))
def test_json_and_yaml_nesting_of_any_depth_is_read_or_refused_by_name(depth, brackets):
    opening, closing = (brackets[0], brackets[1]) if brackets == "[]" else ('{"a": ', "}")
    text = opening * depth + ("1" if brackets == "{}" else "") + closing * depth
    try:
        value = strict_json.loads(text)
    except ValueError as err:
        assert "nested" in str(err)
    else:
        assert (strict_json.depth_problem(value) is None) == (depth <= strict_json.MAX_DEPTH)
    yaml_text = ("[" * depth + "]" * depth) if brackets == "[]" else ("{a: " * depth + "1" + "}" * depth)
    try:
        strict_yaml.load(yaml_text)
        assert depth <= strict_yaml.MAX_DEPTH
    except yaml.YAMLError as err:
        assert depth > strict_yaml.MAX_DEPTH - 1 and "nested more than" in str(err)


@pytest.mark.parametrize("text, key", [("a: 1\nb: 2\na: 3\n", "a"), ("x: {b: 1, b: 2}\n", "b"),
                                       ("- {1: a, 1: b}\n", 1)])
def test_yaml_repeated_key_is_refused_naming_its_line(text, key):
    with pytest.raises(yaml.YAMLError, match=re.escape(f"duplicate key {key!r}")):
        strict_yaml.load(text)
    assert yaml.safe_load(text) is not None  # PyYAML itself keeps the last value without a word


def test_integer_ranges_come_from_the_features():
    from benchwright.ranges import check_records, integer_ranges, record_problems
    from benchwright.schemas import wildbox as wb, workspace_bench as wsb

    assert integer_ranges(wb.BOXES)["track_id"] == (-2**31, 2**31 - 1, "int32")
    assert integer_ranges(wb.FRAMES)["objects[].track_id"] == (-2**31, 2**31 - 1, "int32")
    assert integer_ranges(wsb.CONFIGS["tasks"])["absolute_id"][:2] == (-2**63, 2**63 - 1)
    assert record_problems(wb.FRAMES, {"frame_index": 3, "objects": [{"track_id": 3_000_000_000}]}) == [
        "objects[].track_id = 3000000000 does not fit the column's int32 (-2,147,483,648 to 2,147,483,647)"]
    assert record_problems(wb.BOXES, {"track_id": True, "frame_index": 2**31 - 1}) == []
    with pytest.raises(RecordError, match=r"tasks.absolute_id = 10000000000000000000 does not fit") as err:
        check_records(wsb.CONFIGS, {"tasks": {"absolute_id": 10**19}, "rubrics": [{"index": 1}]}, "tasks.json#x")
    assert err.value.locator == "tasks.json#x"


@settings(max_examples=200, deadline=None)
@given(st.integers())
def test_an_integer_fits_exactly_when_arrow_takes_it(value):
    import pyarrow as pa

    from benchwright.ranges import record_problems
    from benchwright.schemas import wildbox as wb

    problems = record_problems(wb.BOXES, {"track_id": value})
    try:
        pa.array([value], pa.int32())
        assert problems == []
    except (pa.ArrowInvalid, OverflowError):
        assert problems and "does not fit" in problems[0]


def test_names_no_file_system_takes():
    from benchwright.files import name_problem

    assert name_problem("train/ads/x.png") is None and name_problem("é" * 127) is None
    assert "NUL" in name_problem("a\0.png")
    assert "256 bytes" in name_problem("a/" + "é" * 128)
    assert json.loads(json.dumps("a\0b")) == "a\0b"  # JSON carries a NUL: the reader must refuse it


def _part(locator: str, names: list[str], boxes_per_frame: int):
    """A segment part as parse_omni3d_file makes one: frames by path, ``boxes_per_frame`` boxes on each."""
    import numpy as np

    from benchwright.wildbox.segments import Observations, RawFrame

    frames = [RawFrame(i, f"file:///src/seg/{n}", f"seg/{n}", np.eye(3, 4), (10, 10), np.eye(3, 4))
              for i, n in enumerate(sorted(names))]
    obs = Observations()
    for f in frames:
        for t in range(boxes_per_frame):
            obs.add(t, f.frame_index, [0, 0, 5], [1, 1, 1], np.eye(3), [1, 1, 4, 4], "giraffe",
                    f"{locator}#annotation_id={f.image_rel}/{t}")
    return obs.segment(segment_id="seg", video_id="seg", locator=locator, frames=frames, bbox_source="label")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from([f"f{i}.{e}" for i in range(6) for e in ("jpg", "png")]), min_size=1,
                         max_size=6, unique=True), min_size=1, max_size=4), st.integers(0, 2))
def test_omni3d_parts_of_one_folder_merge_into_one_segment(listings, boxes):
    """However documents list a folder's images (split between them, repeated, two images of one stem), the
    merged segment has one frame per file stem, the first listing's, and every other listing is a quarantined
    frame with its boxes: frames and boxes are all accounted for."""
    from benchwright.wildbox.sources import merge_segments

    parts = [_part(f"doc{n}.json", names, boxes) for n, names in enumerate(listings)]
    out = list(merge_segments(("seg", parts)))
    (seg,) = [o for o in out if not isinstance(o, Reject)]
    rejects = [o for o in out if isinstance(o, Reject)]
    stems = {name.split(".")[0] for names in listings for name in names}
    assert sorted(f.image_rel.split("/")[-1].split(".")[0] for f in seg.frames) == sorted(stems)
    assert [f.frame_index for f in seg.frames] == list(range(len(seg.frames)))
    listed = sum(map(len, listings))
    assert sum(r.unit == "frame" for r in rejects) == listed - len(stems)
    assert len(seg.track_id) + sum(r.count for r in rejects if r.unit == "box") == listed * boxes
    assert set(seg.frame_index.tolist()) <= set(range(len(seg.frames)))
    assert len({(int(f), int(t)) for f, t in zip(seg.frame_index, seg.track_id)}) == len(seg.track_id)


@pytest.mark.parametrize("text", ["a: &x [1]\nb: *x\n", "[" * 101 + "]" * 101, "{a: " * 101 + "1" + "}" * 101,
                                  "[" * 2000 + "]" * 2000, "x: {b: 1, b: 2}\n", "- [1, {c: d}]\n" * 3,
                                  "k: v\n---\nx: 1\n", "a: [1,\n", 'id: "bold\\ud800unit"\n', "n: 1e3\nd: 2024-01-02\n"])
def test_yaml_through_libyaml_reads_and_refuses_as_the_pure_python_loader(monkeypatch, text):
    """Sources are read with libyaml (``_StrictCLoader``, its refusals over the event stream first); what it
    refuses, and every read without it, the pure-Python loader decides. Both give the same value or error."""
    def outcome():
        try:
            return ("read", strict_yaml.load(io.StringIO(text)))
        except yaml.YAMLError as err:
            return (type(err).__name__, str(err))

    assert strict_yaml._C is not None  # the wheel's libyaml: the path every build takes
    with_libyaml = outcome()
    monkeypatch.setattr(strict_yaml, "_C", None)
    assert with_libyaml == outcome()
    if text.startswith("id:"):  # an escaped lone surrogate: libyaml refuses it, PyYAML reads it (a hostile id)
        assert with_libyaml == ("read", {"id": "bold\ud800unit"})
