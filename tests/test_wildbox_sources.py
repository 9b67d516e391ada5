"""The other WildBox input formats: KITTI object folders (the real fixtures) and Omni3D JSON."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from benchwright.formats import kitti
from tests.quality_builds import tiny_build
from tests.wildbox_helpers import build_wildbox

# The fixture's KITTI classes stand in for species, so the real geometry flows through the build.
SPECIES_FOR = {"Car": "elephant", "Van": "plains_zebra", "Truck": "rhino", "Pedestrian": "giraffe",
               "Person_sitting": "giraffe", "Cyclist": "gazelle", "Tram": "rhino", "Misc": "grevys_zebra"}


def read_boxes(root: Path):
    return pq.ParquetDataset(sorted((root / "boxes").glob("*.parquet"))).read().to_pylist()


@pytest.fixture(scope="module")
def kitti_build(kitti_dir, tmp_path_factory):
    src = tmp_path_factory.mktemp("kitti") / "training"
    stems = ["000000", "000001"]  # the fixture frames that have images
    for sub in ("calib", "image_2"):
        (src / sub).mkdir(parents=True)
        for stem in stems:
            for f in (kitti_dir / sub).glob(f"{stem}.*"):
                shutil.copy(f, src / sub / f.name)
    (src / "label_2").mkdir()
    originals = {}
    for stem in stems:
        lines = (kitti_dir / "label_2" / f"{stem}.txt").read_text().splitlines()
        renamed = [" ".join([SPECIES_FOR.get(line.split()[0], line.split()[0])] + line.split()[1:]) for line in lines]
        originals[stem] = [kitti.parse_label_lines(line)[0][0] for line in renamed]
        if stem == "000001":
            renamed += ["elephant 0.00 0 1.00 10.0 20.0",  # a truncated line
                        "Car 0.00 0 -1.57 600.00 170.00 640.00 200.00 1.50 1.60 3.90 1.00 1.70 20.00 -1.57"]
        (src / "label_2" / f"{stem}.txt").write_text("\n".join(renamed) + "\n")
    out = tmp_path_factory.mktemp("out")
    return originals, build_wildbox(src, out, max_bad_fraction=1.0)


def test_kitti_rows_become_canonical_boxes(kitti_build):
    originals, built = kitti_build
    boxes = read_boxes(built)
    objects = [o for objs in originals.values() for o in objs if not o.is_dontcare]
    assert len(boxes) == len(objects) > 0
    for box in boxes:
        stem = box["frame_id"].split("/")[-1]
        obj = [o for o in originals[stem] if not o.is_dontcare][box["track_id"]]
        canon = kitti.to_canonical(obj)
        s = box["scale_factor"]
        np.testing.assert_allclose(np.array(box["center_cam"]) / s, canon["center_cam"], atol=1e-9)
        np.testing.assert_allclose(np.array(box["dimensions"]) / s, canon["dimensions"], atol=1e-9)
        np.testing.assert_allclose(np.array(box["R_cam"]), canon["R_cam"], atol=1e-12)
        assert box["kitti_representable"] is True
        assert box["bbox_source"] == 2  # "label"
        np.testing.assert_allclose(box["bbox2d_tight"], obj.bbox, atol=1e-9)


def test_kitti_export_reproduces_the_labels(kitti_build):
    originals, built = kitti_build
    export = built / "exports" / "kitti"
    frame_map = {}
    for line in (export / "frame_map.txt").read_text().splitlines():
        name, frame_id, _, _ = line.split()
        frame_map[frame_id.split("/")[-1]] = export / "training" / "label_2" / f"{name}.txt"
    scales = {b["frame_id"].split("/")[-1]: b["scale_factor"] for b in read_boxes(built)}
    for stem, objs in originals.items():
        exported = kitti.parse_label_file(frame_map[stem])
        expected = [o for o in objs if not o.is_dontcare]
        assert [o.type for o in exported] == [o.type for o in expected]
        s = scales[stem]
        for got, want in zip(exported, expected):
            # the export is in normalised units, written with 6 decimals (KITTI's 2 would lose a metre-scale
            # box's centimetres once normalised: 0.01 / s is 0.2 m here)
            assert np.allclose([got.x / s, got.y / s, got.z / s], [want.x, want.y, want.z], rtol=0, atol=1e-6 / s)
            assert np.allclose([got.h / s, got.w / s, got.l / s], [want.h, want.w, want.l], rtol=0, atol=1e-6 / s)
            assert got.rotation_y == pytest.approx(want.rotation_y, abs=1e-6)
            assert np.allclose(got.bbox, want.bbox, atol=0.006)


def test_kitti_bad_lines_are_quarantined_and_dontcare_filtered(kitti_build):
    _, built = kitti_build
    q = [json.loads(x) for f in (built / "_build" / "quarantine").glob("*.jsonl") for x in f.read_text().splitlines()]
    f = [json.loads(x) for p in (built / "_build" / "filtered").glob("*.jsonl") for x in p.read_text().splitlines()]
    assert any(r["locator"].startswith("label_2/000001.txt:") and "columns" in r["reason"] for r in q)
    assert any(r["locator"].startswith("label_2/000001.txt:") and "unknown class 'Car'" in r["reason"] for r in q)
    assert f and all(r["reason"].startswith("DontCare") for r in f)
    manifest = json.loads((built / "_build" / "manifest.json").read_text())
    for unit, e in manifest["reconciliation"]["units"].items():
        assert e["read"] == e["written"] + e["quarantined"] + e["filtered"], unit


def test_omni3d_export_builds_back_to_the_same_boxes(tmp_path, tmp_path_factory):
    first = tmp_path / "out1" / "wildbox"
    shutil.copytree(tiny_build("wildbox", tmp_path_factory)[1], first)  # the tiny source's build (shared)
    # the built folder itself is an Omni3D source: exports/omni3d/*.json + exports/images/
    second = build_wildbox(first, tmp_path / "out2")

    def key(b):
        return (b["video_id"], b["segment_id"].split("/")[-1], b["frame_id"].split("/")[-1], b["track_id"])

    a = sorted(read_boxes(first), key=key)
    b = sorted(read_boxes(second), key=key)
    assert [key(x) for x in a] == [key(x) for x in b]
    for x, y in zip(a, b):
        np.testing.assert_allclose(x["corners_cam"], y["corners_cam"], rtol=1e-9, atol=1e-9)
        assert x["species"] == y["species"]
        np.testing.assert_allclose(x["bbox2d_tight"], y["bbox2d_tight"], atol=1e-9)
        # already normalised (over all the segment's boxes, some of which the export does not hold): kept as is
        assert y["scale_factor"] == 1.0
    rules = pq.ParquetDataset(sorted((second / "segments").glob("*.parquet"))).read(columns=["scale_rule"])
    assert set(rules["scale_rule"].to_pylist()) == {"given"}


def test_kitti_tracking_sequence_keeps_track_ids(kitti_dir, tmp_path):
    """A KITTI tracking folder: label_02/<seq>.txt with `frame track_id` in front of the 15 columns."""
    src = tmp_path / "tracking"
    (src / "label_02").mkdir(parents=True)
    (src / "image_02" / "0000").mkdir(parents=True)
    (src / "calib").mkdir()
    shutil.copy(kitti_dir / "calib" / "000000.txt", src / "calib" / "0000.txt")
    lines = []
    for frame in (0, 1):
        shutil.copy(kitti_dir / "image_2" / "000000.png", src / "image_02" / "0000" / f"{frame:06d}.png")
        for n, line in enumerate((kitti_dir / "label_2" / "000000.txt").read_text().splitlines()):
            tokens = line.split()
            tokens[0] = SPECIES_FOR.get(tokens[0], tokens[0])
            tokens[11] = f"{float(tokens[11]) + 0.1 * frame:.2f}"  # the animal moves 10 cm along x
            lines.append(f"{frame} {7 + n} " + " ".join(tokens))
    (src / "label_02" / "0000.txt").write_text("\n".join(lines) + "\n")
    built = build_wildbox(src, tmp_path / "out")
    boxes = sorted(read_boxes(built), key=lambda b: (b["frame_index"], b["track_id"]))
    assert [(b["frame_index"], b["track_id"]) for b in boxes] == [(0, 7), (1, 7)]
    assert boxes[0]["segment_id"] == boxes[1]["segment_id"] == "kitti_tracking/0000"
    s = boxes[0]["scale_factor"]
    assert (boxes[1]["center_cam"][0] - boxes[0]["center_cam"][0]) / s == pytest.approx(0.1, abs=1e-9)


def species_tree_source(flat: Path, out: Path) -> dict[str, str]:
    """The flat tiny source laid out as the authors' tree, <species folder>/WildBox_sam3-vggtv1_processed/
    WildBox/<video>/<segment>/, with the plural folder names their preparation is run with ("giraffes",
    "plains_zebras") and the class names a plain SAM3 prompt gives ("zebra" for either zebra, "object" for the
    rest: the authors' default). Returns each segment's true species."""
    from benchwright.schemas.wildbox import canonical_species

    truth = {}
    for summary in sorted(flat.glob("*/*/vggt_results/tracking_summary.json")):
        seg = summary.parent.parent
        doc = json.loads(summary.read_text())
        species = {canonical_species(t["class_name"]) for t in doc["tracks"].values()}.pop()
        for track in doc["tracks"].values():
            track["class_name"] = "zebra" if species.endswith("zebra") else "object"
        target = out / f"{species}s" / "WildBox_sam3-vggtv1_processed" / "WildBox" / seg.parent.name / seg.name
        shutil.copytree(seg, target)
        (target / "vggt_results" / "tracking_summary.json").write_text(json.dumps(doc))
        truth[f"{seg.parent.name}/{seg.name}"] = species
    return truth


def test_species_come_from_the_authors_species_folders_when_the_class_name_is_generic(tmp_path, tmp_path_factory):
    """A plain "zebra" (or the authors' default "object") prompt names no species: the species folder decides,
    as in the authors' preparation, and the boxes say so (species_from). A class name that names another
    species than its folder is quarantined, naming both."""
    from benchwright.wildbox.stages import annotate_segment
    from benchwright.wildbox.sources import discover, parse_unit
    from benchwright.schemas.wildbox import SPECIES, SPECIES_FROM
    from benchwright.stage import Reject

    flat = tiny_build("wildbox", tmp_path_factory)[0]  # the tiny source shared by the test run: read, never changed
    truth = species_tree_source(flat, tmp_path / "tree")
    fmt, units = discover(str(tmp_path / "tree"))
    assert fmt == "wildbox" and len(units) == len(truth)
    zebra_seen = set()
    for unit in units:
        seg = next(parse_unit(str(tmp_path / "tree"), fmt, unit))
        assert seg.segment_id in truth and unit.endswith(seg.segment_id) and seg.video_id == unit.split("/")[-2]
        assert seg.species == truth[seg.segment_id]
        out = list(annotate_segment(seg, "train"))
        assert not [r for r in out if isinstance(r, Reject) and "class" in r.reason]
        boxes = out[-1]["boxes"].to_pylist()
        assert boxes and {SPECIES[b["species"]] for b in boxes} == {truth[seg.segment_id]}
        assert {SPECIES_FROM[b["species_from"]] for b in boxes} == {"folder"}
        zebra_seen.add(truth[seg.segment_id]) if "zebra" in truth[seg.segment_id] else None
    assert zebra_seen == {"grevys_zebra", "plains_zebra"}

    # a specific class name decides, and must agree with its folder
    unit = next(u for u in units if u.startswith("grevys_zebras/"))
    summary = tmp_path / "tree" / unit / "vggt_results" / "tracking_summary.json"
    doc = json.loads(summary.read_text())
    first, second = sorted(doc["tracks"])[:2]
    doc["tracks"][first]["class_name"], doc["tracks"][second]["class_name"] = "Grevy's zebra", "plains zebra"
    summary.write_text(json.dumps(doc))
    out = list(annotate_segment(next(parse_unit(str(tmp_path / "tree"), "wildbox", unit)), "train"))
    refused = {r.locator.split("#track=")[1].split(",")[0] for r in out if isinstance(r, Reject)
               and r.reason == "class 'plains zebra' names plains_zebra, its source folder grevys_zebra"}
    assert refused == {second}
    by_track = {b["track_id"]: SPECIES_FROM[b["species_from"]] for b in out[-1]["boxes"].to_pylist()}
    assert by_track[int(first)] == "class_name" and int(second) not in by_track
