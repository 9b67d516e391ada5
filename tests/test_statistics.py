"""Per-build statistics (columnar, deterministic) and the checks derived from the data's meaning:
references between configs, WildBox cuboid geometry, class shares, image bytes that decode. What holds for
every dataset runs on every registered dataset's tiny build (made once per test run); what is particular to
WildBox (nested columns, cuboids, class-share bounds) on WildBox's."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from benchwright import registry
from benchwright.statistics import STATISTICS, compute_statistics, image_statistics, write_statistics
from benchwright.validate import check_data, check_images, check_proportions, check_references
from benchwright.writer import write_parquet
from tests.quality_builds import tiny_build, tiny_wildbox
from tests.wildbox_helpers import damaged_box_copy

WILDBOX = registry.get("wildbox")


def image_columns(name: str) -> list[tuple[str, str]]:
    """(config, column) of every top-level Image feature of a registered dataset (its schema, not its pipeline:
    read when the tests are collected)."""
    import importlib

    from datasets import Image

    schema = importlib.import_module(f"benchwright.schemas.{name}")
    return [(config, column) for config, features in schema.CONFIGS.items()
            for column, feature in features.items() if isinstance(feature, Image)]


WITH_IMAGES = [name for name in registry.names() if image_columns(name)]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return tiny_wildbox(tmp_path_factory)[1]


def _read(root, config, split=None):
    files = sorted((root / config).glob(f"{split}-*.parquet" if split else "*.parquet"))
    return pq.ParquetDataset(files).read()


def _rewrite(root, config, change) -> None:
    """Applies ``change(table) -> table`` to every shard of a config (a damaged copy of a build)."""
    for f in sorted((root / config).glob("*.parquet")):
        write_parquet(change(pq.read_table(f)), str(f))


def test_statistics_are_stored_listed_and_agree_with_the_files(built):
    stats = json.loads((built / STATISTICS).read_text())
    assert STATISTICS in {f["path"] for f in json.loads((built / "_build/manifest.json").read_text())["files"]}
    boxes = _read(built, "boxes", "validation")
    entry = stats["configs"]["boxes"]["splits"]["validation"]
    assert entry["rows"] == boxes.num_rows
    depth = np.sort(boxes.column("depth").to_numpy())
    d = entry["columns"]["depth"]
    assert (d["kind"], d["count"], d["min"], d["max"]) == ("numeric", len(depth), depth[0], depth[-1])
    assert d["mean"] == pytest.approx(depth.mean()) and d["quantiles"][10] == pytest.approx(np.median(depth))
    assert sum(d["histogram"]["counts"]) == len(depth)
    names = WILDBOX.configs["boxes"]["species"].names
    codes = boxes.column("species").to_pylist()
    assert dict(map(tuple, entry["columns"]["species"]["values"])) == \
        {names[c]: codes.count(c) for c in set(codes)}
    assert entry["columns"]["box_id"]["kind"] == "text"
    assert entry["columns"]["R_cam[][]"]["count"] == 9 * boxes.num_rows
    frames = stats["configs"]["frames"]["splits"]["validation"]
    assert frames["columns"]["objects[].depth"]["count"] == boxes.num_rows
    image = frames["columns"]["image"]
    assert (image["checked"], image["count"], image["failures"], image["formats"]) == \
        ("header", frames["rows"], 0, [["JPEG", frames["rows"]]])
    assert image["width"]["min"] == _read(built, "frames", "validation").column("width").to_numpy().min()


@pytest.mark.parametrize("name", registry.names())
def test_every_datasets_statistics_agree_with_its_files(name, tmp_path_factory):
    """Per config and split of the tiny build: the rows, and for every top-level number its count, min, max and
    mean and for every ClassLabel its count per name, as pyarrow reads them from the Parquet files."""
    from datasets import ClassLabel

    dataset = registry.get(name)
    _, root = tiny_build(name, tmp_path_factory)
    stats = json.loads((root / STATISTICS).read_text())
    assert STATISTICS in {f["path"] for f in json.loads((root / "_build/manifest.json").read_text())["files"]}
    assert set(stats["configs"]) == set(dataset.configs)
    numbers = labels = 0
    for config, features in dataset.configs.items():
        splits = stats["configs"][config]["splits"]
        assert set(splits) == {f.name.split("-")[0] for f in (root / config).glob("*.parquet")}
        for split, entry in splits.items():
            table = _read(root, config, split)
            assert entry["rows"] == table.num_rows, (config, split)
            for column, feature in features.items():
                arr, got = table.column(column), entry["columns"][column]
                assert got["count"] == len(arr) - arr.null_count, (config, split, column)
                if isinstance(feature, ClassLabel):
                    codes = pc.drop_null(arr).to_pylist()
                    assert dict(map(tuple, got["values"])) == {feature.names[c]: codes.count(c) for c in set(codes)}
                    labels += 1
                elif pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type):
                    values = np.sort(pc.drop_null(arr).to_numpy(zero_copy_only=False).astype(np.float64))
                    values = values[np.isfinite(values)]
                    if len(values):
                        assert (got["min"], got["max"]) == (values[0], values[-1]), (config, split, column)
                        assert got["mean"] == pytest.approx(values.mean()), (config, split, column)
                    numbers += 1
    assert numbers + labels  # WordEval and VLM have no ClassLabel


@pytest.mark.parametrize("name", registry.names())
def test_statistics_do_not_depend_on_row_order(name, tmp_path_factory, tmp_path):
    dataset = registry.get(name)
    _, root = tiny_build(name, tmp_path_factory)
    copy = tmp_path / name
    shutil.copytree(root, copy)
    for config in dataset.configs:
        _rewrite(copy, config, lambda t: t.take(pa.array(np.arange(t.num_rows)[::-1])))
    assert compute_statistics(dataset, copy) == compute_statistics(dataset, root)


def _with_first_image(name: str, root, tmp_path, change) -> tuple:
    """A copy of the build ``root`` whose first image (of the dataset's first Image column, first shard) is
    ``change(bytes)``; (copy, config, split, column, that row's id)."""
    config, column = image_columns(name)[0]
    copy = tmp_path / name
    shutil.copytree(root, copy)
    first = sorted((copy / config).glob("*.parquet"))[0]
    table = pq.read_table(first)
    images = table.column(column).to_pylist()
    i = next(i for i, image in enumerate(images) if image and image["bytes"])
    images[i] = {"bytes": change(images[i]["bytes"]), "path": images[i]["path"]}
    table = table.set_column(table.schema.get_field_index(column), column, pa.array(images, table.schema.field(column).type))
    write_parquet(table, str(first))
    split = first.name.split("-")[0]
    return copy, config, split, column, table.column(registry.get(name).id_columns[config])[i].as_py()


@pytest.mark.parametrize("name", WITH_IMAGES)
def test_an_image_that_does_not_decode_is_counted_and_named(name, tmp_path_factory, tmp_path):
    """A truncated image keeps its header: the build's header reading passes it, decoding every image
    (build --decode-images, and benchwright validate whatever the build did) names it."""
    dataset = registry.get(name)
    copy, config, split, column, victim = _with_first_image(name, tiny_build(name, tmp_path_factory)[1], tmp_path,
                                                            lambda data: data[: len(data) // 2])
    header = compute_statistics(dataset, copy)["configs"][config]["splits"][split]["columns"][column]
    assert (header["checked"], header["failures"]) == ("header", 0)
    stats = compute_statistics(dataset, copy, decode_images=True)
    image = stats["configs"][config]["splits"][split]["columns"][column]
    assert (image["checked"], image["failures"], image["failed_examples"]) == ("decode", 1, [victim])
    assert {k: v for k, v in image.items() if k not in ("checked", "failures", "failed_examples", "width", "height",
                                                       "formats")} == {k: v for k, v in header.items() if k not in (
        "checked", "failures", "failed_examples", "width", "height", "formats")}
    failed = [r for r in check_images(stats) if not r["ok"]]
    assert len(failed) == 1 and victim in failed[0]["detail"] and "decode" in failed[0]["check"]
    # the build's own checks read the stored (header) statistics; validate decodes every image
    write_statistics(dataset, copy)
    assert all(r["ok"] for r in check_images(json.loads((copy / STATISTICS).read_text())))
    failed = [r for r in check_images(image_statistics(dataset, copy)) if not r["ok"]]
    assert len(failed) == 1 and victim in failed[0]["detail"]


@pytest.mark.parametrize("name", WITH_IMAGES)
def test_an_image_whose_header_does_not_read_fails_the_header_check(name, tmp_path_factory, tmp_path):
    dataset = registry.get(name)
    copy, config, split, column, victim = _with_first_image(name, tiny_build(name, tmp_path_factory)[1], tmp_path,
                                                            lambda data: b"\xff\xd8\xff\xe0 not a JPEG")
    image = write_statistics(dataset, copy)["configs"][config]["splits"][split]["columns"][column]
    assert (image["checked"], image["failures"], image["failed_examples"]) == ("header", 1, [victim])
    failed = [r for r in check_images(json.loads((copy / STATISTICS).read_text())) if not r["ok"]]
    assert len(failed) == 1 and "headers read" in failed[0]["check"] and victim in failed[0]["detail"]


def test_the_build_checks_and_validate_read_the_images_as_they_should(built, tmp_path):
    """WildBox: the build's checks (``check_data``) read the stored header statistics, ``validate``'s decode
    every image: a truncated frame passes the first and is named by the second."""
    copy, config, split, column, victim = _with_first_image("wildbox", built, tmp_path,
                                                            lambda data: data[: len(data) // 2])
    assert all(r["ok"] for r in check_data(WILDBOX, copy) if r["kind"] == "image")
    failed = [r for r in check_data(WILDBOX, copy, decode_images=True) if r["kind"] == "image" and not r["ok"]]
    assert len(failed) == 1 and victim in failed[0]["detail"]


def test_statistics_stored_before_the_header_reading_still_read(built):
    """A build published before images were read from their headers stored ``decode_failures``: its card,
    report and checks still read it."""
    from benchwright.statistics import column_summary

    image = json.loads((built / STATISTICS).read_text())["configs"]["frames"]["splits"]["train"]["columns"]["image"]
    old = {k: v for k, v in image.items() if k not in ("checked", "failures")} | {"decode_failures": 2}
    assert column_summary(old).endswith("2 do not decode")
    stats = {"configs": {"frames": {"splits": {"train": {"columns": {"image": old}}}}}}
    assert [(r["ok"], r["check"]) for r in check_images(stats)] == [(False, "frames: image bytes decode (train)")]


@pytest.mark.parametrize("name", registry.names())
def test_references_between_configs_are_checked(name, tmp_path_factory, tmp_path):
    """Every declared reference holds on the tiny build; the first one on a top-level column (a string, or a
    list of strings) fails, naming a value, once that column's values name no row."""
    dataset = registry.get(name)
    _, root = tiny_build(name, tmp_path_factory)
    results = check_references(dataset, root)
    assert len(results) == sum(map(len, dataset.references.values())) and all(r["ok"] for r in results)
    if not dataset.references:
        return
    config, column, target = next((c, col, t) for c, refs in dataset.references.items() for col, t in refs.items()
                                  if "." not in col)
    copy = tmp_path / name
    shutil.copytree(root, copy)

    def dangle(table):
        values = [None if v is None else [x + "x" for x in v] if isinstance(v, list) else v + "x"
                  for v in table.column(column).to_pylist()]
        at = table.schema.get_field_index(column)
        return table.set_column(at, column, pa.array(values, table.schema.field(column).type))

    _rewrite(copy, config, dangle)
    failed = {r["check"]: r["detail"] for r in check_references(dataset, copy) if not r["ok"]}
    check = f"{config}: {column} -> {target}.{dataset.id_columns[target]}"
    assert check in failed and "x'" in failed[check], failed


def test_a_nested_reference_is_checked(built, tmp_path):
    # a nested reference (frames' objects' box_id, read as that one Parquet leaf) dangles once the boxes' ids change
    renamed = tmp_path / "renamed" / "wildbox"
    shutil.copytree(built, renamed)
    _rewrite(renamed, "boxes", lambda t: t.set_column(t.schema.get_field_index("box_id"), "box_id",
                                                      pc.binary_join_element_wise(t.column("box_id"), "y", "")))
    failed = {r["check"]: r["detail"] for r in check_references(WILDBOX, renamed) if not r["ok"]}
    assert set(failed) == {"frames: objects.box_id -> boxes.box_id"}


def test_cuboid_geometry_is_checked(built, tmp_path):
    copy, victim = damaged_box_copy(built, tmp_path, "R_cam", 0,
                                    lambda R: [[-v for v in R[0]], R[1], R[2]])  # a reflection: det -1
    failed = {r["check"]: r["detail"] for r in WILDBOX.validate_tables(str(copy)) if not r["ok"]}
    assert victim in failed["boxes: R_cam is a rotation (R R^T = I, det +1)"]
    assert victim in failed["boxes: corners_cam = centre + R_cam (signs x [L, H, W] / 2)"]
    assert victim in failed["boxes: yaw_pitch_roll gives R_cam"]
    assert not any(name.startswith("frames:") for name in failed)  # frames' objects still hold the good box


def test_class_shares_are_checked_against_the_declared_bounds(built):
    stats = json.loads((built / STATISTICS).read_text())
    results = {r["check"]: r for r in check_proportions(WILDBOX, stats)}
    assert results["boxes.species: share of gazelle in [0.01, 0.7]"]["ok"]
    strict = type(WILDBOX)()
    strict.proportion_bounds = {"boxes.species": {"gazelle": (0.0, 0.1)}}
    (only,) = check_proportions(strict, stats)
    assert not only["ok"] and only["check"] == "boxes.species: share of gazelle in [0, 0.1]"


def test_the_card_lists_what_is_checked_and_shows_the_statistics(built):
    card = (built / "README.md").read_text()
    quality = card[card.index("## Data quality"):]
    assert "| `depth` | numeric |" in quality and "<details>" in quality
    for check in ("boxes: frame_id -> frames.frame_id", "boxes: R_cam is a rotation (R R^T = I, det +1)",
                  "frames: image headers read (pixels not decoded) (train)", "boxes.species: share of gazelle in [0.01, 0.7]"):
        assert f"| {check} |" in quality
    assert len([r for r in check_data(WILDBOX, built) if r["kind"] != "drift"]) == quality.count(" | ok |")


def test_a_text_column_top_values_are_taken_in_arrow_in_python_order():
    """Many distinct strings: only the top values become Python objects, ordered as Python orders the
    full list (count descending, ties by str value, non-ASCII included)."""
    from benchwright.statistics import CATEGORICAL_MAX_DISTINCT, _by_count, _value_counts

    rng = np.random.default_rng(0)
    words = [f"{p}{i}" for i, p in enumerate(rng.choice(["a", "Z", "é", "z", "\u00df", "\U0001f993", "0"], 400))]
    values = [w for w in words for _ in range(int(rng.integers(1, 4)))] + [None, None]
    arr = pa.array(rng.permutation(np.array(values, dtype=object)).tolist(), pa.string())
    full = _by_count([[v, values.count(v)] for v in set(words)])
    top = _value_counts(arr, most=CATEGORICAL_MAX_DISTINCT)
    assert top == {"distinct": len(words), "values": full[:CATEGORICAL_MAX_DISTINCT]}
    assert _value_counts(arr) == {"distinct": len(words), "values": full}
    few = pa.array(["b", "a", "b", None])
    assert _value_counts(few, most=CATEGORICAL_MAX_DISTINCT) == {"distinct": 2, "values": [["b", 2], ["a", 1]]}


def test_image_statistics_over_shards_keep_row_order_with_repeats_missing_and_broken_images(tmp_path):
    """Images are keyed and decoded on threads (or read from their headers in one pass): the counts, sizes
    and named failures are those of one pass in row order (a repeated image decoded once, a broken one named
    by its row id in every shard). A truncated JPEG keeps its header: only decoding fails it."""
    import io

    import fsspec
    from PIL import Image

    from benchwright.statistics import _image_statistics

    def encoded(size, fmt):  # noise: the entropy-coded data outweighs the header, so half the file keeps it
        out = io.BytesIO()
        pixels = np.random.default_rng(size[0]).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
        Image.fromarray(pixels).save(out, fmt)
        return out.getvalue()

    jpeg, png = encoded((64, 32), "JPEG"), encoded((20, 50), "PNG")
    broken, garbage = jpeg[: len(jpeg) // 2], b"\x89PNG\r\n\x1a\n not really a png"
    shards = [[("a", jpeg), ("b", None), ("c", broken), ("d", png)],
              [("e", png), ("f", broken), ("g", jpeg), ("h", garbage)]]
    files = []
    for n, rows in enumerate(shards):
        images = pa.array([None if b is None else {"bytes": b, "path": None} for _, b in rows],
                          pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
        path = tmp_path / f"train-{n:05d}-of-00002.parquet"
        pq.write_table(pa.table({"id": [i for i, _ in rows], "image": images}), path)
        files.append(str(path))
    fs = fsspec.filesystem("file")
    got = _image_statistics(fs, files, "image", "id", decode=True)
    assert (got["checked"], got["count"], got["missing"], got["failures"], got["failed_examples"]) == \
        ("decode", 7, 1, 3, ["c", "f", "h"])
    assert got["formats"] == [["JPEG", 2], ["PNG", 2]]
    assert (got["width"]["min"], got["width"]["max"], got["height"]["min"], got["height"]["max"]) == (20, 64, 32, 50)
    assert (got["bytes"]["min"], got["bytes"]["max"]) == (len(garbage), max(len(jpeg), len(png)))
    header = _image_statistics(fs, files, "image", "id")
    assert (header["checked"], header["count"], header["missing"], header["failures"], header["failed_examples"]) == \
        ("header", 7, 1, 1, ["h"])
    assert header["formats"] == [["JPEG", 4], ["PNG", 2]] and header["bytes"] == got["bytes"]
    assert (header["width"]["min"], header["width"]["max"], header["width"]["mean"]) == (20, 64, (4 * 64 + 2 * 20) / 6)
