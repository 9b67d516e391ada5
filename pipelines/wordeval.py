"""WordEval: planned editing units x seeds x base documents -> gated .docx cases.

Read top to bottom: ListUnits -> BuildAtomic (each unit's cases through the operation library,
every input and reference .docx through the gates) -> ListTemplates -> BuildCompositional (linked
to the atomic cases that exist) -> LibreOfficeGate (batched: one soffice call per batch) -> ChooseLite
(a global step over every published case: ``lite`` rows repeat the ``test`` rows of a quarter of the
cases, stratified by config, subsystem and base document; ``benchwright.wordeval.lite``) -> the core
writer. A case whose build fails or whose file fails a gate is quarantined, never published. The
catalogue the build read is kept as ``_build/catalogue/`` (the plan the replay agents re-apply).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import apache_beam as beam
import pyarrow as pa

from benchwright.dataset import Dataset, Unit
from benchwright.pipelines.wordeval_sources import read_catalogue
from benchwright.stage import FILTERED, Reject, run_stage
from benchwright.writer import SPLIT_COLUMN, rows_to_table, with_split
from benchwright.schemas import wordeval as schema

SEEDS = (0, 1)
SPLIT = "test"
LITE = "lite"       # a subset of test (Dataset.subset_splits)
CATALOGUE = "_build/catalogue"
LIBREOFFICE_BATCH = 40
# Which generated files LibreOffice must open: "all" (the build's validation), "none".
LIBREOFFICE_GATE = "all"


class Gates:
    """The non-LibreOffice gates on a case's two files, memoised by content for one build (many cases
    share an input document), and the case's reference against its own oracle (a reference that
    fails it, e.g. a target anchor the edit itself moved, would fail the replay agent: no case can
    be passed). Returns the case, or a quarantine Reject naming it."""

    def __init__(self):
        self._memo: dict[str, list[str]] = {}

    def __call__(self, case: dict, unit: str):
        import hashlib

        from benchwright.formats.ooxml.gate import gate_docx

        problems = []
        for name in ("input_docx", "reference_docx"):
            key = hashlib.sha256(case[name]).hexdigest()
            if key not in self._memo:
                self._memo[key] = gate_docx(case[name], f"{case['case_id']}/{name}")
            problems += [f"{name}: {p}" for p in self._memo[key]]
        if problems:
            return Reject(unit, case["case_id"], "; ".join(problems[:5]))
        own = _own_oracle_failures(case)
        if own:
            return Reject(unit, case["case_id"], "the reference fails its own oracle: " + "; ".join(own[:5]))
        return case


def _own_oracle_failures(case: dict) -> list[str]:
    import json

    from benchwright.wordeval.oracle import compare, reference_snapshot

    ref, flat = reference_snapshot(case["reference_docx"])
    result = compare(ref, ref, json.loads(case["oracle"]), flat)
    return [f"{c['name']}: {c.get('reason') or 'differs'}" for c in result["checks"] if not c["passed"]]


def build_atomic(unit_id: str, cat, gates: Gates, seeds=SEEDS):
    """Every atomic case of one unit (bases and seed dedupe as the catalogue says), gated."""
    from benchwright.wordeval.cases import iter_cases

    errors: list[dict] = []
    not_planned: list[dict] = []
    cases = list(iter_cases(cat, seeds=seeds, units=[unit_id], errors=errors, not_planned=not_planned))
    for e in errors:
        yield Reject("atomic_case", f"{e['unit_id']}@{e['base_document']}#seed={e['seed']}", e["reason"])
    for e in not_planned:   # the plan says why a unit is not planned on a base document
        yield Reject("atomic_case", f"{e['unit_id']}@{e['base_document']}#seed={e['seed']}",
                     f"not planned: {e['reason']}", kind=FILTERED)
    for case in cases:
        yield gates({**case, SPLIT_COLUMN: SPLIT}, "atomic_case")


def build_compositional(template_id: str, atomic_ids: list[str], cat, gates: Gates, seeds=SEEDS):
    """The cases of one composition template, each linked to the atomic cases that were published."""
    from benchwright.wordeval.cases import iter_compositions

    one = dataclasses.replace(cat, templates={template_id: cat.templates[template_id]})
    errors: list[dict] = []
    not_planned: list[dict] = []
    cases = list(iter_compositions(one, seeds=seeds, atomic_ids=set(atomic_ids), errors=errors,
                                   not_planned=not_planned))
    for e in errors:
        yield Reject("compositional_case", f"{e['template']}@{e['base_document']}#seed={e['seed']}", e["reason"])
    for e in not_planned:
        yield Reject("compositional_case", f"{e['template']}@{e['base_document']}#seed={e['seed']}",
                     f"not planned: {e['reason']}", kind=FILTERED)
    for case in cases:
        yield gates({**case, SPLIT_COLUMN: SPLIT}, "compositional_case")


def libreoffice_gate(batch: list[dict], unit: str):
    """One soffice call for a batch of cases: a case whose input or reference LibreOffice cannot
    open is quarantined."""
    from benchwright.formats.ooxml.libreoffice import libreoffice_gate as gate

    docs = {f"{c['case_id']}/{name}": c[name] for c in batch for name in ("input_docx", "reference_docx")}
    problems = gate(docs)
    for case in batch:
        found = [f"{name}: {p}" for name in ("input_docx", "reference_docx")
                 for p in problems.get(f"{case['case_id']}/{name}", [])]
        yield Reject(unit, case["case_id"], "; ".join(found)) if found else case


def with_lite(case: dict, lite: frozenset):
    """The case in ``test``, and again in ``lite`` when Lite chose it."""
    yield case
    if case["case_id"] in lite:
        yield {**case, SPLIT_COLUMN: LITE}


def copy_catalogue(source: str, staging: str) -> None:
    """The catalogue's YAML files as the build read them, under ``_build/catalogue``."""
    import posixpath

    import fsspec

    fs, root = fsspec.core.url_to_fs(source)
    out_fs, out = fsspec.core.url_to_fs(posixpath.join(staging, CATALOGUE))
    for path in sorted(fs.find(root)):
        if path.endswith(".yaml"):
            rel = posixpath.relpath(path, root)
            out_fs.makedirs(posixpath.dirname(posixpath.join(out, rel)), exist_ok=True)
            out_fs.pipe_file(posixpath.join(out, rel), fs.cat_file(path))


class WordEval(Dataset):
    name = "wordeval"
    pretty_name = "WordEval: Word-native document editing cases with deterministic oracles"
    configs = schema.FEATURES
    id_columns = {"atomic": "case_id", "compositional": "case_id"}
    splits = (SPLIT, LITE)
    subset_splits = {LITE: SPLIT}
    units = (Unit("atomic_case", "atomic", primary=True), Unit("compositional_case", "compositional"))
    license = "mit"
    description = ("Word-native document editing cases: an input .docx, a natural-language instruction, a reference "
                   ".docx made by applying the planned editing unit, and a deterministic oracle over Word object "
                   "properties. Atomic cases (one unit) and compositions of them; lite is a stratified quarter.")
    creators = ({"type": "Organization", "name": "benchwright", "description": "generates the cases"},)
    task_categories = ("text-generation",)
    tags = ("docx", "office", "document-editing", "agents", "evaluation")
    synth = "benchwright.wordeval.synth:write_catalogue_source"
    evaluator = "benchwright.evaluation.wordeval:run_cli"
    baselines = "benchwright.baselines.wordeval:run_cli"
    references = {"compositional": {"atomic_case_ids": "atomic"}}  # a composition's atomic cases are published
    runner = "benchwright.baselines.wordeval:run_harness_cli"
    libreoffice_gate = LIBREOFFICE_GATE
    seeds = SEEDS
    lite_seed = 0
    unit_ids: tuple | None = None  # build only these units (tests); None = the whole catalogue

    def default_source(self, workdir: str) -> str:
        from benchwright.wordeval.catalogue import CATALOGUE_DIR

        return str(CATALOGUE_DIR)

    def expand(self, pipeline, source, staging, previous):
        cat = read_catalogue(source)
        copy_catalogue(source, staging)
        unit_ids = sorted(self.unit_ids or cat.units)
        gates = Gates()  # each worker gets its own copy, fresh for this build
        atomic = run_stage(pipeline | "ListUnits" >> beam.Create(unit_ids) | "SpreadUnits" >> beam.Reshuffle(),
                           "BuildAtomic", lambda u: build_atomic(u, cat, gates, self.seeds), unit="atomic_case",
                           source=True, total=len(unit_ids), what="catalogue units")
        atomic_ids = atomic.main | "AtomicIds" >> beam.Map(lambda c: c["case_id"])
        templates = sorted(t for t in cat.templates
                           if self.unit_ids is None or all(s["unit"] in unit_ids for s in cat.templates[t]["steps"]))
        compositional = run_stage(
            pipeline | "ListTemplates" >> beam.Create(templates) | "SpreadTemplates" >> beam.Reshuffle(),
            "BuildCompositional", lambda t, ids: build_compositional(t, ids, cat, gates, self.seeds),
            unit="compositional_case", side_inputs=[beam.pvalue.AsList(atomic_ids)], source=True,
            total=len(templates), what="templates")
        rejects, published = [atomic, compositional], {}
        for config, built in (("atomic", atomic), ("compositional", compositional)):
            cases = built.main
            if self.libreoffice_gate == "all":
                gated = run_stage(
                    cases | f"Batch{config.capitalize()}" >> beam.BatchElements(
                        min_batch_size=LIBREOFFICE_BATCH, max_batch_size=LIBREOFFICE_BATCH),
                    f"LibreOffice{config.capitalize()}",
                    lambda batch, unit=f"{config}_case": libreoffice_gate(batch, unit), unit=f"{config}_case",
                    locate=lambda batch: ",".join(c["case_id"] for c in batch),
                    total=f"Build{config.capitalize()}", what=f"{config} cases", size=len)
                rejects.append(gated)
                cases = gated.main
            published[config] = cases
        strata = ([published[config] | f"{config.capitalize()}Strata" >> beam.Map(
                      lambda c, config=config: {"case_id": c["case_id"], "config": config, "subsystem": c["subsystem"],
                                                "base_document": c["base_document"]})
                   for config in published] | "AllStrata" >> beam.Flatten())
        lite = beam.pvalue.AsSingleton(pipeline | "LiteSeed" >> beam.Create([self.lite_seed])
                                       | "ChooseLite" >> beam.Map(_choose_lite, beam.pvalue.AsList(strata)))
        tables = {config: (cases
                           | f"{config.capitalize()}Lite" >> beam.FlatMap(with_lite, lite)
                           | f"Batch{config.capitalize()}Rows" >> beam.BatchElements(min_batch_size=50,
                                                                                     max_batch_size=200)
                           | f"{config.capitalize()}Table" >> beam.Map(_table, config))
                  for config, cases in published.items()}
        return tables, rejects

    def export(self, staging: str) -> dict:
        from benchwright.loaders.wordeval import export_cases

        return export_cases(Path(staging))

    def responsible_ai(self, staging: str, source: str) -> dict:
        from benchwright.cards.wordeval import responsible_ai

        return responsible_ai(self, Path(staging), source)

    def card_context(self, staging: str) -> dict:
        from benchwright.baselines.wordeval import card_sections
        from benchwright.cards.wordeval import card_statistics

        # Lite and the baseline agents run on the build itself (pipelines sit above baselines)
        return {**card_statistics(Path(staging)), **card_sections(Path(staging), self.libreoffice_gate != "none")}

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


def _choose_lite(seed: int, strata: list[dict]) -> frozenset:
    from benchwright.wordeval.lite import choose_lite

    return choose_lite(strata, seed)


def _table(rows: list[dict], config: str) -> pa.Table:
    features = schema.FEATURES[config]
    return rows_to_table([{k: r.get(k) for k in features} | {SPLIT_COLUMN: r[SPLIT_COLUMN]} for r in rows], with_split(features))


DATASET = WordEval()
