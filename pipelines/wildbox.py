"""WildBox: raw drone segments (or KITTI / Omni3D files) to the frames, boxes and segments configs.

Read top to bottom, a record goes: ReadSegments (one parser per raw format, all producing a ``RawSegment``:
``benchwright.wildbox.sources``) -> VideoSplits (video-level, stratified by species, stable) -> AnnotateSegments
(frames, geometry, masks, record checks, normalisation, support points, tables; one numpy batch per segment:
``benchwright.wildbox.stages``) -> the core writer. Every refusal is a quarantine or filtered row.
"""
from __future__ import annotations

import posixpath
from pathlib import Path

import apache_beam as beam
import fsspec

from benchwright.dataset import Dataset, Unit
from benchwright.errors import SourceError
from benchwright.registry import resolve
from benchwright.schemas import wildbox as schema
from benchwright.splits import AssignSplits, SplitRule, WriteSplits, read_previous, split_of
from benchwright.stage import outputs, run_stage
from benchwright.validation import wildbox as checks
from benchwright.wildbox.stages import annotate_segment
from benchwright.wildbox.config import Config
from benchwright.wildbox.sources import UNIT_OF, discover, merge_segments, parse_unit


class ReadSegments(beam.PTransform):
    """The source's units (``discover``) -> RawSegments, one parser per raw format (``parse_unit``); the parts of
    one segment folder that Omni3D documents list are merged into it (``merge_segments``)."""

    def __init__(self, source: str, fmt: str, units: list):
        super().__init__()
        self.source, self.fmt, self.units = source, fmt, units

    def expand(self, pipeline):
        source, fmt = self.source, self.fmt
        parsed = run_stage(
            pipeline | "ListUnits" >> beam.Create(self.units) | "Spread" >> beam.Reshuffle(),
            "ParseSegment", lambda unit: parse_unit(source, fmt, unit), unit=UNIT_OF[fmt], source=True,
            total=len(self.units), what="Omni3D documents" if fmt == "omni3d" else "segments")
        if fmt != "omni3d":
            return outputs([parsed], segments=parsed.main)
        merged = run_stage(  # a folder's images may be listed by several documents: one segment of them all
            parsed.main | "SegmentParts" >> beam.FlatMap(lambda parts: [(p.segment_id, p) for p in parts])
            | "GroupParts" >> beam.GroupByKey(),
            "MergeSegments", merge_segments, unit="segment", locate=lambda kv: kv[0], source=True)
        return outputs([parsed, merged], segments=merged.main)


class VideoSplits(beam.PTransform):
    """RawSegments -> the {video: split} assignment (``rule``; ``previous``: an earlier build's, kept), written to
    ``_build/splits.json``."""

    def __init__(self, rule: SplitRule, previous: dict, staging: str):
        super().__init__()
        self.rule, self.previous, self.staging = rule, previous, staging

    def expand(self, segments):
        splits = (segments
                  | "VideoSpecies" >> beam.Map(lambda s: (s.video_id, s.species))
                  | "AssignSplits" >> AssignSplits(self.rule, self.previous))
        splits | "WriteSplits" >> WriteSplits(self.staging, self.rule)
        return splits


class AnnotateSegments(beam.PTransform):
    """RawSegments -> the frames, boxes and segments tables of each (``annotate_segment``, in its video's split)."""

    def __init__(self, splits, rule: SplitRule, total: str):
        super().__init__()
        self.splits, self.rule, self.total = splits, rule, total

    def expand(self, segments):
        rule = self.rule
        annotated = run_stage(
            segments, "AnnotateSegment",
            lambda seg, splits: annotate_segment(seg, split_of(splits, seg.video_id, rule)), unit="segment", locate=lambda s: s.locator, side_inputs=[beam.pvalue.AsSingleton(self.splits)],
            total=self.total, what="segments")
        return outputs([annotated], **{config: annotated.main | f"Select{config.capitalize()}" >> beam.Map(
            lambda tables, c=config: tables[c]) for config in schema.CONFIGS})


class WildBox(Dataset):
    name = "wildbox"
    Config = Config
    pretty_name = "WildBox: monocular 3D wildlife detection from drone video"
    configs = schema.CONFIGS
    id_columns = schema.ID_COLUMNS
    splits = schema.SPLITS
    units = (Unit("segment", "segments"), Unit("frame", "frames"), Unit("box", "boxes", primary=True))
    license = "cc-by-nc-sa-4.0"
    description = ("Monocular 3D wildlife detection from drone video: per-frame images and intrinsics, tight 2D "
                   "boxes, full-rotation 3D cuboids in a per-segment scale-normalised camera frame, track ids, "
                   "video-level splits stratified by species. Built by benchwright from the WildBox release layout.")
    creators = ({"type": "Organization", "name": "3DOM-FBK", "description": "publisher of the WildBox release"},)
    citation = ("@misc{wildbox,\n  title = {WildBox: monocular 3D wildlife detection from drone video},\n"
                "  author = {{3DOM-FBK}},\n  note = {The WildBox release (3DOM-FBK/WildBox)}\n}")
    task_categories = ("object-detection",)
    tags = ("3d-object-detection", "monocular", "wildlife", "drone", "omni3d", "kitti")
    # size on disk (benchwright.output_faults): tiny 2.3 MB of input -> 13.4 MB, default 150.5 MB -> 914.5 MB
    # (exports copy the frames; 2026-12-02); the fit's fixed part is below zero, so none
    output_per_input_byte, output_fixed_bytes = 6.08, 0
    synth = "benchwright.wildbox.synth:write_source"
    evaluator = "benchwright.evaluation.wildbox:run_cli"
    baselines = "benchwright.baselines.wildbox:run_cli"
    # what the yaw-only KITTI export loses, measured with the evaluator's exact 3D IoU (written beside the export)
    kitti_export_loss = "benchwright.evaluation.wildbox:kitti_yaw_only_loss"
    references, proportion_bounds, drift_thresholds = checks.REFERENCES, checks.PROPORTIONS, checks.DRIFT_THRESHOLDS

    @property
    def split_rule(self) -> SplitRule:
        """Video-level splits, stratified by species (the core's rule: previous assignments kept, new videos in
        stable-hash order; a single-video species stays in train)."""
        return SplitRule(held_out=(("validation", self.settings.validation_share),), rest="train",
                         seed=self.settings.split_seed, group="video", stratum="species")

    def expand(self, pipeline, source, staging, previous):
        fmt, units = discover(source)
        if not units:
            raise SourceError(f"{source}: a {fmt} source with nothing in it")
        read = pipeline | "ReadSegments" >> ReadSegments(source, fmt, units)
        splits = read["segments"] | "VideoSplits" >> VideoSplits(self.split_rule, read_previous(previous), staging)
        annotated = read["segments"] | "AnnotateSegments" >> AnnotateSegments(
            splits, self.split_rule, total="MergeSegments" if fmt == "omni3d" else "ParseSegment")
        return {config: annotated[config] for config in self.configs}, [read, annotated]

    # The exports and the card run on the driver once: their modules (matplotlib, the formats) stay out
    # of every worker's start-up.
    def export_conversions(self) -> tuple:
        from benchwright.loaders.wildbox import KITTI_PNG

        return (KITTI_PNG,)  # the KITTI export's PNG frames, encoded while the pipeline runs

    def export(self, staging: str, options: list[str] | None = None, prepared=None) -> dict:
        """The Omni3D and KITTI exports and what the yaw-only one loses (``loaders.wildbox.export_build``; ``options``:
        ``benchwright export OUT/wildbox [options]``; ``prepared``: the frames' PNGs made while the pipeline ran)."""
        from benchwright.loaders.wildbox import export_build

        return export_build(Path(staging), resolve(self.kitti_export_loss), options, prepared)

    def card_context(self, staging: str) -> dict:
        from benchwright.cards.wildbox import card_statistics

        return card_statistics(Path(staging))

    def responsible_ai(self, staging: str, source: str) -> dict:
        from benchwright.cards.wildbox import responsible_ai

        return responsible_ai(self, Path(staging), source)

    def validate_tables(self, staging: str) -> list[dict]:
        return checks.table_checks(Path(staging))

    def expectation_suites(self) -> dict:
        return checks.EXPECTATIONS

    def plant_bad_record(self, source: str) -> str:
        """The first frame of the first segment becomes an undecodable JPEG."""
        fs, root = fsspec.core.url_to_fs(source)
        frame = sorted(p for p in fs.find(root) if posixpath.basename(p).startswith("frame_")
                       and p.endswith(".jpg"))[0]
        fs.pipe_file(frame, b"\xff\xd8\xff\xe0 this is not a JPEG")
        return posixpath.relpath(frame, root)


DATASET = WildBox()
