"""The shipped agents' command line and the planned edit the oracle-bounding agents start from."""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Callable

from benchwright.arguments import ArgumentParser

PLAN_FIELDS = ("case_id", "unit_id", "template", "seed", "base_document")


def plan_of(case: dict, catalogue: str | None) -> dict:
    """What ``replay`` and ``text-only`` are told about a case: its planned unit or template, seed,
    base document, and the catalogue folder the build was made from (None: the shipped one)."""
    return {**{k: case.get(k) for k in PLAN_FIELDS}, "catalogue": catalogue}


def _catalogue(root: str | None):
    """The plan's catalogue: parsed once per process and content (``load_catalogue``'s memo), so a build
    written again in the same folder is not planned from the catalogue of the one before."""
    from benchwright.wordeval.catalogue import load_catalogue

    return load_catalogue(root)


def planned_edit(input_docx: bytes, plan: dict) -> bytes:
    """The input with the plan's operation applied, through the code path that built the case: the
    case is rebuilt from its plan, and its input must be exactly the given one (else the plan is not
    this input's, and nothing is guessed)."""
    from benchwright.wordeval.cases import build_case, build_composite

    cat = _catalogue(plan.get("catalogue"))
    if plan.get("template"):
        case = build_composite(plan["template"], int(plan["seed"]), plan["base_document"], cat)
    else:
        case = build_case(plan["unit_id"], int(plan["seed"]), plan["base_document"], cat)
    if case["input_docx"] != input_docx:
        raise ValueError(f"the plan of {plan.get('case_id')} does not match this input (sha256 "
                         f"{hashlib.sha256(input_docx).hexdigest()[:12]} vs the planned case's "
                         f"{hashlib.sha256(case['input_docx']).hexdigest()[:12]})")
    return case["reference_docx"]


def main(edit: Callable[[bytes, str, dict | None], bytes], description: str, argv=None, needs_plan: bool = False,
         prog: str | None = None) -> int:
    """``PROG INPUT INSTRUCTION_FILE OUTPUT [--plan PLAN]``: read, edit, write; errors go to stderr
    with a non-zero exit status (the harness records both). ``prog``: the name the messages carry
    (the agent's file name, as ``python -m`` gives it, also when a long-lived worker runs the agent)."""
    ap = ArgumentParser(prog=prog, description=description)
    ap.add_argument("input", help="the input .docx")
    ap.add_argument("instruction", help="a text file holding the instruction")
    ap.add_argument("output", help="where to write the edited .docx")
    ap.add_argument("--plan", required=needs_plan, help="the case's plan (JSON), for the oracle-bounding agents")
    ns = ap.parse_args(argv)
    try:
        data = Path(ns.input).read_bytes()
        instruction = Path(ns.instruction).read_text(encoding="utf-8")
        plan = json.loads(Path(ns.plan).read_text(encoding="utf-8")) if ns.plan else None
        out = edit(data, instruction, plan)
    except Exception as exc:  # noqa: BLE001 - an agent reports its failure and exits non-zero
        print(f"{ap.prog}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    Path(ns.output).write_bytes(out)
    return 0
