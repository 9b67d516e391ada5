"""``benchwright diff OLD NEW`` shows a planted change exactly: a WildBox video added and a box moved,
a WordEval case removed; the same on object storage (the local S3 server of the object-storage tests)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from benchwright import registry
from benchwright.cli import main as cli_main
from benchwright.diff import _equal, diff_builds
from tests.builds import build_dataset
from tests.quality_builds import planted_wildbox
from tests.test_object_storage import BUCKET
from tests.test_object_storage import s3_endpoint as s3_endpoint  # the moto server fixture, reused


def _ids(root: Path, config: str, column: str) -> set:
    return set(pq.ParquetDataset(sorted((root / config).glob("*.parquet"))).read(columns=[column])
               .column(column).to_pylist())


def _all(diff: dict, config: str, what: str) -> int:
    return sum(e[what] for e in diff["configs"][config]["splits"].values())


def test_wildbox_planted_video_and_moved_box_exactly(tmp_path_factory, tmp_path, capsys):
    p = planted_wildbox(tmp_path_factory)
    old, new, video = p["old"], p["new"], p["planted"]["new_video"]
    out_json = tmp_path / "diff.json"
    assert cli_main(["diff", str(old), str(new), "--json", str(out_json), "--examples", "1000"]) == 0
    printed = capsys.readouterr().out
    diff = json.loads(out_json.read_text())
    for config, id_column in (("frames", "frame_id"), ("boxes", "box_id"), ("segments", "segment_id")):
        added = {x for e in diff["configs"][config]["splits"].values() for x in e["examples"]["added"]}
        # exactly the new video's rows were added, and all of them
        assert added == _ids(new, config, id_column) - _ids(old, config, id_column)
        assert added and all(x.startswith(f"{video}/") for x in added)
        assert _all(diff, config, "removed") == 0
    # the moved observation is the one changed box, its frame the one changed frame; no segment changed
    changed_boxes = [x for e in diff["configs"]["boxes"]["splits"].values() for x in e["examples"]["changed"]]
    assert len(changed_boxes) == 1
    box = changed_boxes[0]
    assert box.startswith(p["planted"]["moved_segment"] + "/") and box.endswith(f"#{p['planted']['moved_track']}")
    assert [x for e in diff["configs"]["frames"]["splits"].values() for x in e["examples"]["changed"]] == \
        [box.split("#")[0]]
    assert _all(diff, "segments", "changed") == 0
    columns = diff["configs"]["boxes"]["columns"]
    assert {"center_cam", "corners_cam", "bev_footprint"} <= set(columns)
    assert "species" not in columns and "box_id" not in columns
    moved = columns["center_cam"]["examples"][0]
    assert moved["id"] == box and moved["old"] != moved["new"]
    assert "objects.center_cam" in diff["configs"]["frames"]["columns"]
    # inputs, statistics side by side, drift figures, files
    assert diff["old"]["input"]["sha256"] != diff["new"]["input"]["sha256"]
    boxes_train = next(c for c in diff["drift"] if c["target"] == "boxes/train" and c["metric"] == "rows")
    stats = diff["statistics"]["boxes"]
    assert (boxes_train["previous"], boxes_train["current"]) == (stats["old"]["splits"]["train"]["rows"],
                                                                  stats["new"]["splits"]["train"]["rows"])
    assert diff["files"]["added"] > 0
    assert f"`{box}`" in printed and "| boxes | train |" in printed


def test_wordeval_planted_case_removed_exactly(tmp_path):
    # one composition template and one unit no composition uses keep the build short
    ds = registry.get("wordeval").configured(unit_ids=("font_bold", "font_color", "tables_add"),
                                             libreoffice_gate="none")
    source = tmp_path / "raw"
    registry.part("wordeval", "synth")(str(source), scale="tiny")
    out = tmp_path / "out"
    first = build_dataset(ds, source, out)
    old = tmp_path / "old" / "wordeval"
    shutil.copytree(first, old)
    # the unit keeps its first base document only: its cases on the second one are removed
    units = source / "units" / "05_tables.yaml"
    doc = yaml.safe_load(units.read_text(encoding="utf-8"))
    next(u for u in doc["units"] if u["id"] == "tables_add")["max_bases"] = 1
    units.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    new = build_dataset(ds, source, out)
    removed = _ids(old, "atomic", "case_id") - _ids(new, "atomic", "case_id")
    assert removed and _ids(new, "atomic", "case_id") < _ids(old, "atomic", "case_id")
    assert all(case.startswith("tables_add--") for case in removed)
    diff = diff_builds(str(old), str(new), examples=100)
    test = diff["configs"]["atomic"]["splits"]["test"]
    assert (test["added"], test["removed"], test["changed"]) == (0, len(removed), 0)
    assert test["examples"]["removed"] == sorted(removed)
    assert diff["configs"]["atomic"]["columns"] == {}  # the cases kept are byte for byte the same
    for split, e in diff["configs"]["compositional"]["splits"].items():  # no composition uses the unit
        assert (e["added"], e["removed"], e["changed"]) == (0, 0, 0), split


def test_diff_on_object_storage_matches_the_local_diff(tmp_path_factory, s3_endpoint):
    import s3fs

    s3fs.S3FileSystem.clear_instance_cache()  # a client cached by an earlier module points at its stopped server
    p = planted_wildbox(tmp_path_factory)
    fs = fsspec.filesystem("s3")
    for name in ("old", "new"):
        # each build but its exports (296 of its 318 files: KITTI and Omni3D copies of the data, which a diff does
        # not read): every PUT costs the server CPU, and the manifest, data, statistics and card all go up
        for f in sorted(p[name].rglob("*")):
            if f.is_file() and f.relative_to(p[name]).parts[0] != "exports":
                fs.put_file(str(f), f"{BUCKET}/diff/{name}/wildbox/{f.relative_to(p[name]).as_posix()}")
    remote = diff_builds(f"s3://{BUCKET}/diff/old/wildbox", f"s3://{BUCKET}/diff/new/wildbox")
    local = diff_builds(str(p["old"]), str(p["new"]))
    assert remote["configs"] == local["configs"] and remote["drift"] == local["drift"]
    assert remote["old"]["input"] == local["old"]["input"]


def test_equality_is_columnar_at_every_level():
    a = pa.array([[{"x": 1.0, "y": [1, 2]}], None, [{"x": float("nan"), "y": []}], [{"x": 1.0, "y": [3]}], []])
    b = pa.array([[{"x": 1.0, "y": [1, 2]}], None, [{"x": float("nan"), "y": []}], [{"x": 1.0, "y": [4]}], [{"x": 0.0, "y": []}]])
    same, inner = _equal(a, b)
    assert same.tolist() == [True, True, True, False, False]
    assert inner["x"].tolist() == [True, True, True, True, True]  # row 4's lists differ in length, not in x
    assert inner["y"].tolist() == [True, True, True, False, True]
