"""VLM unlearning sets: VLGuard-shaped records -> three views of every example, ModRoute routing.

Read top to bottom, a record goes (the stages' work: ``benchwright.vlm_unlearning.stages``): ReadRecords (the
annotation files, read on the driver -> ParseRecord, one record's checks, its pairs become examples ->
DeduplicateIds, a record id seen twice in one file: the first is kept) -> BuildViews (the image read and decoded,
the three views rendered; a missing or undecodable image quarantines the record and its examples) -> the core
writer. Routing is one global step: the training examples (forget and retain) are gathered and scored once
(``routing.visual_pressure``, or the ``--routing-scores`` file), the routes computed, and the result broadcast as a
side input to RouteExamples, which writes each forget example in the view its routing chose.

Settings (``benchwright.vlm_unlearning.config``): ``--format vlguard|mapped`` (default: detected from the files),
``--routing-scores URL`` (scores a user supplies, ``routing.read_scores``' formats), ``--render figstep|dejavu``
(the image-only view's typographic style, ``views.STYLES``; default FigStep's own), ``--routing-seed N``.
"""
from __future__ import annotations

from pathlib import Path

import apache_beam as beam

from benchwright.dataset import Dataset, Unit
from benchwright.errors import BuildError, SourceError
from benchwright.schemas import vlm_unlearning as schema
from benchwright.stage import create, outputs, run_stage
from benchwright.vlm_unlearning import sources
from benchwright.vlm_unlearning.config import Config
from benchwright.vlm_unlearning.stages import build_views, dedup_key, deduplicate, route_example, score_examples
from benchwright.writer import ToTables

ROWS_PER_TABLE = 64


class ReadRecords(beam.PTransform):
    """The annotation files' records (``raw``, read on the driver) -> the records to build: each checked on its own
    (``sources.parse_record``), one per id (``deduplicate``), spread over workers with a Parquet row group's
    records together (its image column is read once)."""

    def __init__(self, source: str, fmt: str, raw: list, mapping):
        super().__init__()
        self.source, self.fmt, self.raw, self.mapping = source, fmt, raw, mapping

    def expand(self, pipeline):
        source, fmt, mapping = self.source, self.fmt, self.mapping
        parsed = run_stage(
            create(pipeline, "ListRecords", self.raw, reshuffle=False),
            "ParseRecord", lambda e: sources.parse_record(e, source, fmt, mapping), unit="record", source=True,
            locate=lambda e: f"{e[0]}#index={e[1]}", total=len(self.raw), what="records")
        keyed_by_id = fmt == "vlguard" or "id" in mapping.fields
        unique = run_stage(
            parsed.main | "ByRecordKey" >> beam.Map(lambda r: (dedup_key(r, keyed_by_id), r))
            | "GroupByKey" >> beam.GroupByKey(),
            "DeduplicateIds", deduplicate, unit="record", locate=lambda kv: kv[0])
        spread = (unique.main
                  | "ByImageGroup" >> beam.Map(lambda r: (sources.image_group(r.image_url), r))
                  | "Spread" >> beam.GroupByKey()
                  | "Records" >> beam.FlatMap(lambda kv: sorted(kv[1], key=lambda r: r.record_key)))
        return outputs([parsed, unique], records=spread)


class BuildViews(beam.PTransform):
    """Records -> the rows of the records config and of each view (``build_views``, rendered in ``style``), and the
    routing step's inputs: the training examples to score (``score``: with the head's features) and the forget
    examples' two views (``route``)."""

    def __init__(self, style: str, score: bool):
        super().__init__()
        self.style, self.score = style, score

    def expand(self, records):
        style, score = self.style, self.score
        built = run_stage(records, "BuildViews", lambda r: build_views(r, style, score), unit="record",
                          locate=lambda r: r.locator, total="DeduplicateIds", what="records")
        rows = {config: built.main | f"Select{config}" >> beam.FlatMap(lambda d, c=config: d[c])
                for config in ("records", *schema.VIEWS)}
        return outputs([built], **rows, score=built.main | "ScoreInputs" >> beam.FlatMap(lambda d: d["score"]),
                       route=built.main | "RouteInputs" >> beam.FlatMap(lambda d: d["route"]))


class Route(beam.PTransform):
    """The forget examples' two views -> each routing config's rows: the training examples (``score``) gathered and
    scored once (``score_examples``: the built-in scorer, or the file at ``scores_url``), the routes broadcast to
    RouteExamples."""

    def __init__(self, score, scores_url: str | None, seed: int):
        super().__init__()
        self.score, self.scores_url, self.seed = score, scores_url, seed

    def expand(self, pairs):
        plan = (self.score
                | "Gather" >> beam.combiners.ToList()
                | "Score" >> beam.Map(score_examples, self.scores_url, self.seed))
        routed = run_stage(pairs, "RouteExamples", route_example, unit="routed_example",
                           locate=lambda p: p[0]["example_id"], side_inputs=[beam.pvalue.AsSingleton(plan)])
        return outputs([routed], **{config: routed.main | f"Select{config.replace('.', '')}" >> beam.FlatMap(
            lambda kv, c=config: [kv[1]] if kv[0] == c else []) for config in schema.ROUTING_CONFIGS})


class VlmUnlearning(Dataset):
    name = "vlm_unlearning"
    Config = Config
    pretty_name = "Modality-decomposed VLM unlearning sets (VLGuard-shaped) with ModRoute routing"
    configs = schema.CONFIGS
    id_columns = schema.ID_COLUMNS
    splits = schema.SPLITS
    units = (Unit("example", "multimodal", primary=True), Unit("record", "records"))
    license = "mit"
    description = ("Modality-decomposed VLM unlearning sets (VLGuard-shaped): every example as multimodal, "
                   "text-only and image-only views, ModRoute and random routing configs over the forget split, and "
                   "one row per source record.")
    task_categories = ("image-text-to-text", "visual-question-answering")
    tags = ("machine-unlearning", "vlm", "safety", "vlguard", "multimodal", "modroute")
    # size on disk (benchwright.output_faults): tiny 0.09 MB of input -> 2.4 MB, default 3.3 MB -> 13.7 MB
    # (2026-12-02)
    output_per_input_byte, output_fixed_bytes = 3.50, 2_116_000
    synth = "benchwright.vlm_unlearning.synth:write_source"
    evaluator = "benchwright.evaluation.vlm_unlearning:run_cli"
    baselines = "benchwright.baselines.vlm_unlearning:run_cli"
    export_formats = {"llava": "benchwright.loaders.vlm_unlearning:export_llava"}
    # the unlearning baselines, trained on the build itself beside the statistics and the checks
    card_baselines_beside = "benchwright.baselines.vlm_unlearning:card_tables"
    references = {**{c: {"example_id": "multimodal"} for c in schema.CONFIGS if c not in ("multimodal", "records")},
                  "records": {"example_ids": "multimodal"}}  # every view and routing row is an example
    proportion_bounds = {"multimodal.role": {"forget": (0.05, 0.95), "retain": (0.05, 0.95)}}  # unlearning needs both

    def expand(self, pipeline, source, staging, previous):
        from benchwright.vlm_unlearning.views import check_style

        settings = self.settings
        try:  # the font is looked for before anything runs: a missing one refuses the build, naming it
            style = check_style(settings.render)
        except ValueError as err:
            raise BuildError(f"--render {settings.render}: {err}") from None
        fmt, raw, mapping = sources.list_records(source, settings.format)
        if not raw:
            raise SourceError(f"{source}: a {fmt} source with no records")
        records = pipeline | "ReadRecords" >> ReadRecords(source, fmt, raw, mapping)
        built = records["records"] | "Views" >> BuildViews(style, score=not settings.routing_scores)
        routed = built["route"] | "Routing" >> Route(built["score"], settings.routing_scores, settings.routing_seed)
        rows = {**{config: built[config] for config in ("records", *schema.VIEWS)},
                **{config: routed[config] for config in schema.ROUTING_CONFIGS}}
        tables = {config: pcoll | f"Table{config.replace('.', '')}" >> ToTables(
                      schema.CONFIGS[config], ROWS_PER_TABLE, ROWS_PER_TABLE) for config, pcoll in rows.items()}
        return tables, [records, built, routed]

    def responsible_ai(self, staging: str, source: str) -> dict:
        from benchwright.cards.vlm_unlearning import responsible_ai

        return responsible_ai(self, Path(staging), source)

    def card_context(self, staging: str) -> dict:
        from benchwright.cards.vlm_unlearning import card_statistics

        return card_statistics(Path(staging))

    def expectation_suites(self) -> dict:
        from benchwright.validation.vlm_unlearning import EXPECTATIONS

        return EXPECTATIONS

    def validate_tables(self, staging: str) -> list[dict]:
        from benchwright.validation.vlm_unlearning import table_checks

        return table_checks(Path(staging))

    def plant_bad_record(self, source: str) -> str:
        """The first training record's image is deleted: that record (and its examples) is quarantined."""
        import json

        records = json.loads((Path(source) / "train.json").read_text(encoding="utf-8"))
        first = records[0]
        (Path(source) / "train" / first["image"]).unlink()
        return f"train.json#id={first['id']}"


DATASET = VlmUnlearning()
