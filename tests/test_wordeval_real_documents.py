"""Every unit on every shipped real document (issue 22, item 15): each builds where its precondition
holds, and what is not planned is listed with the reason in ``tests/wordeval_not_planned.yaml``.

A unit's own ``bases`` list and ``max_bases`` only choose where a build plans it; here every unit is
tried on every real base document (seed 0), so an operation that breaks on a real document (a
built-in style the document lacks, a table smaller than asked for, a footer whose text sits in a
content control) fails here, named, instead of hiding behind the documents a build happens to try.

The listing is reviewed like code: a unit that stops being planned on a document, or a new reason,
shows as a difference. After a deliberate change, write it again with
``python -m tests.test_wordeval_real_documents``.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
import yaml

LISTING = Path(__file__).with_name("wordeval_not_planned.yaml")
# Why a unit is not planned on a document (cases.NotApplicable): a role or an anchor the document
# lacks, an operation's declared precondition, an edit with no effect there. Anything else a build
# error raises is a bug.
REASONS = ("base document has no role ", "PreconditionError: ", "AnchorError: ",
           "the edit has no observable effect on this base document", "the operation did not change the document")


def _outcomes(cases: dict | None, seed: int) -> dict[tuple[str, str], tuple[str, str | None]]:
    """(unit, document) -> ("planned" | "not_planned" | "error", reason) for the atomic pairs ``cases`` (what
    ``build_all()`` returns) tried at ``seed``: the same ``build_case`` call, made once per test run."""
    known: dict[tuple[str, str], tuple[str, str | None]] = {}
    if cases:
        for c in cases["atomic"]:
            if c["seed"] == seed:
                known[(c["unit_id"], c["base_document"])] = ("planned", None)
        for kind, rows in (("not_planned", cases["not_planned"]), ("error", cases["errors"])):
            for row in rows:
                if row.get("unit_id") is not None and row["seed"] == seed:
                    known[(row["unit_id"], row["base_document"])] = (kind, row["reason"])
    return known


def real_document_plan(seed: int = 0, cases: dict | None = None) -> dict:
    """{"not_planned": {document: {reason: [unit ids]}}, "errors": [...], "planned": {document: n},
    "cpu_s": ...} for every unit of the shipped catalogue on every shipped real document. ``cases``: the
    catalogue's cases already built (``build_all()``), whose pairs at ``seed`` are not built again."""
    from benchwright.errors import RecordError
    from benchwright.wordeval.cases import NotApplicable, build_case
    from benchwright.wordeval.catalogue import load_catalogue

    cat = load_catalogue()
    real = [name for name, spec in cat.basedocs.items() if "file" in spec]
    not_planned: dict[str, dict[str, list[str]]] = {}
    planned = {name: 0 for name in real}
    errors = []
    known = _outcomes(cases, seed)
    t0 = time.process_time()
    for name in real:
        for uid, unit in cat.units.items():
            kind, reason = known.get((uid, name), (None, None))
            if kind == "planned":
                planned[name] += 1
                continue
            if kind == "not_planned":
                not_planned.setdefault(name, {}).setdefault(reason, []).append(uid)
                continue
            if kind == "error":
                errors.append(reason)
                continue
            try:
                build_case(unit, seed, name, cat)
            except NotApplicable as exc:
                not_planned.setdefault(name, {}).setdefault(exc.reason, []).append(uid)
                continue
            except RecordError as exc:
                errors.append(str(exc))
                continue
            planned[name] += 1
    return {"not_planned": not_planned, "errors": errors, "planned": planned,
            "cpu_s": round(time.process_time() - t0, 1)}


@pytest.fixture(scope="module")
def plan(wordeval_cases) -> dict:
    # the pairs the session's build of every catalogue case (seeds 0 and 1) already tried are not built again
    return real_document_plan(cases=wordeval_cases)


def test_every_unit_builds_on_every_real_document_where_it_applies(plan):
    assert plan["errors"] == []
    for document, reasons in plan["not_planned"].items():
        for reason in reasons:
            assert reason.startswith(REASONS), (document, reason)
    # the character-style unit (the built-in Strong / Emphasis / Intense Emphasis is added to a
    # document that lacks it, as Word does) builds on every real document that has a phrase
    lacking = {d for d, reasons in plan["not_planned"].items() for r, units in reasons.items()
               if "char_style_apply" in units}
    assert all("has no role 'phrase'" in r for d in lacking for r, u in plan["not_planned"][d].items()
               if "char_style_apply" in u)
    assert sum(1 for d in plan["planned"] if d not in lacking) >= 20


def test_what_is_not_planned_on_real_documents_is_the_reviewed_listing(plan):
    listed = yaml.safe_load(LISTING.read_text(encoding="utf-8"))
    assert listed["not_planned"] == plan["not_planned"], (
        "the units not planned on the real documents changed: review the difference, then write the "
        "listing again with `python -m tests.test_wordeval_real_documents`")
    assert listed["planned"] == plan["planned"]


def write_listing() -> dict:
    plan = real_document_plan()
    if plan["errors"]:
        raise SystemExit("build errors (fix them first):\n" + "\n".join(plan["errors"]))
    head = ("# Written by `python -m tests.test_wordeval_real_documents`: every unit tried on every shipped real\n"
            "# document (seed 0). `planned`: units that build there; `not_planned`: document -> reason -> units.\n")
    body = yaml.safe_dump({"planned": plan["planned"], "not_planned": plan["not_planned"]}, sort_keys=True,
                          allow_unicode=True, width=120)
    LISTING.write_text(head + body, encoding="utf-8")
    return plan


if __name__ == "__main__":
    result = write_listing()
    print(f"{sum(result['planned'].values())} planned, "
          f"{sum(len(u) for r in result['not_planned'].values() for u in r.values())} not planned, "
          f"{result['cpu_s']} s of CPU time", file=sys.stderr)
