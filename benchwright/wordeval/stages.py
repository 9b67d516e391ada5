"""What WordEval's pipeline stages do to one element (``pipelines/wordeval.py`` runs them): a catalogue unit's atomic
cases and a template's compositional cases, built through the operation library and gated; a batch of cases through
LibreOffice; a case's Lite membership. Every case a gate refuses is a quarantine ``Reject`` naming it."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import posixpath

import fsspec

from benchwright.records import FILTERED, SPLIT_COLUMN, Reject
from benchwright.schemas.wordeval import SPLITS

SPLIT, LITE = SPLITS  # every case is in test; lite repeats the test rows of the Lite cases (SUBSET_SPLITS)
CATALOGUE = "_build/catalogue"  # the catalogue a build was made from (the plan the replay agents re-apply)
LIBREOFFICE_BATCH = 40  # documents per soffice call
DOCX_FILES = ("input_docx", "reference_docx")


class Gates:
    """The non-LibreOffice gates on a case's two files, memoised by content for one build (many cases
    share an input document), and the case's reference against its own oracle (a reference that
    fails it, e.g. a target anchor the edit itself moved, would fail the replay agent: no case can
    be passed). Returns the case, or a quarantine Reject naming it."""

    def __init__(self):
        self._memo: dict[str, list[str]] = {}

    def __call__(self, case: dict, unit: str):
        from benchwright.formats.ooxml.gate import gate_docx

        problems = []
        for name in DOCX_FILES:
            key = hashlib.sha256(case[name]).hexdigest()
            if key not in self._memo:
                self._memo[key] = gate_docx(case[name], f"{case['case_id']}/{name}")
            problems += [f"{name}: {p}" for p in self._memo[key]]
        if problems:
            return Reject(unit, case["case_id"], "; ".join(problems[:5]))
        own = own_oracle_failures(case)
        if own:
            return Reject(unit, case["case_id"], "the reference fails its own oracle: " + "; ".join(own[:5]))
        return case


def own_oracle_failures(case: dict) -> list[str]:
    """The checks of the case's own oracle its reference fails (none, for a case that can be passed)."""
    from benchwright.wordeval.oracle import compare, reference_snapshot

    ref, flat = reference_snapshot(case["reference_docx"])
    result = compare(ref, ref, json.loads(case["oracle"]), flat)
    return [f"{c['name']}: {c.get('reason') or 'differs'}" for c in result["checks"] if not c["passed"]]


def build_atomic(unit_id: str, cat, gates: Gates, seeds):
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


def templates_of(cat, unit_ids: tuple | None) -> list[str]:
    """The composition templates a build makes: all of them, or (``unit_ids``: a build of these units only) those
    whose every step is one of its units."""
    return sorted(t for t in cat.templates
                  if unit_ids is None or all(s["unit"] in unit_ids for s in cat.templates[t]["steps"]))


def build_compositional(template_id: str, atomic_ids: list[str], cat, gates: Gates, seeds):
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


def libreoffice_gate(batch: list[dict], unit: str, memo: dict[bytes, list[str]] | None = None):
    """One soffice call for a batch of cases: a case whose input or reference LibreOffice cannot
    open is quarantined. ``memo`` (sha256 -> problems, one per stage of a build, like ``Gates``'):
    files an earlier batch converted are not converted again (a base document's cases fall in
    several batches: a default build's atomic batches held 1,201 files, 996 of them distinct)."""
    from benchwright.formats.ooxml.libreoffice import libreoffice_gate as gate

    problems = gate({f"{c['case_id']}/{name}": c[name] for c in batch for name in DOCX_FILES}, memo)
    for case in batch:
        found = [f"{name}: {p}" for name in DOCX_FILES for p in problems[f"{case['case_id']}/{name}"]]
        yield Reject(unit, case["case_id"], "; ".join(found)) if found else case


def stratum(case: dict, config: str) -> dict:
    """What Lite is stratified by (``benchwright.wordeval.lite.choose_lite``): the case's config, subsystem and
    base document."""
    return {"case_id": case["case_id"], "config": config, "subsystem": case["subsystem"],
            "base_document": case["base_document"]}


def with_lite(case: dict, lite: frozenset):
    """The case in ``test``, and again in ``lite`` when Lite chose it."""
    yield case
    if case["case_id"] in lite:
        yield {**case, SPLIT_COLUMN: LITE}


def copy_catalogue(source: str, staging: str) -> None:
    """The catalogue's YAML files as the build read them, under ``_build/catalogue``."""
    fs, root = fsspec.core.url_to_fs(source)
    out_fs, out = fsspec.core.url_to_fs(posixpath.join(staging, CATALOGUE))
    for path in sorted(fs.find(root)):
        if path.endswith(".yaml"):
            rel = posixpath.relpath(path, root)
            out_fs.makedirs(posixpath.dirname(posixpath.join(out, rel)), exist_ok=True)
            out_fs.pipe_file(posixpath.join(out, rel), fs.cat_file(path))
