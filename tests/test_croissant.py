"""The Croissant file's own checks and mapping (benchwright.croissant), on the shared tiny WildBox build:
what ``benchwright validate`` refuses, that the records comparison can fail, how Features map to fields."""
from __future__ import annotations

import json
import shutil

import pytest
from datasets import ClassLabel, Features, Image, List, Value

from benchwright import registry
from benchwright.croissant import (CROISSANT, RELEASE_DATE, SOURCE_DATE_EPOCH, check_croissant, field_specs,
                                   limitations, release_date)
from benchwright.manifest import describe_files
from tests.croissant_helpers import croissant_rows, parquet_rows
from tests.quality_builds import tiny_build


@pytest.fixture(scope="module")
def wildbox(tmp_path_factory):
    return tiny_build("wildbox", tmp_path_factory)[1]


def _edited(root, tmp_path, edit):
    copy = tmp_path / "wildbox"
    shutil.copytree(root, copy)
    doc = json.loads((copy / CROISSANT).read_text())
    edit(doc)
    (copy / CROISSANT).write_text(json.dumps(doc, indent=2))
    [result] = check_croissant(registry.get("wildbox"), copy, describe_files(copy))
    return result


def test_validate_refuses_a_croissant_file_that_does_not_match_the_files(wildbox, tmp_path):
    def drop_shard(doc):
        doc["distribution"] = [d for d in doc["distribution"] if d["@id"] != "boxes/train-00000-of-00001.parquet"]
    result = _edited(wildbox, tmp_path / "a", drop_shard)
    assert not result["ok"] and "boxes/train-00000-of-00001.parquet: a shard croissant.json does not declare" \
        in result["detail"]

    def escape(doc):
        fo = next(d for d in doc["distribution"] if d["@type"] == "cr:FileObject")
        fo["contentUrl"] = "../elsewhere/" + fo["contentUrl"]
    result = _edited(wildbox, tmp_path / "b", escape)
    assert not result["ok"] and "is not a path inside the build" in result["detail"]

    def narrow(doc):
        fs = next(d for d in doc["distribution"] if d["@id"] == "parquet-boxes")
        fs["includes"] = "boxes/train-*.parquet"
    result = _edited(wildbox, tmp_path / "c", narrow)
    assert not result["ok"] and "parquet-boxes: includes" in result["detail"]

    def untyped(doc):  # a field without a data type: mlcroissant's own validation refuses it
        rs = next(r for r in doc["recordSet"] if r["@id"] == "segments")
        rs["field"][0].pop("dataType")
    result = _edited(wildbox, tmp_path / "d", untyped)
    assert not result["ok"] and "does not load with mlcroissant" in result["detail"]

    def no_column(doc):
        rs = next(r for r in doc["recordSet"] if r["@id"] == "segments")
        rs["field"] = [f for f in rs["field"] if f["@id"] != "segments/num_tracks"]
    result = _edited(wildbox, tmp_path / "e", no_column)
    assert not result["ok"] and "no field for the columns ['num_tracks']" in result["detail"]

    (tmp_path / "f").mkdir()
    copy = tmp_path / "f" / "wildbox"
    shutil.copytree(wildbox, copy)
    (copy / CROISSANT).unlink()
    [result] = check_croissant(registry.get("wildbox"), copy, describe_files(copy))
    assert not result["ok"] and "croissant.json is missing" in result["detail"]


def test_the_records_comparison_sees_a_field_read_from_the_wrong_column(wildbox, tmp_path):
    """The metadata-describes-the-data test can fail: a field pointed at another column of the same type
    reads back rows that differ from the Parquet's."""
    import mlcroissant as mlc

    copy = tmp_path / "wildbox"
    shutil.copytree(wildbox, copy)
    doc = json.loads((copy / CROISSANT).read_text())
    rs = next(r for r in doc["recordSet"] if r["@id"] == "segments")
    field = next(f for f in rs["field"] if f["@id"] == "segments/num_frames")
    field["source"]["extract"]["column"] = "num_boxes"
    (copy / CROISSANT).write_text(json.dumps(doc))
    dataset = registry.get("wildbox")
    read = croissant_rows(copy, dataset, "segments", mlc.Dataset(jsonld=str(copy / CROISSANT)))
    assert read != parquet_rows(copy, dataset, "segments")
    assert [r["num_frames"] for r in read] == [r["num_boxes"] for r in parquet_rows(copy, dataset, "segments")]


def test_features_map_to_croissant_fields_and_what_has_no_form_is_listed():
    features = Features({
        "id": Value("string"), "n": Value("int32"), "x": Value("float32"), "ok": Value("bool"),
        "blob": Value("binary"), "label": ClassLabel(names=["a", "b"]), "img": Image(),
        "K": List(List(Value("float64"), length=3), length=3), "tags": List(Value("string")),
        "meta": {"score": Value("float64"), "inner": {"deep": Value("int64")}},
        "items": List({"name": Value("string"), "kind": ClassLabel(names=["p", "q"])}),
        "pictures": List(Image()),
    })
    specs = {s["name"]: s for s in field_specs(features, "c")}
    assert [specs[k]["data_type"] for k in ("id", "n", "x", "ok", "blob", "label", "img")] == \
        ["sc:Text", "cr:Int32", "cr:Float32", "sc:Boolean", "sc:Text", "cr:Int64", "sc:ImageObject"]
    assert specs["img"]["path"] == ["bytes"] and specs["label"]["names"] == ["a", "b"]
    assert specs["K"]["shape"] == [3, 3] and specs["tags"]["shape"] == [-1]
    deep = specs["meta"]["sub_fields"][1]["sub_fields"][0]
    assert (deep["id"], deep["column"], deep["path"]) == ("c/meta/inner/deep", "meta", ["inner", "deep"])
    kind = specs["items"]["sub_fields"][1]
    assert specs["items"]["shape"] == [-1] and kind["path"] == ["kind"] and kind["names"] == ["p", "q"]
    assert specs["pictures"]["unsupported"] == "a list of images"

    class Toy:
        configs = {"c": features}
        subset_splits = {"lite": "full"}

    text = "\n".join(limitations(Toy))
    for expected in ("`blob` holds bytes", "`img` is described by its bytes", "`items.kind` is a class label inside",
                     "`meta` is a struct", "`pictures` is a list of images", "split `lite` repeats rows of `full`"):
        assert expected in text


def test_the_date_is_fixed_unless_source_date_epoch_gives_one(monkeypatch):
    monkeypatch.delenv(SOURCE_DATE_EPOCH, raising=False)
    assert release_date() == RELEASE_DATE
    monkeypatch.setenv(SOURCE_DATE_EPOCH, "1767225600")  # 2026-01-01T00:00:00Z
    assert release_date() == "2026-01-01"
