import json

import numpy as np
import pytest

from benchwright.formats import geometry
from benchwright.errors import RecordError, SourceError
from benchwright.formats import omni3d

K = [[1500.0, 0.0, 960.0], [0.0, 1500.0, 540.0], [0.0, 0.0, 1.0]]


def annotation(ann_id, image_id, center, ypr, category=(1002, "elephant")):
    R = geometry.rotation_from_ypr([ypr])[0]
    dims = np.array([0.4, 0.55, 1.0])
    c = geometry.corners(center, dims, R)
    _, box, in_front = geometry.projected_boxes(c, K, 1920, 1080)
    x1, y1, x2, y2 = box[0].tolist()
    return {
        "id": ann_id, "image_id": image_id, "dataset_id": 7, "category_id": category[0],
        "category_name": category[1], "valid3D": True, "behind_camera": not in_front[0],
        "bbox": [x1, y1, x2 - x1, y2 - y1], "bbox2D_tight": [x1, y1, x2, y2], "bbox2D_trunc": [x1, y1, x2, y2],
        "bbox2D_proj": box[0], "bbox3D_cam": c[0], "center_cam": np.asarray(center, float), "dimensions": dims,
        "R_cam": R, "truncation": 0.0, "visibility": 1.0, "segmentation_pts": 812, "lidar_pts": 10,
        "depth_error": 0.0, "area": (x2 - x1) * (y2 - y1), "iscrowd": 0, "track_id": ann_id % 2,
        "bbox_source": "sam3", "support_points": 57, "projected_truncation": 0.0, "occlusion_visibility": 0.8,
    }


def document():
    info = {"id": "wildbox-validation", "source": "wildbox", "name": "WildBox", "split": "validation",
            "version": "1.0", "known_category_ids": [1000, 1002], "scene_scales": {"DJI_ä/seg1": 0.0123}}
    categories = [{"id": 1000, "name": "giraffe", "supercategory": "animal"},
                  {"id": 1002, "name": "elephant", "supercategory": "animal"}]
    images = [{"id": i, "dataset_id": 7, "file_path": f"DJI_ä/seg1/frame_{i:06d}.jpg", "height": 1080,
               "width": 1920, "K": np.array(K)} for i in (1, 2, 3)]
    annotations = [annotation(10, 1, [0.1, 0.2, 1.0], [0.3, 0.6, 0.1]),
                   annotation(11, 1, [-0.2, 0.1, 1.4], [-1.0, 0.5, 0.0], (1000, "giraffe")),
                   annotation(12, 2, [0.0, 0.0, 0.9], [2.0, 0.4, -0.2])]
    return omni3d.omni3d_document(info, categories, images, annotations)


def test_write_read_round_trip_is_exact_and_deterministic(tmp_path):
    doc = document()
    path = omni3d.write_omni3d(doc, tmp_path / "validation.json")
    text = path.read_text(encoding="utf-8")
    assert "DJI_ä" in text  # ensure_ascii=False
    assert omni3d.write_omni3d(document(), tmp_path / "again.json").read_bytes() == path.read_bytes()
    raw = json.loads(text)
    assert list(raw) == ["info", "images", "categories", "annotations"]
    assert list(raw["annotations"][0]) == list(omni3d.ANNOTATION_FIELDS)
    assert list(raw["images"][0]) == list(omni3d.IMAGE_FIELDS)
    assert raw == doc

    records = list(omni3d.read_omni3d(path))
    assert [r.image["id"] for r in records] == [1, 2, 3]
    assert [[a["id"] for a in r.annotations] for r in records] == [[10, 11], [12], []]
    got = records[0].annotations[0]
    want = annotation(10, 1, [0.1, 0.2, 1.0], [0.3, 0.6, 0.1])
    for key in ("bbox3D_cam", "center_cam", "dimensions", "R_cam", "bbox2D_proj"):
        np.testing.assert_array_equal(np.array(got[key]), want[key])  # floats survive JSON exactly
    np.testing.assert_allclose(geometry.corners(got["center_cam"], got["dimensions"], [got["R_cam"]])[0],
                               got["bbox3D_cam"])


def corrupt(tmp_path, mutate):
    doc = document()
    mutate(doc["annotations"])
    path = tmp_path / "val.json"
    path.write_text(json.dumps(doc))  # json writes NaN as the NaN token, as careless tools do
    return path


@pytest.mark.parametrize("mutate, reason", [
    (lambda anns: anns[1]["center_cam"].__setitem__(0, float("nan")), "center_cam has a non-finite value"),
    (lambda anns: anns[1]["bbox3D_cam"].pop(), "bbox3D_cam must be 8x3, got shape (7, 3)"),
    (lambda anns: anns[1]["R_cam"].__setitem__(2, [0, 0]), "R_cam is ragged"),
    (lambda anns: anns[1]["dimensions"].__setitem__(0, "1.0"), "dimensions must hold numbers"),
    (lambda anns: anns[1].pop("R_cam"), "missing R_cam"),
    (lambda anns: anns[1].__setitem__("image_id", 99), "image_id 99 is not"),
    (lambda anns: anns[1].__setitem__("category_id", 1005), "category_id 1005 is not in categories"),
])
def test_bad_annotation_is_rejected_with_file_and_id(tmp_path, mutate, reason):
    path = corrupt(tmp_path, mutate)
    with pytest.raises(RecordError) as info:
        list(omni3d.read_omni3d(path))
    assert info.value.locator == "val.json#annotation_id=11"
    assert reason in info.value.reason
    errors = []
    records = list(omni3d.read_omni3d(path, on_error=errors.append))
    assert [e.locator for e in errors] == ["val.json#annotation_id=11"]
    assert [[a["id"] for a in r.annotations] for r in records] == [[10], [12], []]


def test_bad_image_drops_the_image_and_is_reported(tmp_path):
    doc = document()
    doc["images"][1]["K"] = [[1, 0, 0], [0, 1, 0]]
    errors = []
    records = list(omni3d.read_omni3d(doc, on_error=errors.append, locator="val.json"))
    assert [r.image["id"] for r in records] == [1, 3]
    assert [e.locator for e in errors] == ["val.json#image_id=2", "val.json#annotation_id=12"]
    assert "K must be 3x3" in errors[0].reason


def test_unreadable_source_is_a_source_error(tmp_path):
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(SourceError):
        list(omni3d.read_omni3d(tmp_path / "broken.json"))
    with pytest.raises(SourceError):
        list(omni3d.read_omni3d({"images": []}))


def test_document_refuses_records_that_break_the_wildbox_schema():
    doc = document()
    info, cats, images, anns = doc["info"], doc["categories"], doc["images"], doc["annotations"]
    with pytest.raises(RecordError, match=r"annotation_id=10.*dataset_id 1002 is not its image's 7"):
        omni3d.omni3d_document(info, cats, images, [{**anns[0], "dataset_id": 1002}] + anns[1:])
    with pytest.raises(RecordError, match=r"category_name 'zebra' is not 'elephant'"):
        omni3d.omni3d_document(info, cats, images, [{**anns[0], "category_name": "zebra"}])
    with pytest.raises(RecordError, match=r"image_id=1: missing \['K'\], unknown \['intrinsics'\]"):
        image = {k: v for k, v in images[0].items() if k != "K"} | {"intrinsics": K}
        omni3d.omni3d_document(info, cats, [image], [])
    with pytest.raises(RecordError, match="duplicate annotation id"):
        omni3d.omni3d_document(info, cats, images, [anns[0], anns[0]])
    with pytest.raises(RecordError, match="center_cam has a non-finite value"):
        omni3d.omni3d_document(info, cats, images, [{**anns[0], "center_cam": [0.0, float("inf"), 1.0]}])


def _columns(anns: list[dict]) -> omni3d.AnnotationColumns:
    """The annotations as columns, the array fields as numpy arrays (the export's form)."""
    arrays = {"bbox", "bbox2D_tight", "bbox2D_trunc", "bbox2D_proj", "bbox3D_cam", "center_cam", "dimensions",
              "R_cam"}
    return omni3d.AnnotationColumns({f: np.array([a[f] for a in anns], float) if f in arrays else [a[f] for a in anns]
                                     for f in omni3d.ANNOTATION_FIELDS})


def test_annotation_columns_write_the_same_text_as_dicts():
    doc = document()
    info, cats, images, anns = doc["info"], doc["categories"], doc["images"], doc["annotations"]
    as_dicts = "".join(omni3d.iter_omni3d_document(info, cats, images, anns))
    # in two chunks, and mixed with dicts: the same bytes
    assert "".join(omni3d.iter_omni3d_document(info, cats, images, [_columns(anns[:2]), _columns(anns[2:])])) == as_dicts
    assert "".join(omni3d.iter_omni3d_document(info, cats, images, [anns[0], _columns(anns[1:])])) == as_dicts
    # an integer array stays integers, as the dict path writes them
    ints = {**anns[0], "dimensions": [1, 2, 3]}
    cols = _columns([ints])
    cols.columns["dimensions"] = np.array([[1, 2, 3]])
    assert ("".join(omni3d.iter_omni3d_document(info, cats, images, [cols]))
            == "".join(omni3d.iter_omni3d_document(info, cats, images, [ints])))


def test_annotation_columns_report_a_bad_row_as_the_dict_path_does():
    doc = document()
    info, cats, images, anns = doc["info"], doc["categories"], doc["images"], doc["annotations"]
    bad = [anns[0], {**anns[1], "center_cam": [0.0, float("nan"), 1.0]}, anns[2]]
    with pytest.raises(RecordError, match=r"annotation_id=11: center_cam has a non-finite value"):
        "".join(omni3d.iter_omni3d_document(info, cats, images, [_columns(bad)]))
    # a row failing its links before a later row's bad array: the first bad row is named, as with dicts
    cols = omni3d.AnnotationColumns({**_columns(anns[:1]).columns, "image_id": [99]})
    with pytest.raises(RecordError, match=r"annotation_id=10: image_id 99 is not a \(valid\) image"):
        "".join(omni3d.iter_omni3d_document(info, cats, images, [cols]))
    shaped = _columns(anns[:1])
    shaped.columns["R_cam"] = np.zeros((1, 4, 3))
    with pytest.raises(RecordError, match=r"annotation_id=10: R_cam must be 3x3, got shape \(4, 3\)"):
        "".join(omni3d.iter_omni3d_document(info, cats, images, [shaped]))
    missing = omni3d.AnnotationColumns({k: v for k, v in _columns(anns[:1]).columns.items() if k != "area"})
    with pytest.raises(RecordError, match=r"missing \['area'\]"):
        "".join(omni3d.iter_omni3d_document(info, cats, images, [missing]))


def test_a_nan_or_infinity_in_any_field_is_refused_on_both_paths():
    """JSON has no NaN: the writer refuses one in a scalar field too (orjson, which writes the records,
    would write null), as dicts and as columns."""
    doc = document()
    info, cats, images, anns = doc["info"], doc["categories"], doc["images"], doc["annotations"]
    for field, bad in (("occlusion_visibility", float("nan")), ("area", float("inf"))):
        rows = [anns[0], {**anns[1], field: bad}]
        for given in (rows, [_columns(rows)]):
            with pytest.raises(ValueError, match="not JSON compliant"):
                "".join(omni3d.iter_omni3d_document(info, cats, images, given))
    with pytest.raises(ValueError, match="not JSON compliant"):
        omni3d.dumps_omni3d({**doc, "info": {**info, "scene_scales": {"a": float("nan")}}})
    # the floats are written as their shortest round-trip text: read back, the same numbers
    text = omni3d.dumps_omni3d(doc)
    assert json.loads(text) == json.loads(json.dumps(doc))
