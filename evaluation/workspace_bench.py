"""Workspace-Bench scoring: the release's judge files -> task and benchmark scores, as the release computes them.

``benchwright evaluate workspace_bench --runs DIR [--data BUILD] [--split lite|full] [--judge-model M] [--out FILE]``

``DIR`` is one run folder of the release's runner (``<Agent>--<Model>--<Run>/``, holding one folder per
case, ``<caseId>/rubrics_judge--<judgeModel>.json``) or a folder of such runs. The rules are the
release's summarizer's (its ``evaluation/scripts/summarize_judge_rubrics.py``):

- a rubric is a binary check with weight 1, whatever its type; ``passed`` is a bool or one of the
  strings true / yes / pass / passed / 1 (any case); the rubric list is the top-level ``rubrics``,
  a bare list, or nested as ``{"items": [...]}``;
- task score = passed / that task's rubrics; **benchmark score = the pooled pass rate** (all passed
  rubrics / all rubrics), not the mean of the task rates (reported beside it, labelled);
- per case, the newest judge file by modification time (ties: the last name, so the choice is
  deterministic), unless ``--judge-model`` names one;
- a case without a judge file, or whose judge file cannot be read (not UTF-8, not JSON, no rubric
  list, or nested past the JSON decoder's recursion limit), is left out of the numerator and the
  denominator and listed (``unreadable_judge_file``, with the error naming the file and line or item);
  the other cases are scored;
- where the summarizer would count silently what no judge said, the judge file is refused the same way
  (this evaluator's only departures from its rules): a key given twice (``json`` keeps the last), a
  rubric item that is not an object (dropped), a ``passed`` (or ``originalPassed``,
  ``adjustedByOutputPathRubric``) that is not a bool, a string, null, 0 or 1 (``bool(NaN)`` and
  ``bool(2)`` are passes), and a rubric index given twice (counted twice);
- a task is flagged an API error when any evidence contains "API Error" or "Insufficient Balance",
  a judge error when any contains "ClaudeCode judge failed";
- the release's output-path refresh (items with ``adjustedByOutputPathRubric`` and ``originalPassed``)
  stays visible: the score is reported with and without it.

With ``--data`` (a built Workspace-Bench) the scored tasks are restricted to ``--split`` (tasks of a
run outside it are listed and left out) and broken down by persona, difficulty, capability and rubric
type (rubric items joined to the rubrics config by task id and index), with a figure of the pass rate
per persona and per rubric type. Nothing depends on the order of files or records.
"""
from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from pathlib import Path

from benchwright import fields, strict_json
from benchwright.arguments import ArgumentParser, parser_of
from benchwright.errors import BenchwrightError, RecordError
from benchwright.utf8 import encodable

JUDGE_PREFIX = "rubrics_judge--"
RUN_REPORT = "agent_runner_report.json"
PASSED_STRINGS = frozenset({"true", "yes", "pass", "passed", "1"})
API_ERROR_MARKERS = ("API Error", "Insufficient Balance")
JUDGE_ERROR_MARKER = "ClaudeCode judge failed"
UNATTRIBUTED = "(no rubric index)"


# ------------------------------------------------------------------------------------- one judge file


def as_passed(value) -> bool:
    """The summarizer's reading of ``passed``: a bool, one of the pass strings (any case), else truthiness
    (``read_judge_items`` has refused the values whose truthiness is no verdict: see ``check_verdict``)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() in PASSED_STRINGS
    return bool(value)


def check_verdict(value, name: str, where: str) -> None:
    """Refuse a verdict whose truthiness is not a judgement: the summarizer's ``bool(value)`` makes NaN,
    2 or a list a pass. Accepted: a bool, a string (the pass strings, any other string fails), null
    (fails, as the summarizer), and the numbers 0 and 1."""
    if value is None or isinstance(value, (bool, str)):
        return
    if isinstance(value, (int, float)) and value in (0, 1):
        return
    raise RecordError(where, f"'{name}' must be a boolean, a string, null, 0 or 1, got {fields.quote(value)}")


def judge_files(case_dir: Path, judge_model: str | None = None) -> list[Path]:
    pattern = f"{JUDGE_PREFIX}{judge_model}.json" if judge_model else f"{JUDGE_PREFIX}*.json"
    return sorted(p for p in case_dir.glob(pattern) if p.is_file())


def pick_judge_file(case_dir: Path, judge_model: str | None = None) -> Path | None:
    """The judge file a case is scored from: the named model's, else the newest (ties: the last name)."""
    files = judge_files(case_dir, judge_model)
    return max(files, key=lambda p: (p.stat().st_mtime_ns, p.name)) if files else None


def judge_model_of(path: Path) -> str:
    return path.name[len(JUDGE_PREFIX):-len(".json")]


def read_judge_items(path: Path, locator: str | None = None) -> tuple[list[dict], dict]:
    """(rubric items, top-level object or {}) of a judge file, read strictly (``strict_json.read``: UTF-8,
    a repeated key refused). ``RecordError`` (``SourceError`` when it cannot be opened) naming the file
    and the item: no rubric list, an item that is not an object, a verdict that is no judgement
    (``check_verdict``: ``passed: NaN`` would count as a pass), a rubric index given twice (it would
    count twice)."""
    locator = str(path) if locator is None else locator
    data = strict_json.read(path, locator)
    items = data.get("rubrics") if isinstance(data, dict) else data
    if isinstance(items, dict):
        items = items.get("items") or items.get("rubrics")
    if not isinstance(items, list):
        raise RecordError(locator, "no rubric list (expected 'rubrics', a bare list or {'items': [...]})")
    first_at: dict[int, int] = {}
    for k, item in enumerate(items):
        where = f"{locator}#rubrics[{k}]"
        if not isinstance(item, dict):
            raise RecordError(where, f"a rubric item must be an object, got {fields.quote(item)}")
        for name in ("passed", "originalPassed", "adjustedByOutputPathRubric"):
            check_verdict(item.get(name), name, where)
        index = _index(item)
        if index is not None:
            if index in first_at:
                raise RecordError(where, f"rubric index {index} given twice (first at rubrics[{first_at[index]}]): "
                                         "it would count twice")
            first_at[index] = k
    return items, (data if isinstance(data, dict) else {})


def _index(item: dict) -> int | None:
    index = item.get("index")
    if isinstance(index, bool):
        return None
    if isinstance(index, int):
        return index
    # a digit string as the release writes some; ASCII digits only (int() also reads "٣") and no longer
    # than an int64 (int() refuses past 4,300 digits): anything else is no index, the item unattributed
    if isinstance(index, str) and index.strip().isascii() and index.strip().isdigit() and len(index.strip()) <= 18:
        return int(index)
    return None


def score_items(items: list[dict]) -> dict:
    """One task's counts: passed / total, the counts without the output-path adjustment, the error flags."""
    passed = sum(as_passed(r.get("passed")) for r in items)
    adjusted = [r for r in items if as_passed(r.get("adjustedByOutputPathRubric", False))]
    # an adjusted item counts as its originalPassed (absent: it was a failure the refresh flipped)
    unadjusted = sum(as_passed(r.get("originalPassed", False)) if as_passed(r.get("adjustedByOutputPathRubric", False))
                     else as_passed(r.get("passed")) for r in items)
    evidence = [str(r.get("evidence", "")) for r in items]
    return {
        "passed": passed, "total": len(items), "rate": passed / len(items) if items else None,
        "passed_without_adjustment": unadjusted, "adjusted": len(adjusted),
        "adjusted_originally_passed": sum(as_passed(r.get("originalPassed", False)) for r in adjusted),
        "api_error": any(m in e for e in evidence for m in API_ERROR_MARKERS),
        "judge_error": any(JUDGE_ERROR_MARKER in e for e in evidence),
    }


# ------------------------------------------------------------------------------------- runs and cases


def _task_order(task_id: str):
    return (0, int(task_id), task_id) if task_id.isdigit() else (1, 0, task_id)


def _is_run(folder: Path) -> bool:
    return (folder / RUN_REPORT).is_file() or any(folder.glob(f"*/{JUDGE_PREFIX}*.json"))


def find_runs(runs: Path) -> list[Path]:
    """``runs`` itself when it is a run, else its sub-folders that are runs (a runner report, a judge
    file in a case folder, or the ``<Agent>--<Model>--<Run>`` name), sorted by name."""
    runs = Path(runs)
    if not runs.is_dir():
        raise FileNotFoundError(f"{runs}: not a folder")
    if _is_run(runs):
        return [runs]
    found = sorted((d for d in runs.iterdir() if d.is_dir() and (_is_run(d) or d.name.count("--") >= 2)),
                   key=lambda d: d.name)
    if not found:
        raise FileNotFoundError(f"{runs}: no run folders (<Agent>--<Model>--<Run>/<caseId>/{JUDGE_PREFIX}*.json)")
    return found


def case_dirs(run: Path) -> dict[str, Path]:
    """{case id: folder}: the run's sub-folders (the runner names each by the task's id)."""
    return {d.name: d for d in sorted(run.iterdir(), key=lambda d: d.name) if d.is_dir()}


def _pooled(passed: int, total: int) -> float | None:
    return passed / total if total else None


def _group(tasks: list[dict], key) -> dict:
    groups: dict[str, list[dict]] = defaultdict(list)
    for t in tasks:
        for k in key(t):
            groups[k].append(t)
    return {k: {"tasks": len(v), "rubrics_passed": sum(t["passed"] for t in v),
                "rubrics_total": sum(t["total"] for t in v),
                "score": _pooled(sum(t["passed"] for t in v), sum(t["total"] for t in v))}
            for k, v in sorted(groups.items())}


def score_run(run: Path, judge_model: str | None = None, tasks=None, rubrics=None) -> dict:
    """One run's report. ``tasks`` / ``rubrics``: DataFrames of the split (``loaders.workspace_bench``)
    to restrict and break the scores down; None scores every case folder of the run."""
    cases = case_dirs(run)
    in_split = None if tasks is None else {str(t): row for t, row in zip(tasks["task_id"], tasks.to_dict("records"))}
    rubric_type = {} if rubrics is None else {
        (str(t), int(i)): rt for t, i, rt in zip(rubrics["task_id"], rubrics["index"], rubrics["rubric_type"])}
    scored, missing, unreadable, empty, not_in_split = [], [], [], [], []
    by_type = defaultdict(lambda: [0, 0])
    mismatched = []
    for case_id in sorted(cases, key=_task_order):
        if in_split is not None and case_id not in in_split:
            not_in_split.append(case_id)
            continue
        path = pick_judge_file(cases[case_id], judge_model)
        if path is None:
            missing.append(case_id)
            continue
        relative = path.relative_to(run).as_posix()
        try:
            items, top = read_judge_items(path, relative)
        # the release's summarizer also lists a file it cannot load and scores the rest
        except BenchwrightError as exc:
            unreadable.append({"task_id": case_id, "path": relative, "error": str(exc)})
            continue
        task = {"task_id": case_id, "judge_model": judge_model_of(path), **score_items(items),
                "output_path_refresh": "outputPathRubricAdjustment" in top}
        if not items:
            empty.append(case_id)
        if in_split is not None:
            meta = in_split[case_id]
            task.update(persona=meta["persona"], difficulty=meta["difficulty"],
                        capabilities=sorted(meta["tested_capabilities"]))
            if len(items) != meta["rubric_count"]:
                mismatched.append({"task_id": case_id, "judged": len(items), "rubrics": int(meta["rubric_count"])})
            for item in items:
                key = rubric_type.get((case_id, _index(item))) if _index(item) is not None else None
                cell = by_type[key or UNATTRIBUTED]
                cell[0] += as_passed(item.get("passed"))
                cell[1] += 1
        scored.append(task)

    passed, total = sum(t["passed"] for t in scored), sum(t["total"] for t in scored)
    unadjusted = sum(t["passed_without_adjustment"] for t in scored)
    rates = sorted(t["rate"] for t in scored if t["rate"] is not None)
    report = {
        "run": run.name,
        "score": _pooled(passed, total),
        "rubrics_passed": passed, "rubrics_total": total, "tasks_scored": len(scored),
        "mean_task_rate": math.fsum(rates) / len(rates) if rates else None,
        "mean_task_rate_note": "mean of per-task pass rates; NOT the benchmark score (that is the pooled 'score')",
        "without_output_path_adjustment": {
            "score": _pooled(unadjusted, total), "rubrics_passed": unadjusted,
            "adjusted_rubrics": sum(t["adjusted"] for t in scored),
            "adjusted_rubrics_originally_passed": sum(t["adjusted_originally_passed"] for t in scored),
            "tasks_with_adjustment": sorted((t["task_id"] for t in scored if t["adjusted"]), key=_task_order),
            "tasks_refreshed": sum(t["output_path_refresh"] for t in scored)},
        "api_error_tasks": [t["task_id"] for t in scored if t["api_error"]],
        "judge_error_tasks": [t["task_id"] for t in scored if t["judge_error"]],
        "missing_judge_file": missing,
        "unreadable_judge_file": unreadable,
        "empty_judge_file": empty,
        "judge_models": dict(sorted(_count(t["judge_model"] for t in scored).items())),
        "tasks": scored,
    }
    if in_split is not None:
        report.update(
            not_in_split=not_in_split,
            not_run=sorted((t for t in in_split if t not in cases), key=_task_order),
            rubric_count_mismatch=mismatched,
            by_persona=_group(scored, lambda t: [t["persona"]]),
            by_difficulty=_group(scored, lambda t: [t["difficulty"]]),
            by_capability=_group(scored, lambda t: t["capabilities"]),
            by_rubric_type={k: {"rubrics_passed": p, "rubrics_total": n, "score": _pooled(p, n)}
                            for k, (p, n) in sorted(by_type.items())})
    return report


def _count(values) -> dict:
    out: dict = defaultdict(int)
    for v in values:
        out[v] += 1
    return out


# ------------------------------------------------------------------------------------- all runs


def evaluate(runs: Path | str, data: Path | str | None = None, split: str = "full",
             judge_model: str | None = None) -> dict:
    """The scores of every run under ``runs`` (see the module docstring); top-level ``score`` is the
    pooled pass rate over every scored rubric of every run (one run: that run's score)."""
    tasks = rubrics = None
    if data is not None:
        from benchwright.loaders.workspace_bench import rubrics_frame, tasks_frame

        tasks, rubrics = tasks_frame(data, split), rubrics_frame(data, split)
        if tasks.empty:
            raise ValueError(f"{data}: no tasks in split {split!r}")
    reports = [score_run(r, judge_model, tasks, rubrics) for r in find_runs(Path(runs))]
    passed, total = sum(r["rubrics_passed"] for r in reports), sum(r["rubrics_total"] for r in reports)
    return {"score": _pooled(passed, total), "rubrics_passed": passed, "rubrics_total": total,
            "split": split if data is not None else None, "judge_model": judge_model,
            "runs": {r["run"]: r for r in reports}}


def pass_rate_figure(result: dict, root: Path, name: str) -> str | None:
    """Bars of the pooled pass rate per persona and per rubric type, one bar per run
    (``_build/figures/<name>.png`` under ``root``); None without a ``--data`` breakdown."""
    from benchwright.card import pyplot, save_figure
    from benchwright.schemas.workspace_bench import PERSONAS, RUBRIC_TYPES

    runs = [r for r in result["runs"].values() if "by_persona" in r]
    if not runs:
        return None
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [len(PERSONAS), len(RUBRIC_TYPES)]})
    width = 0.8 / len(runs)
    for ax, key, labels, title in ((axes[0], "by_persona", PERSONAS, "persona"),
                                   (axes[1], "by_rubric_type", RUBRIC_TYPES, "rubric type")):
        for j, run in enumerate(runs):
            xs = [i + (j - (len(runs) - 1) / 2) * width for i in range(len(labels))]
            scores = [run[key].get(label, {}).get("score") for label in labels]
            ax.bar(xs, [100 * (s or 0.0) for s in scores], width, label=run["run"])
            for x, s in zip(xs, scores):
                if s is None:  # nothing scored there: not the same as 0%
                    ax.text(x, 1, "n/a", ha="center", va="bottom", fontsize=7, rotation=90)
        ax.set_xticks(range(len(labels)), [label.replace(" ", "\n") for label in labels], fontsize=8)
        ax.set_ylim(0, 100)
        ax.set_ylabel("rubric pass rate (%)")
        ax.set_title(f"pooled pass rate by {title}")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=min(len(runs), 4), fontsize=7)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return save_figure(fig, root, name)


def summary_lines(result: dict) -> list[str]:
    def pct(x):
        return "n/a" if x is None else f"{100 * x:.2f}%"

    lines = []
    for name, r in result["runs"].items():
        adj = r["without_output_path_adjustment"]
        lines.append(f"{name}: score {pct(r['score'])} ({r['rubrics_passed']:,}/{r['rubrics_total']:,} rubrics, "
                     f"{r['tasks_scored']} tasks); mean of task rates {pct(r['mean_task_rate'])}; "
                     f"without output-path adjustment {pct(adj['score'])} ({adj['adjusted_rubrics']} adjusted)")
        lines.append(f"  left out: {len(r['missing_judge_file'])} without a judge file, "
                     f"{len(r['unreadable_judge_file'])} unreadable"
                     + (f", {len(r['not_in_split'])} not in split {result['split']}, {len(r['not_run'])} of the "
                        f"split not run" if "not_in_split" in r else "")
                     + f"; flagged: {len(r['api_error_tasks'])} API error, {len(r['judge_error_tasks'])} judge error")
    if len(result["runs"]) > 1:
        lines.append(f"all runs pooled: {pct(result['score'])} ({result['rubrics_passed']:,}/{result['rubrics_total']:,})")
    return lines


def cli_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="benchwright evaluate workspace_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", required=True, type=Path,
                        help="a run folder <Agent>--<Model>--<Run>/ or a folder of them")
    parser.add_argument("--data", help="a built Workspace-Bench: restrict to --split, break down by persona, "
                                       "difficulty, capability, rubric type")
    parser.add_argument("--split", choices=("lite", "full"), default="full")
    parser.add_argument("--judge-model", help="score rubrics_judge--<M>.json (default: each case's newest judge file)")
    parser.add_argument("--out", type=Path, help="write the JSON report here (top-level 'score' = pooled pass rate)")
    return parser


@parser_of(cli_parser)
def run_cli(argv) -> int:
    args = cli_parser().parse_args(argv)
    try:
        result = evaluate(args.runs, args.data, args.split, args.judge_model)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # folder names that are not UTF-8 come back from the file system with surrogates: printable, writable
    result, _ = encodable(result)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        figure = pass_rate_figure(result, args.out.parent, f"{args.out.stem}_pass_rate") if args.data else None
        result["figure"] = figure
        args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print("\n".join(summary_lines(result)))
    return 0
