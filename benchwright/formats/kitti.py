"""KITTI object and tracking text format: parse, convert to the canonical cuboid and back.

The canonical cuboid is the Omni3D one (docs/reference/wildbox.md, "Box conventions"): 3D centre, [W, H, L], full
rotation. KITTI stores the bottom-face centre and a yaw only, so a box converts back to KITTI
only when its pitch and roll are ~0 (``geometry.kitti_representable``).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchwright.errors import RecordError, SourceError
from benchwright.fields import clip
from benchwright.formats import geometry
from benchwright.utf8 import decode

DONTCARE = "DontCare"
# Official DontCare layout: every 3D field is a sentinel. Written as-is, never read by position.
_DONTCARE_TAIL = "-1 -1 -1 -1000 -1000 -1000 -10"
N_LABEL_COLUMNS = 15  # type + 14 numbers; a 16th is the score of a prediction
N_TRACKING_PREFIX = 2  # frame, track_id

_CALIB_KEYS = {  # name in the file -> canonical name
    "P0": "P0", "P1": "P1", "P2": "P2", "P3": "P3",
    "R0_rect": "R0_rect", "R_rect": "R0_rect",
    "Tr_velo_to_cam": "Tr_velo_to_cam", "Tr_velo_cam": "Tr_velo_to_cam",
    "Tr_imu_to_velo": "Tr_imu_to_velo", "Tr_imu_velo": "Tr_imu_to_velo",
}
_CALIB_SHAPES = {"P0": (3, 4), "P1": (3, 4), "P2": (3, 4), "P3": (3, 4), "R0_rect": (3, 3),
                 "Tr_velo_to_cam": (3, 4), "Tr_imu_to_velo": (3, 4)}
_CALIB_OPTIONAL = {"Tr_imu_to_velo"}  # some KITTI-format exports of other datasets omit it


@dataclass(frozen=True)
class KittiObject:
    """One label row. (x, y, z) is the bottom-face centre in the rectified camera frame."""

    type: str
    truncated: float
    occluded: int
    alpha: float
    bbox: tuple[float, float, float, float]  # x1, y1, x2, y2 (0-based pixels)
    h: float
    w: float
    l: float  # noqa: E741 (KITTI's own name)
    x: float
    y: float
    z: float
    rotation_y: float
    score: float | None = None
    track_id: int | None = None  # tracking labels only

    @property
    def is_dontcare(self) -> bool:
        return self.type == DONTCARE


@dataclass(frozen=True, eq=False)  # arrays have no single truth value to compare by
class KittiCalib:
    """One calibration file; every matrix is row-major as in the file."""

    P0: np.ndarray
    P1: np.ndarray
    P2: np.ndarray
    P3: np.ndarray
    R0_rect: np.ndarray
    Tr_velo_to_cam: np.ndarray
    Tr_imu_to_velo: np.ndarray | None = None


def _read_source(source, locator: str | None) -> tuple[str, str]:
    """(text, locator). A PathLike, or a str naming an existing file, is read; other strs are text.

    The default locator of a file is ``<parent>/<name>`` (e.g. ``label_2/000001.txt``).
    """
    is_path = isinstance(source, os.PathLike) or (
        isinstance(source, str) and "\n" not in source and os.path.isfile(source))
    if not is_path:
        return source, locator or "<text>"
    path = Path(source)
    locator = locator or f"{path.parent.name}/{path.name}"
    return read_text(path, locator), locator


def read_text(path, locator: str) -> str:
    """A KITTI text file's content: a file that cannot be read is a ``SourceError``; bytes that are not
    UTF-8 or a byte order mark a ``RecordError`` at ``<locator>:<line>`` (``decode_text``)."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise SourceError(f"{locator}: cannot read: {err.strerror or err}") from None
    return decode_text(data, locator)


def _number(token: str, field: str, where: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise RecordError(where, f"{field} is not a number: {clip(token)}") from None
    if not math.isfinite(value):
        raise RecordError(where, f"{field} is not finite: {clip(token)}")
    return value


def _integer(token: str, field: str, where: str) -> int:
    value = _number(token, field, where)
    if value != int(value):
        raise RecordError(where, f"{field} is not an integer: {clip(token)}")
    return int(value)


def _parse_object(tokens: list[str], where: str, track_id: int | None = None) -> KittiObject:
    if len(tokens) not in (N_LABEL_COLUMNS, N_LABEL_COLUMNS + 1):
        raise RecordError(where, f"expected {N_LABEL_COLUMNS} or {N_LABEL_COLUMNS + 1} columns, "
                                 f"got {len(tokens)}")
    names = ("truncated", "occluded", "alpha", "x1", "y1", "x2", "y2",
             "h", "w", "l", "x", "y", "z", "rotation_y", "score")
    v = [_number(t, n, where) for t, n in zip(tokens[1:], names)]
    return KittiObject(
        type=tokens[0], truncated=v[0], occluded=_integer(tokens[2], "occluded", where),
        alpha=v[2], bbox=(v[3], v[4], v[5], v[6]), h=v[7], w=v[8], l=v[9],
        x=v[10], y=v[11], z=v[12], rotation_y=v[13],
        score=v[14] if len(v) > 14 else None, track_id=track_id)


def _lines(text: str):
    """(1-based line number, tokens) of every non-blank line. Lines end at "\n" only (``str.splitlines``
    also ends one at a form feed or U+2028, and the numbers would not be the file's)."""
    for number, line in enumerate(text.split("\n"), start=1):
        tokens = line.split()
        if tokens:
            yield number, tokens


def row_line_numbers(text: str) -> list[int]:
    """The line number of each row ``parse_label_lines`` reads (its non-blank lines), in order."""
    return [number for number, _ in _lines(text)]


def parse_label_lines(text: str, locator: str = "<text>"):
    """(objects, errors): the good rows of a label file, and a RecordError per bad line.

    Lets a pipeline quarantine one bad line and keep the rest of the frame.
    """
    objects, errors = [], []
    for number, tokens in _lines(text):
        try:
            objects.append(_parse_object(tokens, f"{locator}:{number}"))
        except RecordError as err:
            errors.append(err)
    return objects, errors


def parse_label_file(source, locator: str | None = None) -> list[KittiObject]:
    """Every row of a label file (path or text); the first bad line raises its RecordError."""
    text, locator = _read_source(source, locator)
    objects, errors = parse_label_lines(text, locator)
    if errors:
        raise errors[0]
    return objects


def parse_tracking_lines(text: str, locator: str = "<text>"):
    """(objects grouped by frame, errors) for KITTI tracking labels: ``frame track_id`` + 15 columns."""
    frames: dict[int, list[KittiObject]] = {}
    errors = []
    for number, tokens in _lines(text):
        where = f"{locator}:{number}"
        try:
            if len(tokens) - N_TRACKING_PREFIX not in (N_LABEL_COLUMNS, N_LABEL_COLUMNS + 1):
                raise RecordError(where, f"expected {N_TRACKING_PREFIX + N_LABEL_COLUMNS} or "
                                         f"{N_TRACKING_PREFIX + N_LABEL_COLUMNS + 1} columns, "
                                         f"got {len(tokens)}")
            frame = _integer(tokens[0], "frame", where)
            obj = _parse_object(tokens[2:], where, _integer(tokens[1], "track_id", where))
        except RecordError as err:
            errors.append(err)
            continue
        frames.setdefault(frame, []).append(obj)
    return frames, errors


def parse_tracking_labels(source, locator: str | None = None) -> dict[int, list[KittiObject]]:
    """Tracking labels (path or text) grouped by frame; the first bad line raises."""
    text, locator = _read_source(source, locator)
    frames, errors = parse_tracking_lines(text, locator)
    if errors:
        raise errors[0]
    return frames


def parse_calib(source, locator: str | None = None) -> KittiCalib:
    """A calibration file (path or text). Accepts the tracking names (R_rect, Tr_velo_cam, ...)."""
    text, locator = _read_source(source, locator)
    found: dict[str, np.ndarray] = {}
    unknown: list[str] = []  # keys of lines not read, for the message when a matrix is missing
    for number, tokens in _lines(text):
        where = f"{locator}:{number}"
        key = tokens[0].rstrip(":")
        name = _CALIB_KEYS.get(key)
        if name is None:
            unknown.append(f"{key[:20]!r} at line {number}")
            continue  # other sensors' entries are not needed
        if name in found:
            raise RecordError(where, f"{name} given twice")
        shape = _CALIB_SHAPES[name]
        if len(tokens) - 1 != shape[0] * shape[1]:
            raise RecordError(where, f"{key} needs {shape[0] * shape[1]} numbers, got {len(tokens) - 1}")
        found[name] = np.array([_number(t, key, where) for t in tokens[1:]]).reshape(shape)
    missing = [n for n in _CALIB_SHAPES if n not in found and n not in _CALIB_OPTIONAL]
    if missing:
        seen = f"; lines not read: {', '.join(unknown[:5])}" if unknown else ""
        raise RecordError(locator, f"missing {', '.join(missing)} (no line starts with "
                                   f"{' or '.join(repr(m + ':') for m in missing[:2])}{seen})")
    return KittiCalib(**found)


UTF8_BOM = b"\xef\xbb\xbf"


def decode_text(data: bytes, locator: str) -> str:
    """A KITTI text file's bytes as text, or a ``RecordError`` at ``<locator>:<line>`` saying what is wrong:
    a UTF-8 byte order mark (KITTI files have none: the first row's type would read ``'\\ufeffCar'``, a
    class nobody knows, and a calibration's first key ``'\\ufeffP0:'``, so "missing P0"), or bytes that
    are not UTF-8 (``utf8.decode``: the byte, its line and column)."""
    if data.startswith(UTF8_BOM):
        raise RecordError(f"{locator}:1", "starts with a UTF-8 byte order mark (U+FEFF), which KITTI files do not "
                                          "have: the first type would read '\\ufeff' + its name")
    return decode(data, locator)


def to_canonical(obj: KittiObject, locator: str = "<kitti>") -> dict:
    """The canonical cuboid of a row: centre (not bottom), [W, H, L], R_y(rotation_y).

    ``alpha`` is carried along: KITTI computed it from unrounded values, so it cannot be
    recomputed exactly from the 2-decimal text. DontCare rows have no box and raise.
    """
    if obj.is_dontcare:
        raise RecordError(locator, "DontCare row has no 3D box")
    return {
        "center_cam": np.array([obj.x, obj.y - obj.h / 2, obj.z]),
        "dimensions": np.array([obj.w, obj.h, obj.l]),
        "R_cam": geometry.yaw_only_rotation(obj.rotation_y)[0],
        "bbox2d": np.array(obj.bbox),
        "category": obj.type,
        "truncation": obj.truncated,
        "occlusion": obj.occluded,
        "score": obj.score,
        "alpha": obj.alpha,
    }


def from_canonical(center, dims, R, bbox2d, category: str, truncation: float, occluded: int,
                   score: float | None = None, alpha: float | None = None,
                   lossy: bool = False, locator: str = "<canonical>") -> KittiObject:
    """A KITTI row from a canonical cuboid.

    Raises RecordError when R is not a rotation, or has pitch or roll (KITTI can hold only a
    yaw) unless ``lossy``, which keeps the yaw and drops the rest (the WildBox KITTI export is
    lossy by design).
    ``alpha`` defaults to ry - atan2(x, z): KITTI measures it from the label frame's origin
    (the rectified reference camera; on the fixtures that matches the labels to 0.004 rad
    on average, against 0.007 rad from camera 2's centre), so no projection matrix is needed.
    """
    center = np.asarray(center, float).reshape(3)
    W, H, L = np.asarray(dims, float).reshape(3)
    ok, reasons = geometry.kitti_representable(R)
    if not ok[0] and (not lossy or reasons[0].startswith("not a rotation")):
        raise RecordError(locator, f"not KITTI-representable: {reasons[0]}")
    ry = float(geometry.euler_yaw_pitch_roll(R)[0, 0])
    x, y, z = float(center[0]), float(center[1] + H / 2), float(center[2])
    if alpha is None:
        alpha = float(geometry.alpha_from_ry(ry, x, z))
    x1, y1, x2, y2 = (float(v) for v in np.asarray(bbox2d, float).reshape(4))
    return KittiObject(
        type=category, truncated=float(truncation), occluded=int(occluded), alpha=float(alpha),
        bbox=(x1, y1, x2, y2), h=float(H), w=float(W), l=float(L), x=x, y=y, z=z,
        rotation_y=ry, score=None if score is None else float(score))


def from_canonical_many(center, dims, R, bbox2d, categories, truncation, occluded, scores=None, alphas=None,
                        lossy: bool = False, locators=None) -> list:
    """``from_canonical`` of N boxes in one numpy pass (an export converts hundreds of thousands): per box
    the KittiObject ``from_canonical`` returns or the RecordError it raises (``locators[i]`` names box i),
    the same values. ``scores`` and ``alphas`` are None or one value (or None) per box."""
    center = np.asarray(center, float).reshape(-1, 3)
    n = len(center)
    dims = np.asarray(dims, float).reshape(n, 3)
    R = np.asarray(R, float).reshape(n, 3, 3)
    box = np.asarray(bbox2d, float).reshape(n, 4)
    ok, reasons = geometry.kitti_representable(R) if n else (np.zeros(0, bool), [])
    ry = geometry.euler_yaw_pitch_roll(R)[:, 0] if n else np.zeros(0)
    y = center[:, 1] + dims[:, 1] / 2
    measured_alpha = geometry.alpha_from_ry(ry, center[:, 0], center[:, 2]) if n else np.zeros(0)
    scores = [None] * n if scores is None else list(scores)
    alphas = [None] * n if alphas is None else list(alphas)
    locators = [f"<canonical>#{i}" for i in range(n)] if locators is None else list(locators)
    categories, truncation, occluded = list(categories), list(truncation), list(occluded)
    lengths = {len(v) for v in (categories, truncation, occluded, scores, alphas, locators)}
    if lengths != {n}:  # zip would drop the boxes past the shortest list without a word
        raise ValueError(f"from_canonical_many: {n} boxes but per-box lists of lengths {sorted(lengths)}")
    out = []
    for i, (x_, y_, z_, (W, H, L), ry_, alpha_, bb, category, trunc, occ) in enumerate(zip(
            center[:, 0].tolist(), y.tolist(), center[:, 2].tolist(), dims.tolist(), ry.tolist(),
            measured_alpha.tolist(), box.tolist(), categories, truncation, occluded)):
        if not ok[i] and (not lossy or reasons[i].startswith("not a rotation")):
            out.append(RecordError(locators[i], f"not KITTI-representable: {reasons[i]}"))
            continue
        alpha = alpha_ if alphas[i] is None else alphas[i]
        out.append(KittiObject(
            type=category, truncated=float(trunc), occluded=int(occ), alpha=float(alpha), bbox=tuple(bb),
            h=H, w=W, l=L, x=x_, y=y_, z=z_, rotation_y=ry_,
            score=None if scores[i] is None else float(scores[i])))
    return out


def format_label_line(obj: KittiObject, decimals: int = 2) -> str:
    """One label line as the official files write it (2 decimals; occluded an integer).

    DontCare rows get the official sentinel layout. The score of a prediction keeps 4 decimals
    so that rounding does not create ties in the ranking AP is computed from. Tracking rows are
    written with their ``frame track_id`` prefix by the caller. ``decimals``: of the 3D fields and
    angles (alpha, h w l, x y z, rotation_y); readers parse any float, and boxes in other units than
    metres (WildBox's normalised ones, about 0.05 across) need more than KITTI's 2.
    """
    x1, y1, x2, y2 = obj.bbox
    box = f"{x1:.2f} {y1:.2f} {x2:.2f} {y2:.2f}"
    if obj.is_dontcare:
        line = f"{DONTCARE} -1 -1 -10 {box} {_DONTCARE_TAIL}"
    else:
        d = decimals
        line = (f"{obj.type} {obj.truncated:.2f} {obj.occluded:d} {obj.alpha:.{d}f} {box} "
                f"{obj.h:.{d}f} {obj.w:.{d}f} {obj.l:.{d}f} {obj.x:.{d}f} {obj.y:.{d}f} {obj.z:.{d}f} "
                f"{obj.rotation_y:.{d}f}")
    return line if obj.score is None else f"{line} {obj.score:.4f}"


def format_calib(P2, *, P0=None, P1=None, P3=None, R0_rect=None, Tr_velo_to_cam=None,
                 Tr_imu_to_velo=None) -> str:
    """A calibration file in the official layout (``name: `` + 12-digit exponents, blank last line).

    ``P2`` may be a pinhole K (3x3), written as [K | 0]. Missing cameras default to P2, the
    rectification to I and the sensor transforms to [I | 0], which is what a KITTI reader of a
    single-camera dataset needs.
    """
    P2 = np.asarray(P2, float)
    if P2.shape == (3, 3):
        P2 = np.hstack([P2, np.zeros((3, 1))])
    matrices = {
        "P0": P2 if P0 is None else P0, "P1": P2 if P1 is None else P1, "P2": P2,
        "P3": P2 if P3 is None else P3, "R0_rect": _DEFAULT_R0_RECT if R0_rect is None else R0_rect,
        "Tr_velo_to_cam": _DEFAULT_TRANSFORM if Tr_velo_to_cam is None else Tr_velo_to_cam,
        "Tr_imu_to_velo": _DEFAULT_TRANSFORM if Tr_imu_to_velo is None else Tr_imu_to_velo,
    }
    for name, M in matrices.items():
        if np.asarray(M).shape != _CALIB_SHAPES[name]:
            raise ValueError(f"{name} must be {_CALIB_SHAPES[name]}, got {np.asarray(M).shape}")
    # P0, P1, P3 default to P2 itself and the defaults' text is made once: each matrix is formatted once
    # (an export writes one calibration per frame)
    text: dict[int, str] = dict(_DEFAULT_TEXT)
    lines = []
    for name, M in matrices.items():
        if id(M) not in text:
            text[id(M)] = _matrix_text(M)
        lines.append(f"{name}: {text[id(M)]}")
    return "\n".join(lines) + "\n\n"


def _matrix_text(M) -> str:
    return " ".join(f"{v:.12e}" for v in np.asarray(M, float).ravel())


# format_calib's defaults, read-only: the rectification I and the sensor transforms [I | 0]
_DEFAULT_R0_RECT = np.eye(3)
_DEFAULT_TRANSFORM = np.hstack([np.eye(3), np.zeros((3, 1))])
for _M in (_DEFAULT_R0_RECT, _DEFAULT_TRANSFORM):
    _M.setflags(write=False)
_DEFAULT_TEXT = {id(M): _matrix_text(M) for M in (_DEFAULT_R0_RECT, _DEFAULT_TRANSFORM)}
