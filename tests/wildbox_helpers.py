"""Helpers the WildBox tests share: a tiny raw source, a build, the tree of published file hashes."""
from __future__ import annotations

import hashlib
from pathlib import Path

from benchwright.wildbox.synth import write_source
from tests.builds import build_dataset


def tiny_source(path: Path, seed: int = 0) -> Path:
    write_source(path, scale="tiny", seed=seed)
    return path


def build_wildbox(source: Path, out: Path, **options) -> Path:
    return build_dataset("wildbox", source, out, **options)


def published_hashes(root: Path) -> dict[str, str]:
    """sha256 of every published data file (the manifest and validation site describe the run, not the data)."""
    out = {}
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = f.relative_to(root).as_posix()
        if rel == "_build/manifest.json" or rel.startswith("_build/validation/"):
            continue
        out[rel] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out


def damaged_box_copy(built: Path, tmp_path: Path, column: str, row: int, change) -> tuple[Path, str]:
    """A copy of the build whose first boxes shard holds ``change(value)`` in ``column`` at ``row``;
    returns the copy and that box's id."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from benchwright.writer import write_parquet

    copy = tmp_path / "wildbox"
    shutil.copytree(built, copy)
    first = sorted((copy / "boxes").glob("*.parquet"))[0]
    table = pq.read_table(first)
    values = table.column(column).to_pylist()
    values[row] = change(values[row])
    at = table.schema.get_field_index(column)
    write_parquet(table.set_column(at, column, pa.array(values, table.schema.field(column).type)), str(first))
    return copy, table.column("box_id")[row].as_py()


def wildbox_stage_rows(source: Path) -> tuple[list[dict], dict[str, set]]:
    """What the build's stages make of a WildBox source, without Beam (cheaper than a build of each of its
    formats): every unit through the parser (a RecordError quarantines the unit, as the Stage does), an Omni3D
    source's segment parts grouped by segment id and merged (``merge_segments``), and every segment through the
    annotation. Returns (quarantine rows, {"segment_id", "image_path"}: what is published)."""
    import dataclasses

    from benchwright.errors import RecordError
    from benchwright.wildbox.stages import annotate_segment
    from benchwright.wildbox.segments import RawSegment
    from benchwright.wildbox.sources import discover, merge_segments, parse_unit
    from benchwright.stage import Reject

    def stage(fn, item, unit="segment", locator=None):
        try:
            return list(fn(item))
        except RecordError as err:
            rows.append({"unit": unit, "locator": err.locator if locator is None else locator, "reason": err.reason})
            return []

    fmt, units = discover(str(source))
    rows, published = [], {"segment_id": set(), "image_path": set()}
    outputs, parts = [], {}
    for unit in units:
        for out in stage(lambda u: parse_unit(str(source), fmt, u), unit):
            if isinstance(out, tuple):  # an Omni3D document's segment parts
                for part in out:
                    parts.setdefault(part.segment_id, []).append(part)
            else:
                outputs.append(out)
    for keyed in sorted(parts.items()):
        outputs += stage(merge_segments, keyed, locator=keyed[0])
    for out in outputs:
        for made in (annotate_segment(out, "train") if isinstance(out, RawSegment) else [out]):
            if isinstance(made, Reject):
                rows.append(dataclasses.asdict(made))
            elif isinstance(made, dict):
                published["segment_id"] |= set(made["segments"]["segment_id"].to_pylist())
                published["image_path"] |= set(made["frames"]["image_path"].to_pylist())
    return rows, published
