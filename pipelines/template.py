"""Template: short labelled texts, read from a folder of JSON Lines files. The dataset ``benchwright new NAME``
copies: every part a dataset declares is here, each SLOT named (docs/ADDING_A_DATASET.md walks through them).

Read top to bottom (the stages' work: ``benchwright.template.stages``): ReadRecords (each source file's lines
parsed and checked: a bad line is its record's quarantine row, a text below ``--min-words`` a filtered row) ->
DeduplicateIds (the first record of each id kept) -> the core writer (``records/<split>-*.parquet``).
"""
from __future__ import annotations

from pathlib import Path

import apache_beam as beam

from benchwright.dataset import Dataset, Unit
from benchwright.schemas import template as schema
from benchwright.stage import create, outputs, run_stage
from benchwright.template.config import Config
from benchwright.template.sources import source_files
from benchwright.template.stages import UNIT, first_of_each_id, parse_file
from benchwright.writer import ToTables

ROWS_PER_TABLE = 256  # rows per pyarrow table handed to the writer


class ReadRecords(beam.PTransform):
    """The source's files (listed on the driver) -> their records, each checked (``parse_file``), one per id
    (``first_of_each_id``)."""

    def __init__(self, source: str, files: list[str], min_words: int):
        super().__init__()
        self.source, self.files, self.min_words = source, files, min_words

    def expand(self, pipeline):
        source, min_words = self.source, self.min_words
        parsed = run_stage(
            create(pipeline, "ListFiles", [(source, rel) for rel in self.files]) | "SpreadFiles" >> beam.Reshuffle(),
            "ParseFile", lambda element: parse_file(element, min_words), unit=UNIT, source=True,
            locate=lambda element: element[1], total=len(self.files), what="files")
        unique = run_stage(
            parsed.main | "ById" >> beam.Map(lambda r: (r["id"], r)) | "GroupById" >> beam.GroupByKey(),
            "DeduplicateIds", first_of_each_id, unit=UNIT, locate=lambda keyed: keyed[0])
        return outputs([parsed, unique], records=unique.main)


class Template(Dataset):
    # SLOT: what the dataset is (the card's YAML and the Croissant file state it)
    name = "template"
    Config = Config
    pretty_name = "Template: short texts labelled negative or positive"
    license = "cc0-1.0"
    description = ("Short product-review-like texts, each labelled negative or positive, in train and test "
                   "splits: the small dataset benchwright's new datasets are copied from.")
    creators = ({"type": "Organization", "name": "benchwright", "description": "writes the synthetic texts"},)
    task_categories = ("text-classification",)
    tags = ("text-classification", "sentiment", "synthetic")
    # SLOT: the shape (schemas/template.py) and what is reconciled (read == written + quarantined + filtered)
    configs = schema.CONFIGS
    id_columns = schema.ID_COLUMNS
    splits = schema.SPLITS
    units = (Unit(UNIT, "records", primary=True),)
    # SLOT: data quality the core checks (docs/DATA_QUALITY.md): references between configs, class shares
    references = {}
    proportion_bounds = {"records.label": {"*": (0.2, 0.8)}}
    # SLOT: the size on disk, fitted on the tiny and default builds (benchwright.output_faults); None: not measured
    output_per_input_byte, output_fixed_bytes = None, 0
    # SLOT: the parts the CLI drives, as "module:function"
    synth = "benchwright.template.synth:write_source"
    evaluator = "benchwright.evaluation.template:run_cli"
    baselines = "benchwright.baselines.template:run_cli"
    runner = None                   # `benchwright run template`: an agent over the cases (WordEval's)
    export_formats = {}             # `benchwright export BUILD --format F OUT`: {format: "module:function"}
    card_baselines = None           # the card's tables a baseline makes on the build (WordEval's)

    def expand(self, pipeline, source, staging, previous):
        """SLOT: the pipeline, read top to bottom: ({config: PCollection of pyarrow Tables}, [stage outputs])."""
        read = pipeline | "ReadRecords" >> ReadRecords(source, source_files(source), self.settings.min_words)
        tables = {"records": read["records"] | "RecordsTables" >> ToTables(schema.RECORDS, ROWS_PER_TABLE,
                                                                           ROWS_PER_TABLE)}
        return tables, [read]

    def card_context(self, staging: str) -> dict:
        from benchwright.cards.template import card_statistics

        return card_statistics(Path(staging))

    def responsible_ai(self, staging: str, source: str) -> dict:
        from benchwright.cards.template import responsible_ai

        return responsible_ai(self, Path(staging), source)

    def validate_tables(self, staging: str) -> list[dict]:
        from benchwright.validation.template import table_checks

        return table_checks(Path(staging))

    def expectation_suites(self) -> dict:
        from benchwright.validation.template import EXPECTATIONS

        return EXPECTATIONS

    def plant_bad_record(self, source: str) -> str:
        """SLOT: damage one record of a tiny source (the contract test's): the first line's label is unknown."""
        import json

        path = sorted(Path(source).glob("*.jsonl"))[0]
        first, rest = path.read_text(encoding="utf-8").split("\n", 1)
        path.write_text(json.dumps({**json.loads(first), "label": "unknown"}) + "\n" + rest, encoding="utf-8")
        return f"{path.name}:1"


DATASET = Template()
