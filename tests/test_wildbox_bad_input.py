"""Bad WildBox input: each case is quarantined with a reason naming the file and record; counts reconcile."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchwright.errors import BuildError, SourceError
from tests.wildbox_helpers import build_wildbox, tiny_source


def segments_of(root: Path) -> list[Path]:
    return sorted(p.parent.parent for p in root.glob("*/*/vggt_results/cameras.json"))


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))  # json writes NaN as the bare token NaN, as numpy-based writers do


@pytest.fixture(scope="module")
def corrupted(tmp_path_factory):
    """A tiny source with one kind of damage per segment (or per track), and its build."""
    root = tiny_source(tmp_path_factory.mktemp("raw") / "wildbox")
    segs = segments_of(root)
    rel = lambda p: p.relative_to(root).as_posix()  # noqa: E731
    cases = {}

    (segs[0] / "vggt_results" / "cameras.json").write_text('{"cameras": [{"frame_index": 0, ')
    cases["malformed cameras"] = (f"{rel(segs[0])}/vggt_results/cameras.json", "malformed JSON")
    (segs[1] / "vggt_results" / "tracking_summary.json").unlink()
    cases["missing tracking"] = (f"{rel(segs[1])}/vggt_results/tracking_summary.json", "file is missing")
    (segs[2] / "vggt_results" / "tracking_summary.json").write_text('{"tracks": [1, 2')
    cases["malformed tracking"] = (f"{rel(segs[2])}/vggt_results/tracking_summary.json", "malformed JSON")

    frames = sorted(segs[3].glob("frame_*.jpg"))
    frames[0].write_bytes(b"\xff\xd8\xff\xe0 this is not a JPEG")
    cases["corrupt frame"] = (rel(frames[0]), "not a decodable image")
    frames[1].unlink()
    cases["missing frame"] = (rel(frames[1]), "cannot read")
    frames[2].unlink()
    frames[2].mkdir()  # unreadable as a file (root can read any mode, so permissions cannot show this)
    cases["unreadable frame"] = (rel(frames[2]), "cannot read")
    (segs[5] / "sam3_masks" / "loop").symlink_to("..")  # a symlink loop must not hang the walk

    # a later segment with a track seen in >= 4 frames and at least one other track
    for seg in segs[4:]:
        trk = seg / "vggt_results" / "tracking_summary.json"
        summary = json.loads(trk.read_text())
        ids = sorted(summary["tracks"], key=lambda t: (-len(summary["tracks"][t]["frames"]), int(t)))
        if len(ids) >= 2 and len(summary["tracks"][ids[0]]["frames"]) >= 4:
            break
    else:
        pytest.fail("the tiny source has no segment with a track seen in 4 frames")

    def damage(data):
        t = data["tracks"][ids[0]]
        t["centers"][0][2] = float("nan")
        t["rotation_matrices"][1][0][0] *= 1.5
        t["dimensions"][2][1] = 0.0
        t["frames"][3] = 9999
        data["tracks"][ids[1]]["class_name"] = "unicorn"

    edit_json(trk, damage)
    loc = f"{rel(seg)}/vggt_results/tracking_summary.json#track={ids[0]}"
    fr = summary["tracks"][ids[0]]["frames"]
    cases["nan geometry"] = (f"{loc},frame_index={fr[0]}", "NaN or infinite")
    cases["non-orthonormal"] = (f"{loc},frame_index={fr[1]}", "not orthonormal")
    cases["zero dimension"] = (f"{loc},frame_index={fr[2]}", "not all positive")
    cases["frame outside"] = (f"{loc},frame_index=9999", "is not a frame of the segment")
    cases["unknown class"] = (f"{rel(seg)}/vggt_results/tracking_summary.json#track={ids[1]},", "unknown class 'unicorn'")

    out = tmp_path_factory.mktemp("out")
    built = build_wildbox(root, out, max_bad_fraction=1.0)
    return root, built, cases


def quarantine_rows(built: Path) -> list[dict]:
    rows = []
    for f in sorted((built / "_build" / "quarantine").glob("*.jsonl")):
        rows += [json.loads(line) for line in f.read_text().splitlines()]
    return rows


@pytest.mark.parametrize("case", ["malformed cameras", "missing tracking", "malformed tracking", "corrupt frame",
                                  "missing frame", "unreadable frame", "nan geometry", "non-orthonormal", "zero dimension",
                                  "frame outside", "unknown class"])
def test_each_bad_input_is_quarantined_with_its_reason(corrupted, case):
    _, built, cases = corrupted
    locator, reason = cases[case]
    rows = quarantine_rows(built)
    hits = [r for r in rows if r["locator"].startswith(locator) and reason in r["reason"]]
    assert hits, f"no quarantine row for {locator!r} with {reason!r}; rows: {rows[:20]}"
    assert all(r["stage"] in ("ParseSegment", "AnnotateSegment") for r in hits)


def test_counts_reconcile_with_the_damage(corrupted):
    _, built, _ = corrupted
    manifest = json.loads((built / "_build" / "manifest.json").read_text())
    units = manifest["reconciliation"]["units"]
    for unit, e in units.items():
        assert e["read"] == e["written"] + e["quarantined"] + e["filtered"], unit
    assert units["segment"]["quarantined"] == 3
    assert units["frame"]["quarantined"] == 3
    assert units["box"]["quarantined"] >= 5


def test_too_many_bad_records_fail_and_publish_nothing(corrupted, tmp_path):
    root, _, _ = corrupted
    with pytest.raises(BuildError, match="max-bad-fraction"):
        build_wildbox(root, tmp_path / "out", max_bad_fraction=0.0)
    assert not (tmp_path / "out" / "wildbox").exists()


def test_a_failed_build_keeps_the_previous_publication(corrupted, tmp_path):
    root, built, _ = corrupted
    out = tmp_path / "out"
    shutil.copytree(built, out / "wildbox")
    before = (out / "wildbox" / "_build" / "manifest.json").read_bytes()
    with pytest.raises(BuildError):
        build_wildbox(root, out, max_bad_fraction=0.0)
    assert (out / "wildbox" / "_build" / "manifest.json").read_bytes() == before


def test_an_unreadable_source_fails_with_one_clear_message(tmp_path):
    with pytest.raises(SourceError, match="not a folder"):
        build_wildbox(tmp_path / "does-not-exist", tmp_path / "out")
    (tmp_path / "empty" / "junk").mkdir(parents=True)
    with pytest.raises(SourceError, match="no <video>/<segment>/ folders"):
        build_wildbox(tmp_path / "empty", tmp_path / "out")
    assert not (tmp_path / "out" / "wildbox").exists()


def test_a_source_whose_every_segment_is_broken_fails(tmp_path):
    root = tiny_source(tmp_path / "raw")
    for seg in segments_of(root):
        (seg / "vggt_results" / "cameras.json").write_text("not json")
    with pytest.raises(BuildError, match="yielded nothing|max-bad-fraction"):
        build_wildbox(root, tmp_path / "out")
    assert not (tmp_path / "out" / "wildbox").exists()
