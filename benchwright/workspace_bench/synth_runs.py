"""Synthetic judge runs beside a synthetic release: what ``benchwright evaluate workspace_bench --runs``
reads, so the scorer can be tried without an agent or a judge model.

The layout and the judge file are the release runner's (docs/reference/workspace_bench.md)::

    runs/<Agent>--<Model>--<Run>/<caseId>/rubrics_judge--<judgeModel>.json

    {"taskId": "12", "agentKind": "<Agent>", "createdAt": "...",
     "rubrics": [{"index": 0, "rubric": "<the task's rubric 0>", "passed": true, "confidence": 0.9,
                  "evidence": "..."}, ...],
     "summary": {"total": 19, "passed": 11}}

Two runs of one made-up agent: ``run1`` over every task, ``run2`` over the Lite tasks. The verdicts are
a stable hash of (seed, run, task, rubric), passing more often on easier tasks; nothing is judged. Each
run holds the cases the scorer must handle as the release's summarizer does: a task without a judge file
(left out of both numerator and denominator), a task judged twice by two judge models (the newer file
counts, by its fixed modification time), ``passed`` written as a string, an item the output-path refresh
flipped (``adjustedByOutputPathRubric`` with ``originalPassed``) and a judge that reported an API error.
The same (scale, seed) gives the same bytes and modification times.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from benchwright.hashing import stable_hash64

AGENT, MODEL = "ReferenceAgent", "synthetic"
JUDGE, OTHER_JUDGE = "judge-synthetic", "judge-older"
CREATED_AT = "2026-01-01T00:00:00Z"
MTIME = 1_767_225_600  # 2026-01-01T00:00:00Z: fixed, so "the newest judge file" is the same on every machine
PASS_SHARE = {"easy": 0.75, "medium": 0.55, "hard": 0.35}
API_ERROR_EVIDENCE = "API Error: 529 overloaded (judge call failed)"


def run_name(run: int) -> str:
    return f"{AGENT}--{MODEL}--run{run}"


def _passes(seed: int, run: int, task: int, index: int, difficulty: str) -> bool:
    draw = stable_hash64(f"workspace-bench-judge:{seed}:{run}:{task}:{index}") / 2**64
    return draw < PASS_SHARE.get(difficulty, 0.5)


def judge_file(record: dict, run: int, seed: int, judge: str = JUDGE) -> dict:
    """The judge's verdict on every rubric of a task record (the release's 12 keys)."""
    task = int(record["absolute_id"])
    items = []
    for index, rubric in enumerate(record["rubrics"]):
        passed = _passes(seed, run, task, index, record["task_diff"])
        items.append({"index": index, "rubric": rubric, "passed": passed, "confidence": 0.9,
                      "evidence": f"{', '.join(record['output_files']) or 'the answer'}: "
                                  f"{'meets' if passed else 'does not meet'} rubric {index}"})
    return {"taskId": str(task), "agentKind": AGENT, "createdAt": CREATED_AT,
            "rubrics": items, "summary": {"total": len(items), "passed": sum(i["passed"] for i in items)}}


def write_runs(out: Path, records: list[dict], lite_ids: list[int], seed: int) -> dict:
    """Write ``out/<run>/<caseId>/rubrics_judge--*.json`` for both runs; returns {run: cases judged}."""
    written = {}
    for run, ids in ((1, sorted(int(r["absolute_id"]) for r in records)), (2, sorted(lite_ids))):
        chosen = [r for r in sorted(records, key=lambda r: int(r["absolute_id"])) if int(r["absolute_id"]) in set(ids)]
        if not chosen:
            continue
        folder = out / run_name(run)
        # the release's quirks, each on its own task (a run too small for all of them gets the first ones)
        quirk = {str(r["absolute_id"]): q for r, q in zip(chosen, ("no judge file", "two judges", "string verdicts",
                                                                  "output-path refresh", "API error"))}
        for record in chosen:
            case = str(record["absolute_id"])
            (folder / case).mkdir(parents=True, exist_ok=True)
            if quirk.get(case) == "no judge file":
                continue  # the agent ran, the judge never wrote its verdict
            doc = judge_file(record, run, seed)
            items = doc["rubrics"]
            if quirk.get(case) == "string verdicts" and items:
                items[0]["passed"] = "yes" if items[0]["passed"] else "no"
            if quirk.get(case) == "output-path refresh" and items:
                items[0].update(passed=True, adjustedByOutputPathRubric=True, originalPassed=False)
                doc["outputPathRubricAdjustment"] = {"adjusted": 1}
            if quirk.get(case) == "API error" and items:
                items[-1].update(passed=False, evidence=API_ERROR_EVIDENCE)
            doc["summary"]["passed"] = sum(i["passed"] in (True, "yes") for i in items)
            if quirk.get(case) == "two judges":  # an older verdict by another judge model: the newer one counts
                older = judge_file(record, run + 100, seed, OTHER_JUDGE)
                _write(folder / case / f"rubrics_judge--{OTHER_JUDGE}.json", older, MTIME - 3600)
            _write(folder / case / f"rubrics_judge--{JUDGE}.json", doc, MTIME)
        written[run_name(run)] = len(chosen)
    return written


def _write(path: Path, doc: dict, mtime: int) -> None:
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.utime(path, (mtime, mtime))
