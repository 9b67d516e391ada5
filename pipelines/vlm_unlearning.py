"""VLM unlearning sets: VLGuard-shaped records -> three views of every example, ModRoute routing.

Read top to bottom, a record goes: ListRecords (the annotation files, read on the driver) ->
ParseRecord (one record's checks; its pairs become examples) -> DeduplicateIds (a record id seen
twice in one file: the first is kept) -> BuildViews (the image read and decoded, the three views
rendered; a missing or undecodable image quarantines the record and its examples) -> the core
writer. Routing is one global step: the training examples (forget and retain) are gathered and
scored once (``routing.visual_pressure``, or the ``--routing-scores`` file), the routes computed,
and the result broadcast as a side input to RouteExamples, which writes each forget example in the
view its routing chose.

Build options (besides Beam's): ``--format vlguard|mapped`` (default: detected from the files),
``--routing-scores URL`` (scores a user supplies, ``routing.read_scores``' formats), ``--render
figstep|dejavu`` (the image-only view's typographic style, ``views.STYLES``; default FigStep's own).
"""
from __future__ import annotations

import io
from pathlib import Path

import apache_beam as beam
import pyarrow as pa
from apache_beam.options.pipeline_options import PipelineOptions

from benchwright.dataset import Dataset, Unit
from benchwright.errors import BuildError, RecordError, SourceError
from benchwright.pipelines import vlm_unlearning_sources as sources
from benchwright.schemas import vlm_unlearning as schema
from benchwright.stage import Reject, run_stage
from benchwright.vlm_unlearning import records as rec
from benchwright.writer import SPLIT_COLUMN, rows_to_table, with_split

ROUTING_SEED = 0
MAX_IMAGE_PIXELS = 50_000_000  # 7,071 x 7,071: far above any VLGuard-style photograph, 150 MB as RGB
ROWS_PER_TABLE = 64


class VlmUnlearningOptions(PipelineOptions):
    """The dataset's own build options, parsed by Beam with the rest (recorded in the manifest)."""

    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument("--format", dest="source_format", default=None, choices=sources.FORMATS,
                            help="vlm_unlearning: the source's format (default: detected)")
        parser.add_argument("--routing-scores", dest="routing_scores", default=None,
                            help="vlm_unlearning: a score file (.json/.jsonl/.csv) instead of the built-in scorer")
        parser.add_argument("--render", dest="render_style", default="figstep", choices=("figstep", "dejavu"),
                            help="vlm_unlearning: the image-only render: FigStep's (FreeMonoBold, RGB; default) "
                                 "or DejaVu Sans Mono Bold from matplotlib's wheel (no system font needed)")


def _embeddable(url: str) -> str:
    """The path form ``datasets`` embeds from at write time: plain paths for local files."""
    return url[len("file://"):] if url.startswith("file://") else url


def read_image(url: str, locator: str) -> bytes:
    """The image's bytes, decoded once to prove they are an image; ``RecordError`` otherwise."""
    from PIL import Image, UnidentifiedImageError

    try:
        data = sources.read_image_bytes(url)
    except FileNotFoundError:
        raise RecordError(locator, f"image {url.rsplit('/', 2)[-2:]} is missing") from None
    except OSError as err:
        raise RecordError(locator, f"image cannot be read: {err}") from None
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.width * image.height > MAX_IMAGE_PIXELS:  # checked on the header, before any pixel
                raise RecordError(locator, f"image is {image.width} x {image.height} pixels, over the "
                                           f"{MAX_IMAGE_PIXELS:,}-pixel bound (a decompression bomb)")
            image.load()
    except Image.DecompressionBombError as err:
        raise RecordError(locator, f"image is a decompression bomb: {err}") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as err:
        raise RecordError(locator, f"image is not decodable ({len(data)} bytes): {err}") from None
    return data


def deduplicate(keyed):
    """Records sharing a record key (one id twice in one file): the first in the file is kept, the
    others are quarantined with their examples."""
    _, records = keyed
    records = sorted(records, key=lambda r: r.index)
    first = records[0]
    for dup in records[1:]:
        yield from sources.reject_record(
            f"{dup.locator}[index={dup.index}]",
            f"duplicate id {dup.record_id!r} in {dup.source_file} (records {first.index} and {dup.index}; "
            "the first is kept)", len(dup.examples))
    yield first


def build_views(record, style: str = "figstep"):
    """One record's rows: {"records": [...], view: [...], "route": [...], "score": [...]}. A missing or
    undecodable image refuses the record and its examples; an instruction that cannot be rendered (in
    render ``style``) refuses that example alone."""
    from benchwright.vlm_unlearning.views import render_instruction, view_rows

    try:
        data = read_image(record.image_url, record.locator)
    except RecordError as err:
        yield from sources.reject_record(err.locator, err.reason, len(record.examples))
        return
    # an image file travels as its path (the writer embeds it); one stored in a Parquet source, as bytes
    image_value = ({"bytes": data, "path": record.image_path} if rec.parse_embedded_image_url(record.image_url)
                   else {"bytes": None, "path": _embeddable(record.image_url)})
    out = {"records": [], **{v: [] for v in schema.VIEWS}, "route": [], "score": []}
    published = []
    for ex in record.examples:
        try:
            rendered, render = render_instruction(ex.instruction, f"{record.source_file}#id={ex.record_id}"
                                                               f"/instr-resp[{ex.pair_index}]", style)
        except RecordError as err:
            yield Reject("example", err.locator, err.reason)
            continue
        rows = view_rows(ex, record.image_path, image_value, rendered, render)
        for view, row in rows.items():
            out[view].append({**row, SPLIT_COLUMN: ex.split})
        published.append(ex.example_id)
        if ex.split != "test":  # the training examples: the scorer fits on them, forget ones are routed
            out["score"].append({"example_id": ex.example_id, "image_url": record.image_url,
                                 "prompt": ex.instruction, "response": ex.response, "role": ex.role})
        if ex.split == "forget":
            out["route"].append((out["multimodal"][-1], out["text_only"][-1]))
    if not published:
        yield Reject("record", record.locator, "none of its examples could be built")
        return
    out["records"].append({
        "record_key": record.record_key, "record_id": record.record_id, "source_file": record.source_file,
        "image_path": record.image_path, "image_safe": record.image_safe,
        "harmful_category": record.harmful_category, "harmful_subcategory": record.harmful_subcategory,
        "pairs": record.pairs, "example_ids": published, "split": record.split, SPLIT_COLUMN: record.split})
    yield out


def score_examples(examples: list[dict], scores_url: str | None, seed: int = ROUTING_SEED) -> dict:
    """The global routing step: scores for the forget examples (the built-in scorer fitted on every
    training example, or a supplied file) and each config's routed ids."""
    from benchwright.vlm_unlearning import routing

    forget = sorted(e["example_id"] for e in examples if e["role"] == "forget")
    if scores_url:
        supplied = routing.read_scores(scores_url)
        scores = {eid: supplied[eid] for eid in forget if eid in supplied}
        source = f"supplied:{scores_url.rsplit('/', 1)[-1]}"
    elif forget:
        ordered = sorted(examples, key=lambda e: e["example_id"])
        images = sources.read_images_bytes([e["image_url"] for e in ordered])
        inputs = [{**{k: e[k] for k in ("example_id", "prompt", "response", "role")}, "image": image}
                  for e, image in zip(ordered, images)]
        scores, source = routing.visual_pressure(inputs, seed=seed)
    else:
        scores, source = {}, "none"
    text_only = {}
    for gamma in schema.GAMMAS:
        text_only[schema.routing_config("modroute", gamma)] = set(routing.route(scores, gamma)[0])
        chosen, _ = routing.random_route(scores, routing.route_size(len(scores), gamma), seed)
        text_only[schema.routing_config("random", gamma)] = set(chosen)
    return {"scores": scores, "source": source, "text_only": text_only, "seed": seed}


def route_example(pair, plan: dict):
    """The routing configs' rows of one forget example."""
    multimodal, text_only = pair
    eid = multimodal["example_id"]
    if eid not in plan["scores"]:
        raise RecordError(eid, f"no routing score for it ({plan['source']})")
    for family in schema.ROUTING_FAMILIES:
        for gamma in schema.GAMMAS:
            config = schema.routing_config(family, gamma)
            routed = text_only if eid in plan["text_only"][config] else multimodal
            source = plan["source"] if family == "modroute" else f"{plan['source']}; random_route(seed={plan['seed']})"
            yield config, {**routed, "routing_score": plan["scores"][eid], "routing_score_source": source,
                           "routed_view": routed["view"], "gamma": gamma}


def _table(rows: list[dict], config: str) -> pa.Table:
    features = schema.CONFIGS[config]
    return rows_to_table([{k: r.get(k) for k in features} | {SPLIT_COLUMN: r[SPLIT_COLUMN]} for r in rows],
                         with_split(features))


def _to_tables(pcoll, config: str):
    label = config.replace(".", "")
    return (pcoll
            | f"Batch{label}" >> beam.BatchElements(min_batch_size=ROWS_PER_TABLE, max_batch_size=ROWS_PER_TABLE)
            | f"Table{label}" >> beam.Map(_table, config))


class VlmUnlearning(Dataset):
    name = "vlm_unlearning"
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
    synth = "benchwright.vlm_unlearning.synth:write_source"
    evaluator = "benchwright.evaluation.vlm_unlearning:run_cli"
    baselines = "benchwright.baselines.vlm_unlearning:run_cli"
    export_formats = {"llava": "benchwright.loaders.vlm_unlearning:export_llava"}
    references = {**{c: {"example_id": "multimodal"} for c in schema.CONFIGS if c not in ("multimodal", "records")},
                  "records": {"example_ids": "multimodal"}}  # every view and routing row is an example
    proportion_bounds = {"multimodal.role": {"forget": (0.05, 0.95), "retain": (0.05, 0.95)}}  # unlearning needs both

    def expand(self, pipeline, source, staging, previous):
        from benchwright.vlm_unlearning.views import check_style

        options = pipeline.options.view_as(VlmUnlearningOptions)
        try:  # the font is looked for before anything runs: a missing one refuses the build, naming it
            style = check_style(options.render_style)
        except ValueError as err:
            raise BuildError(f"--render {options.render_style}: {err}") from None
        fmt, raw, mapping = sources.list_records(source, options.source_format)
        if not raw:
            raise SourceError(f"{source}: a {fmt} source with no records")
        parsed = run_stage(
            pipeline | "ListRecords" >> beam.Create(raw, reshuffle=False),
            "ParseRecord", lambda e: sources.parse_record(e, source, fmt, mapping), unit="record", source=True,
            locate=lambda e: f"{e[0]}#index={e[1]}", total=len(raw), what="records")
        unique = run_stage(
            parsed.main | "ByRecordKey" >> beam.Map(lambda r: (r.record_key, r)) | "GroupByKey" >> beam.GroupByKey(),
            "DeduplicateIds", deduplicate, unit="record", locate=lambda kv: kv[0])
        # spread over workers, a Parquet row group's records together (its image column is read once)
        spread = (unique.main
                  | "ByImageGroup" >> beam.Map(lambda r: (sources.image_group(r.image_url), r))
                  | "Spread" >> beam.GroupByKey()
                  | "Records" >> beam.FlatMap(lambda kv: sorted(kv[1], key=lambda r: r.record_key)))
        built = run_stage(spread, "BuildViews", lambda r: build_views(r, style), unit="record",
                          locate=lambda r: r.locator, total="DeduplicateIds", what="records")
        tables = {}
        for config in ("records", *schema.VIEWS):
            rows = built.main | f"Select{config}" >> beam.FlatMap(lambda d, c=config: d[c])
            tables[config] = _to_tables(rows, config)
        plan = (built.main
                | "ScoreInputs" >> beam.FlatMap(lambda d: d["score"])
                | "Gather" >> beam.combiners.ToList()
                | "Score" >> beam.Map(score_examples, options.routing_scores))
        routed = run_stage(built.main | "RouteInputs" >> beam.FlatMap(lambda d: d["route"]), "RouteExamples",
                           route_example, unit="routed_example", locate=lambda p: p[0]["example_id"],
                           side_inputs=[beam.pvalue.AsSingleton(plan)])
        for config in schema.ROUTING_CONFIGS:
            rows = routed.main | f"Select{config.replace('.', '')}" >> beam.FlatMap(
                lambda kv, c=config: [kv[1]] if kv[0] == c else [])
            tables[config] = _to_tables(rows, config)
        return tables, [parsed, unique, built, routed]

    def responsible_ai(self, staging: str, source: str) -> dict:
        from benchwright.cards.vlm_unlearning import responsible_ai

        return responsible_ai(self, Path(staging), source)

    def card_context(self, staging: str) -> dict:
        from benchwright.baselines.vlm_unlearning import baseline_table
        from benchwright.cards.vlm_unlearning import card_statistics

        # the baselines run on the build itself (a few CPU seconds): the card shows what they give
        return {**card_statistics(Path(staging)), "baseline_table": baseline_table(staging)["markdown"]}

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
