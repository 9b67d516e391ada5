"""WordEval: planned editing units x seeds x base documents -> gated .docx cases.

Read top to bottom: AtomicCases (each catalogue unit's cases through the operation library, every input and
reference .docx through the gates: ``benchwright.wordeval.stages``) -> CompositionalCases (each template's, linked
to the atomic cases that exist) -> LibreOffice<Config> (batched: one soffice call per batch) -> ChooseLite (a global
step over every published case: ``lite`` rows repeat the ``test`` rows of a quarter of the cases, stratified by
config, subsystem and base document; ``benchwright.wordeval.lite``) -> the core writer. A case whose build fails or
whose file fails a gate is quarantined, never published. The catalogue the build read is kept as
``_build/catalogue/`` (the plan the replay agents re-apply).
"""
from __future__ import annotations

import json
from pathlib import Path

import apache_beam as beam

from benchwright.dataset import Dataset, Unit
from benchwright.schemas import wordeval as schema
from benchwright.stage import outputs, run_stage
from benchwright.wordeval.config import Config
from benchwright.wordeval.sources import read_catalogue
from benchwright.wordeval.stages import (LIBREOFFICE_BATCH, Gates, build_atomic, build_compositional, copy_catalogue,
                                         libreoffice_gate, stratum, templates_of, with_lite)
from benchwright.writer import ToTables


class AtomicCases(beam.PTransform):
    """The catalogue's units -> their atomic cases, gated (``build_atomic``). Ids travel as ASCII JSON text: a lone
    surrogate a YAML escape wrote in one would stop beam.Create, and repaired it would name no unit (its cases are
    refused by name: cases.case_id)."""

    def __init__(self, cat, unit_ids: list[str], seeds: tuple):
        super().__init__()
        self.cat, self.unit_ids, self.seeds = cat, unit_ids, seeds

    def expand(self, pipeline):
        cat, seeds, gates = self.cat, self.seeds, Gates()  # each worker gets its own gates, fresh for this build
        built = run_stage(
            pipeline | "ListUnits" >> beam.Create([json.dumps(u) for u in self.unit_ids])
            | "SpreadUnits" >> beam.Reshuffle(),
            "BuildAtomic", lambda u: build_atomic(json.loads(u), cat, gates, seeds), unit="atomic_case", source=True,
            locate=json.loads, total=len(self.unit_ids), what="catalogue units")
        return outputs([built], cases=built.main)


class CompositionalCases(beam.PTransform):
    """The catalogue's templates -> their compositional cases, each linked to the published atomic cases (a side
    input of their ids), gated (``build_compositional``)."""

    def __init__(self, cat, templates: list[str], seeds: tuple, atomic):
        super().__init__()
        self.cat, self.templates, self.seeds, self.atomic = cat, templates, seeds, atomic

    def expand(self, pipeline):
        cat, seeds, gates = self.cat, self.seeds, Gates()
        atomic_ids = self.atomic | "AtomicIds" >> beam.Map(lambda c: c["case_id"])
        built = run_stage(
            pipeline | "ListTemplates" >> beam.Create([json.dumps(t) for t in self.templates])
            | "SpreadTemplates" >> beam.Reshuffle(),
            "BuildCompositional", lambda t, ids: build_compositional(json.loads(t), ids, cat, gates, seeds),
            unit="compositional_case", side_inputs=[beam.pvalue.AsList(atomic_ids)], source=True, locate=json.loads,
            total=len(self.templates), what="templates")
        return outputs([built], cases=built.main)


class LibreOfficeGate(beam.PTransform):
    """A config's cases -> those whose two files LibreOffice opens (``libreoffice_gate``, a batch per soffice call)."""

    def __init__(self, config: str):
        super().__init__()
        self.config = config

    def expand(self, cases):
        unit, name = f"{self.config}_case", self.config.capitalize()
        batches = cases | "Batch" >> beam.BatchElements(min_batch_size=LIBREOFFICE_BATCH,
                                                        max_batch_size=LIBREOFFICE_BATCH)
        memo: dict[bytes, list[str]] = {}  # each worker gets its own, fresh for this build (as ``Gates``)
        gated = run_stage(batches, f"LibreOffice{name}", lambda batch: libreoffice_gate(batch, unit, memo), unit=unit,
                          locate=lambda batch: ",".join(c["case_id"] for c in batch), total=f"Build{name}",
                          what=f"{self.config} cases", size=len)
        return outputs([gated], cases=gated.main)


class ChooseLite(beam.PTransform):
    """{config: published cases} -> the ids of the Lite cases (one global choice, ``lite.choose_lite``)."""

    def __init__(self, seed: int):
        super().__init__()
        self.seed = seed

    def expand(self, published: dict):
        from benchwright.wordeval.lite import choose_lite

        strata = ([cases | f"{config.capitalize()}Strata" >> beam.Map(stratum, config)
                   for config, cases in published.items()] | "AllStrata" >> beam.Flatten())
        pipeline = next(iter(published.values())).pipeline
        return (pipeline | "LiteSeed" >> beam.Create([self.seed])
                | "Choose" >> beam.Map(lambda seed, cases: choose_lite(cases, seed), beam.pvalue.AsList(strata)))


class WordEval(Dataset):
    name = "wordeval"
    Config = Config
    pretty_name = "WordEval: Word-native document editing cases with deterministic oracles"
    configs = schema.CONFIGS
    id_columns = schema.ID_COLUMNS
    splits = schema.SPLITS
    subset_splits = schema.SUBSET_SPLITS
    units = (Unit("atomic_case", "atomic", primary=True), Unit("compositional_case", "compositional"))
    license = "mit"
    description = ("Word-native document editing cases: an input .docx, a natural-language instruction, a reference "
                   ".docx made by applying the planned editing unit, and a deterministic oracle over Word object "
                   "properties. Atomic cases (one unit) and compositions of them; lite is a stratified quarter.")
    creators = ({"type": "Organization", "name": "benchwright", "description": "generates the cases"},)
    task_categories = ("text-generation",)
    tags = ("docx", "office", "document-editing", "agents", "evaluation")
    # size on disk (benchwright.output_faults): the shipped catalogue's 0.2 MB of YAML -> 62.1 MB of cases
    # (docs/SCALING.md); a smaller catalogue makes fewer cases per byte (tiny: 2.5 MB), so this over-says it
    output_per_input_byte, output_fixed_bytes = 313.0, 0
    synth = "benchwright.wordeval.synth:write_source"
    evaluator = "benchwright.evaluation.wordeval:run_cli"
    baselines = "benchwright.baselines.wordeval:run_cli"
    references = {"compositional": {"atomic_case_ids": "atomic"}}  # a composition's atomic cases are published
    runner = "benchwright.baselines.wordeval:run_harness_cli"
    # Lite's statistics and the baseline agents, run on the build itself when its card is made
    card_baselines = "benchwright.baselines.wordeval:card_tables"

    def default_source(self, workdir: str) -> str:
        from benchwright.wordeval.catalogue import CATALOGUE_DIR

        return str(CATALOGUE_DIR)

    def expand(self, pipeline, source, staging, previous):
        settings = self.settings
        cat = read_catalogue(source)
        copy_catalogue(source, staging)
        atomic = pipeline | "AtomicCases" >> AtomicCases(cat, sorted(settings.unit_ids or cat.units), settings.seeds)
        compositional = pipeline | "CompositionalCases" >> CompositionalCases(
            cat, templates_of(cat, settings.unit_ids), settings.seeds, atomic["cases"])
        stages, published = [atomic, compositional], {}
        for config, built in (("atomic", atomic), ("compositional", compositional)):
            published[config] = built["cases"]
            if settings.libreoffice_gate == "all":
                gated = built["cases"] | f"LibreOfficeGate{config.capitalize()}" >> LibreOfficeGate(config)
                stages.append(gated)
                published[config] = gated["cases"]
        lite = beam.pvalue.AsSingleton(published | "ChooseLite" >> ChooseLite(settings.lite_seed))
        tables = {config: (cases
                           | f"{config.capitalize()}Lite" >> beam.FlatMap(with_lite, lite)
                           | f"{config.capitalize()}Tables" >> ToTables(schema.CONFIGS[config], 50, 200))
                  for config, cases in published.items()}
        return tables, stages

    def export(self, staging: str, prepared=None) -> dict:
        from benchwright.loaders.wordeval import export_cases

        return export_cases(Path(staging))

    def responsible_ai(self, staging: str, source: str) -> dict:
        from benchwright.cards.wordeval import responsible_ai

        return responsible_ai(self, Path(staging), source)

    def card_context(self, staging: str) -> dict:
        from benchwright.cards.wordeval import card_statistics

        return card_statistics(Path(staging))

    def expectation_suites(self) -> dict:
        from benchwright.validation.wordeval import EXPECTATIONS

        return EXPECTATIONS

    def plant_bad_record(self, source: str) -> str:
        """A catalogue value no operation can write: font_color's colours become non-hex."""
        import yaml

        path = Path(source) / "units" / "01_character_formatting.yaml"
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        unit = next(u for u in doc["units"] if u["id"] == "font_color")
        for choice in unit["value"]["choices"]:
            choice["value"] = "NOTHEX"
        path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
        return "font_color@"

    def validate_tables(self, staging: str) -> list[dict]:
        from benchwright.validation.wordeval import table_checks

        return table_checks(Path(staging))


DATASET = WordEval()
