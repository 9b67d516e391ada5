"""Omni3D (Cube R-CNN) JSON: read per-image records, build and write WildBox documents.

Reading is lenient about which optional fields exist (so Omni3D's own files load) but strict
about the geometry it returns. Writing produces exactly the WildBox record of
docs/reference/wildbox.md, in that key order, then our own measured fields (``MEASURED_FIELDS``),
as deterministic JSON.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import orjson

from benchwright import strict_json
from benchwright.errors import RecordError, SourceError

# Omni3D's top-level order, then the WildBox record fields in their documented order.
DOCUMENT_KEYS = ("info", "images", "categories", "annotations")
INFO_FIELDS = ("id", "source", "name", "split", "version", "known_category_ids", "scene_scales")
CATEGORY_FIELDS = ("id", "name", "supercategory")
IMAGE_FIELDS = ("id", "dataset_id", "file_path", "height", "width", "K")
# Our measurements, in fields of their own: the release's fields, which training code reads, keep
# the release's meaning (loaders.wildbox.OMNI3D_FIELD_NOTES says what each field holds).
MEASURED_FIELDS = ("support_points", "projected_truncation", "occlusion_visibility")
ANNOTATION_FIELDS = (
    "id", "image_id", "dataset_id", "category_id", "category_name", "valid3D", "behind_camera",
    "bbox", "bbox2D_tight", "bbox2D_trunc", "bbox2D_proj", "bbox3D_cam", "center_cam",
    "dimensions", "R_cam", "truncation", "visibility", "segmentation_pts", "lidar_pts",
    "depth_error", "area", "iscrowd", "track_id", "bbox_source", *MEASURED_FIELDS,
)
# Array fields and their shapes; reading requires the 3D box and K, the 2D boxes when present.
_IMAGE_ARRAYS = {"K": (3, 3)}
_ANNOTATION_ARRAYS = {"bbox3D_cam": (8, 3), "center_cam": (3,), "dimensions": (3,), "R_cam": (3, 3)}
_OPTIONAL_BOXES = {"bbox": (4,), "bbox2D_tight": (4,), "bbox2D_trunc": (4,), "bbox2D_proj": (4,)}
_REQUIRED_ANNOTATION_KEYS = ("id", "image_id", "category_id", *_ANNOTATION_ARRAYS)
_ARRAY_FIELDS = {**_ANNOTATION_ARRAYS, **_OPTIONAL_BOXES}


@dataclass
class Omni3DRecord:
    """One image with its annotations, in document order."""

    image: dict
    annotations: list[dict]


@dataclass
class AnnotationColumns:
    """Annotations given as columns, for a writer streaming them by the hundred thousand: each of
    ``ANNOTATION_FIELDS`` maps to a sequence of ``n`` values, the array fields (``bbox3D_cam``,
    ``bbox``, ...) best as numpy arrays of shape ``(n, *shape)``: those are checked once per column
    (numbers, shape, finite) instead of once per record, and become lists in one call. The records
    and the text are exactly those of the same annotations given as dicts; a column that does not
    pass is checked record by record, so a bad record is reported as a dict's would be."""

    columns: dict

    def records(self) -> Iterator[tuple[dict, bool]]:
        """(record with the fields in order, whether its arrays are already checked) of each row."""
        cols = self.columns
        n = len(next(iter(cols.values()))) if cols else 0
        if any(len(v) != n for v in cols.values()):
            raise ValueError("AnnotationColumns: the columns differ in length")
        fast = tuple(cols) == ANNOTATION_FIELDS and all(
            _checked_column(cols[f], shape, n) for f, shape in _ARRAY_FIELDS.items())
        if not fast:  # the dict path: its checks, its errors
            for i in range(n):
                yield {k: v[i] for k, v in cols.items()}, False
            return
        values = [col.tolist() if isinstance(col, np.ndarray) and col.dtype != object else list(map(_plain, col))
                  for col in cols.values()]
        for field, column in zip(cols, values):  # the array fields were checked above, the rest here
            if field not in _ARRAY_FIELDS and not _all_finite(column):
                yield from ((dict(zip(ANNOTATION_FIELDS, row)), False) for row in zip(*values))
                return
        for row in zip(*values):
            yield dict(zip(ANNOTATION_FIELDS, row)), True


def _checked_column(col, shape: tuple, n: int) -> bool:
    """True when ``col`` is a numeric (not boolean) numpy array of shape ``(n, *shape)``, all finite:
    its rows then pass ``_finite_numbers`` once ``tolist``-ed."""
    return (isinstance(col, np.ndarray) and col.dtype.kind in "iuf" and col.shape == (n, *shape)
            and bool(np.isfinite(col).all()))


def _finite_numbers(value, shape: tuple) -> bool:
    """True when ``value`` is a plain nested list of ``shape`` holding finite ints and floats (no bools):
    ``_array``'s check without numpy, for the records a writer streams by the hundred thousand."""
    if type(value) is not list or len(value) != shape[0]:
        return False
    if len(shape) == 1:
        return all((type(v) is float and v - v == 0) or type(v) is int for v in value)  # inf - inf is nan
    return all(_finite_numbers(v, shape[1:]) for v in value)


def _array(value, shape: tuple, field: str, where: str) -> np.ndarray:
    """``value`` as a finite float array of ``shape``; strings and booleans are not numbers."""
    try:
        arr = np.asarray(value)
    except ValueError:
        raise RecordError(where, f"{field} is ragged") from None
    if arr.dtype.kind not in "iuf":
        raise RecordError(where, f"{field} must hold numbers")
    if arr.shape != shape:
        raise RecordError(where, f"{field} must be {'x'.join(map(str, shape))}, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise RecordError(where, f"{field} has a non-finite value")
    return arr.astype(float)


def _check_image(image: dict, where: str) -> None:
    for key in ("id", "width", "height", *_IMAGE_ARRAYS):
        if key not in image:
            raise RecordError(where, f"missing {key}")
    _check_id(image["id"], "id", where)
    for key in ("width", "height"):
        if isinstance(image[key], bool) or not isinstance(image[key], int) or image[key] <= 0:
            raise RecordError(where, f"{key} must be a positive integer, got {image[key]!r}")
    for key, shape in _IMAGE_ARRAYS.items():
        if not _finite_numbers(image[key], shape):  # plain finite lists pass without numpy
            _array(image[key], shape, key, where)


def _check_id(value, key: str, where: str) -> None:
    """Ids are compared and used as keys: an integer or a string (a list or an object would not hash)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise RecordError(where, f"{key} must be an integer or a string, got {value!r}"[:200])


def _check_annotation_links(ann: dict, seen: set, images, category_ids, where: str) -> None:
    """An annotation's own checks, then its links: a new id, an existing image and category
    (``category_ids`` empty = the document lists no categories, so any id is accepted)."""
    _check_annotation(ann, where)
    _check_links(ann, seen, images, category_ids, where)


def _check_links(ann: dict, seen: set, images, category_ids, where: str) -> None:
    """``_check_annotation_links`` after the annotation's own checks (its ids and links)."""
    for key in ("id", "image_id", "category_id"):
        _check_id(ann[key], key, where)
    if ann["id"] in seen:
        raise RecordError(where, "duplicate annotation id")
    if ann["image_id"] not in images:
        raise RecordError(where, f"image_id {ann['image_id']!r} is not a (valid) image")
    if category_ids and ann["category_id"] not in category_ids:
        raise RecordError(where, f"category_id {ann['category_id']!r} is not in categories")


def _check_annotation(ann: dict, where: str) -> None:
    for key in _REQUIRED_ANNOTATION_KEYS:
        if key not in ann:
            raise RecordError(where, f"missing {key}")
    for key, shape in _ARRAY_FIELDS.items():
        if key in ann and not _finite_numbers(ann[key], shape):  # plain finite lists pass without numpy
            _array(ann[key], shape, key, where)


def _load(source, locator: str | None) -> tuple[dict, str]:
    if isinstance(source, dict):
        return source, locator or "<omni3d>"
    path = Path(source)
    try:
        doc = strict_json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:  # unreadable, not UTF-8, malformed, a repeated key, nested too deeply
        raise SourceError(f"{path}: cannot read Omni3D JSON: {err}") from None
    return doc, locator or path.name


def read_omni3d(source, *, on_error: Callable[[RecordError], None] | None = None,
                locator: str | None = None) -> Iterator[Omni3DRecord]:
    """Per-image records of an Omni3D document (a path or an already-loaded dict).

    A bad image or annotation raises a RecordError naming the file and its id
    (``val.json#annotation_id=17``); with ``on_error`` it is passed there instead and the
    record is skipped (an image is skipped with its annotations), so a pipeline can quarantine
    it. A file that is not an Omni3D document raises SourceError.
    """
    doc, locator = _load(source, locator)
    if not isinstance(doc, dict) or not all(isinstance(doc.get(k), list) for k in ("images", "annotations")):
        raise SourceError(f"{locator}: not an Omni3D document (needs 'images' and 'annotations' lists)")

    def report(err: RecordError) -> None:
        if on_error is None:
            raise err
        on_error(err)

    categories = doc.get("categories") or []
    category_ids = {c.get("id") for c in (categories if isinstance(categories, list) else [])
                    if isinstance(c, dict) and isinstance(c.get("id"), (int, str))}
    images: dict = {}
    for image in doc["images"]:
        where = f"{locator}#image_id={image.get('id') if isinstance(image, dict) else '?'}"
        try:
            if not isinstance(image, dict):
                raise RecordError(where, "image is not an object")
            _check_image(image, where)
            if image["id"] in images:
                raise RecordError(where, "duplicate image id")
        except RecordError as err:
            report(err)
            continue
        images[image["id"]] = Omni3DRecord(image, [])
    seen: set = set()
    for ann in doc["annotations"]:
        where = f"{locator}#annotation_id={ann.get('id') if isinstance(ann, dict) else '?'}"
        try:
            if not isinstance(ann, dict):
                raise RecordError(where, "annotation is not an object")
            _check_annotation_links(ann, seen, images, category_ids, where)
        except RecordError as err:
            report(err)
            continue
        seen.add(ann["id"])
        images[ann["image_id"]].annotations.append(ann)
    yield from images.values()


_PLAIN_SCALARS = frozenset((str, int, float, bool, type(None)))


def _plain(value):
    """JSON-ready copy: numpy arrays and scalars become lists and Python numbers."""
    if type(value) in _PLAIN_SCALARS:  # the common case first: 237k annotations x 70 numbers
        return value
    if type(value) is list:
        return [v if type(v) in _PLAIN_SCALARS else _plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def _ordered(record: dict, fields: tuple, where: str) -> dict:
    """``record`` with exactly ``fields``, in that order (a missing or unknown key is an error)."""
    missing = [f for f in fields if f not in record]
    unknown = [k for k in record if k not in fields]
    if missing or unknown:
        raise RecordError(where, f"missing {missing}, unknown {unknown}")
    return {f: _plain(record[f]) for f in fields}


def iter_omni3d_document(info: dict, categories, images, annotations) -> Iterator[str]:
    """A WildBox Omni3D document as JSON text chunks, each record checked as it is written.

    Every record gets exactly the documented fields in order and passes the reader's checks; ids
    are unique; each annotation's image and category exist, its category_name matches, and its
    dataset_id is its image's (the collection, never the species). ``images`` and ``annotations``
    may be generators: a split with 200k annotations is never held in memory as one document.
    The text is exactly ``dumps_omni3d`` of the same document.
    """
    where = "<omni3d document>"
    yield '{"info":' + _dump(_ordered(info, INFO_FIELDS, f"{where}#info"))
    yield ',"images":['
    image_datasets: dict = {}
    for n, image in enumerate(images):
        at = f"{where}#image_id={image.get('id')}"
        rec = _ordered(image, IMAGE_FIELDS, at)
        _check_image(rec, at)
        if rec["id"] in image_datasets:
            raise RecordError(at, "duplicate image id")
        image_datasets[rec["id"]] = rec["dataset_id"]
        yield ("," if n else "") + _dump_plain(rec)
    yield '],"categories":['
    names: dict = {}
    for n, category in enumerate(categories):
        rec = _ordered(category, CATEGORY_FIELDS, f"{where}#category_id={category.get('id')}")
        if rec["id"] in names:
            raise RecordError(f"{where}#categories", "duplicate category id")
        names[rec["id"]] = rec["name"]
        yield ("," if n else "") + _dump(rec)
    yield '],"annotations":['
    seen: set = set()
    for n, (ann, checked) in enumerate(_annotation_records(annotations)):
        at = f"{where}#annotation_id={ann.get('id')}"
        if checked:  # from AnnotationColumns: exactly the fields, in order, plain, finite, arrays checked
            rec = ann
            _check_links(rec, seen, image_datasets, names, at)
        else:
            rec = _ordered(ann, ANNOTATION_FIELDS, at)
            _check_annotation_links(rec, seen, image_datasets, names, at)
        seen.add(rec["id"])
        if rec["category_name"] != names.get(rec["category_id"], rec["category_name"]):
            raise RecordError(at, f"category_name {rec['category_name']!r} is not {names[rec['category_id']]!r}")
        if rec["dataset_id"] != image_datasets[rec["image_id"]]:
            raise RecordError(at, f"dataset_id {rec['dataset_id']!r} is not its image's "
                                  f"{image_datasets[rec['image_id']]!r}")
        yield ("," if n else "") + (_dump_finite(rec) if checked else _dump_plain(rec))
    yield "]}\n"


def _annotation_records(annotations) -> Iterator[tuple[dict, bool]]:
    """(record, arrays already checked) of annotations given as dicts or ``AnnotationColumns``."""
    for item in annotations:
        if isinstance(item, AnnotationColumns):
            yield from item.records()
        else:
            yield item, False


def omni3d_document(info: dict, categories, images, annotations) -> dict:
    """A WildBox Omni3D document (a dict), checked record by record (see ``iter_omni3d_document``)."""
    return json.loads("".join(iter_omni3d_document(info, categories, images, annotations)))


def _dump(record) -> str:
    return _dump_plain(_plain(record))


def _dump_plain(record) -> str:
    """``_dump`` of a record ``_plain`` already made JSON-ready (``_ordered``'s records): NaN and
    infinities, which JSON does not have, are refused (orjson would write them as null)."""
    if not _all_finite(record):
        raise ValueError(f"Out of range float values are not JSON compliant: {str(record)[:200]}")
    return _dump_finite(record)


def _dump_finite(record) -> str:
    """Compact JSON text, keys in the order given, UTF-8 (not ASCII escapes), of a record holding no
    NaN or infinity. orjson: the release's 237k annotations in 0.5 s against the json module's 7 s
    (each float is written as its shortest round-trip text, in orjson's notation: ``1e-5``)."""
    try:
        return orjson.dumps(record).decode()
    except TypeError:  # what orjson does not write (an integer beyond 64 bits): the json module does
        return json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _all_finite(value) -> bool:
    """No NaN or infinity anywhere in a plain value (lists and dicts walked)."""
    kind = type(value)
    if kind is float:
        return value - value == 0  # inf - inf is nan
    if kind is list or kind is tuple:
        return all(map(_all_finite, value))
    if kind is dict:
        return all(map(_all_finite, value.values()))
    return True


def dumps_omni3d(doc: dict) -> str:
    """Deterministic JSON text: key order as given, compact separators, UTF-8, no NaN."""
    return _dump(doc) + "\n"


def write_omni3d(doc: dict, path) -> Path:
    """Write ``doc`` atomically (a reader never sees half a file) and return the path."""
    return _write_chunks([dumps_omni3d(doc)], path)


def write_omni3d_stream(path, info: dict, categories, images, annotations) -> Path:
    """Write a document from record iterables, checked and streamed (see ``iter_omni3d_document``)."""
    return _write_chunks(iter_omni3d_document(info, categories, images, annotations), path)


def _write_chunks(chunks, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for chunk in chunks:
                f.write(chunk)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; the published file is for everyone
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path
