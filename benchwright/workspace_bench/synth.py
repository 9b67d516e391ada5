"""Workspace-Bench's embedded default source: a synthetic release (``benchwright synth workspace_bench``).

``write_source(out, scale, seed)`` writes the Workspace-Bench runner's layout and the website release::

    filesys/<role>_raw/...               one workspace per role (chanpin, kaifa, research, yunying, houqin)
    tasks/<id>/metadata.json             the release's 12 task keys + the runner's id, file_system, target_path
    tasks/<id>/data/<16 hex>_<filename>  the task's data files (the hex prefix is shared by the files of
                                         one target subfolder: key files by stored path, not by prefix)
    tasks_lite/<id>/                     the same folders for the Lite tasks (``lite.select_lite``)
    tasks.json                           {"full": [task, ...]} (the website's 12 keys)
    tasks-lite.js                        window.WORKSPACE_BENCH_LITE_TASKS = [...];
    planted_edges.jsonl                  every planted dependency, sorted (the truth extractors are measured on)
    runs/<Agent>--<Model>--<Run>/<id>/rubrics_judge--<judge>.json   synthetic judge verdicts in the runner's
                                         layout (``synth_runs``): ``evaluate workspace_bench --runs`` reads them
    README.md                            what this is, the conventions, the ambiguous references

Files are real formats written with their libraries (``synth_files``); workspaces are bundles of a
worker's files with planted explicit references and implicit relations (``synth_workspace``); tasks
follow the release's published counts at ``full`` (``synth_tasks``). ``plan_source`` computes all of
it without writing a byte (tests check ``full``'s counts from it).

Scales: ``tiny`` (7 tasks over the 5 personas and 3 difficulties, workspaces of about 10-30 files that
between them plant every explicit edge type and use every writer), ``default`` (40 tasks, about 1,500
files) and ``full`` (the release: 388 tasks, 7,399 rubrics, 3,854 task files of 24 types, 20,476
workspace files of 74 types). The same (scale, seed) gives byte-identical trees.
"""
from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from benchwright.errors import BenchwrightError
from benchwright.schemas.workspace_bench import PERSONAS, ROLE_OF_PERSONA
from benchwright.workspace_bench.lite import lite_size, select_lite
from benchwright.workspace_bench.synth_content import WORKSPACE_TYPES
from benchwright.workspace_bench.synth_files import FORMAT_OF_TYPE, WRITERS, file_type, write_file
from benchwright.workspace_bench.synth_runs import write_runs
from benchwright.workspace_bench.synth_tasks import TaskPlan, allocate_tasks, fill_task, referable_files
from benchwright.workspace_bench.synth_workspace import (
    PlantedEdge, WorkspacePlan, assign_loose_types, finish_workspace, start_workspace)

PERSONA_OF_ROLE = {role: persona for persona, role in ROLE_OF_PERSONA.items()}
RUNS = "runs"  # the judge runs (not part of the release: a source's reader does not look here)
LITE_JS_PREFIX = "window.WORKSPACE_BENCH_LITE_TASKS = "
TASK_KEYS = ("absolute_id", "persona", "task", "task_diff", "output_files", "rubrics", "rubric_types",
             "file_dep_graph", "data_manifest", "tested_capabilities", "collaboration_type", "file_count")
RUNNER_KEYS = TASK_KEYS + ("id", "file_system")


@dataclass(frozen=True)
class Scale:
    tasks: int
    task_files: int | None            # None: what the file-count buckets draw
    rubrics: int
    workspace_files: dict | None      # role -> files; None: the tiny bundles


SCALES = {
    "tiny": Scale(7, None, 133, None),
    "default": Scale(40, 400, 760, {"yunying": 250, "houqin": 240, "research": 210, "kaifa": 220, "chanpin": 180}),
    "full": Scale(388, 3854, 7399, {"yunying": 4700, "houqin": 4500, "research": 3900, "kaifa": 4000,
                                    "chanpin": 3376}),
}


@dataclass
class SourcePlan:
    scale: str
    seed: int
    workspaces: dict[str, WorkspacePlan]
    tasks: list[TaskPlan]
    lite_ids: list[int]

    def edges(self) -> list[PlantedEdge]:
        out = [e for ws in self.workspaces.values() for e in ws.edges()]
        out += [e for t in self.tasks for e in t.edges()]
        return sorted(out)

    def counts(self) -> dict:
        """The release's headline numbers, computed from the plan."""
        ws_types = Counter(file_type(p) for ws in self.workspaces.values() for p in ws.files)
        task_types = Counter(file_type(m.filename) for t in self.tasks for m in t.manifest)
        lite = [t for t in self.tasks if t.absolute_id in set(self.lite_ids)]
        edges = self.edges()
        return {
            "tasks": len(self.tasks), "lite_tasks": len(lite),
            "personas": dict(Counter(t.persona for t in self.tasks)),
            "difficulties": dict(Counter(t.difficulty for t in self.tasks)),
            "capabilities": dict(Counter(c for t in self.tasks for c in t.capabilities)),
            "rubrics": sum(len(t.rubrics) for t in self.tasks),
            "lite_rubrics": sum(len(t.rubrics) for t in lite),
            "rubric_types": dict(Counter(x for t in self.tasks for x in t.rubric_labels)),
            "task_files": sum(len(t.manifest) for t in self.tasks),
            "lite_files": sum(len(t.manifest) for t in lite),
            "task_file_types": len(task_types), "task_file_type_counts": dict(task_types),
            "tasks_without_deps": sum(1 for t in self.tasks if not t.graph),
            "workspace_files": sum(ws_types.values()), "workspace_types": len(ws_types),
            "planted_edges": len(edges), "planted_by_type": dict(Counter(e.edge_type for e in edges)),
            "ambiguous_references": sum(len(ws.ambiguous()) for ws in self.workspaces.values()),
        }


def plan_source(scale: str = "default", seed: int = 0) -> SourcePlan:
    """Everything ``write_source`` writes, as specs (cheap: ``full`` plans in about a second)."""
    if scale not in SCALES:
        raise BenchwrightError(f"unknown scale {scale!r}; one of {', '.join(SCALES)}")
    cfg = SCALES[scale]
    roles = list(PERSONA_OF_ROLE)
    budgets = cfg.workspace_files or {r: None for r in roles}
    builders = {r: start_workspace(r, PERSONA_OF_ROLE[r], budgets[r], seed) for r in roles}
    # every writer at tiny, every one of the 74 types otherwise: a loose file of each the bundles lack
    planned = {file_type(p) for b in builders.values() for p in b.plan.files}
    if cfg.workspace_files is None:
        used = {FORMAT_OF_TYPE[t] for t in planned}
        missing = [next(t for t in WORKSPACE_TYPES if FORMAT_OF_TYPE[t] == w) for w in WRITERS if w not in used]
    else:
        missing = [t for t in WORKSPACE_TYPES if t not in planned]
    must = assign_loose_types(missing, roles)
    workspaces = {r: finish_workspace(builders[r], budgets[r], must[r]) for r in roles}
    tasks = allocate_tasks(cfg.tasks, cfg.task_files, cfg.rubrics, seed)
    first_multi = next((t.absolute_id for t in tasks if t.n_files >= 3), None)
    referable = {r: referable_files(ws) for r, ws in workspaces.items()}  # fill_task leaves the workspaces as they are
    for t in tasks:
        fill_task(t, workspaces[t.role], seed, subfolder=t.absolute_id == first_multi, referable=referable[t.role])
    # the shipped Lite list is the release's rule over these tasks, so a build's rule agrees with it
    lite_ids = select_lite([t.record() for t in tasks], size=lite_size(len(tasks)), seed=seed)
    return SourcePlan(scale, seed, workspaces, tasks, lite_ids)


def write_source(out_dir: str | Path, scale: str = "default", seed: int = 0,
                 progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Write the synthetic release under ``out_dir`` (absent or empty); returns a summary of counts."""
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BenchwrightError(f"{out} is not an empty folder")
    plan = plan_source(scale, seed)
    out.mkdir(parents=True, exist_ok=True)
    total = sum(len(ws.files) for ws in plan.workspaces.values()) + sum(len(t.manifest) for t in plan.tasks)
    done = 0
    written = 0
    for ws in plan.workspaces.values():
        root = out / ws.name
        # files whose writer copies another file's bytes (pictures, OLE objects) go after it
        for spec in sorted(ws.files.values(), key=lambda s: s.embeds):
            written += write_file(spec, root)
            done += 1
            if progress and done % 200 == 0:
                progress(done, total, "files")
    lite = set(plan.lite_ids)
    for t in plan.tasks:
        folder = out / "tasks" / str(t.absolute_id)
        for m in t.manifest:
            written += write_file(m.spec, folder)
            done += 1
        _write_json(folder / "metadata.json", t.record(runner=True))
        if t.absolute_id in lite:
            shutil.copytree(folder, out / "tasks_lite" / str(t.absolute_id))
        if progress:
            progress(done, total, "files")
    _write_json(out / "tasks.json", {"full": [t.record() for t in plan.tasks]})
    lite_records = [t.record() for t in plan.tasks if t.absolute_id in lite]
    (out / "tasks-lite.js").write_text(LITE_JS_PREFIX + json.dumps(lite_records, indent=2, ensure_ascii=False)
                                       + ";\n", encoding="utf-8")
    edges = plan.edges()
    (out / "planted_edges.jsonl").write_text("".join(json.dumps(e.as_json(), ensure_ascii=False) + "\n"
                                                     for e in edges), encoding="utf-8")
    runs = write_runs(out / RUNS, [t.record() for t in plan.tasks], plan.lite_ids, seed)
    counts = plan.counts()
    (out / "README.md").write_text(_readme(plan, counts, runs), encoding="utf-8")
    if progress:
        progress(total, total, "files")
    return {"scale": scale, "seed": seed, "out": str(out), "bytes": written, **counts,
            "judge_runs": {name: str(out / RUNS / name) for name in runs}}


def _write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False), encoding="utf-8")


def _readme(plan: SourcePlan, counts: dict, runs: dict[str, int]) -> str:
    ambiguous = [(ws.name, src, name, dst) for ws in plan.workspaces.values() for src, name, dst in ws.ambiguous()]
    personas = ", ".join(f"{p} {counts['personas'].get(p, 0)}" for p in PERSONAS)
    lines = [
        "# Workspace-Bench (synthetic)",
        "",
        f"A **synthetic** Workspace-Bench release written by `benchwright synth workspace_bench` "
        f"(scale `{plan.scale}`, seed {plan.seed}). No file here comes from the real benchmark; the layout, "
        "record fields and quirks follow the real release and its runner.",
        "",
        "## Layout",
        "",
        "- `filesys/<role>_raw/`: one workspace per role (chanpin = product, kaifa = developer, research, "
        "yunying = operations, houqin = logistics).",
        "- `tasks/<id>/metadata.json`: the release's 12 task keys in its order, then the runner's `id` and "
        "`file_system`; every `data_manifest` entry also has `target_path`, where the runner copies the file "
        "inside the workspace.",
        "- `tasks/<id>/data/<16 hex>_<filename>`: the task's files. As in the release, the prefix is not "
        "unique: the files of one target subfolder share it. Key files by `stored_relpath`.",
        "- `tasks_lite/<id>/`: the same folders for the Lite tasks (the release's rule: largest-remainder "
        "persona allocation, seeded choice inside each persona).",
        "- `tasks.json` (`{\"full\": [...]}`) and `tasks-lite.js` (`window.WORKSPACE_BENCH_LITE_TASKS = [...];`): "
        "the website release (12 keys, manifest entries without `target_path`).",
        "- `planted_edges.jsonl`: every planted dependency, one JSON object per line, sorted.",
        f"- `{RUNS}/`: synthetic judge verdicts in the release runner's layout, "
        "`<Agent>--<Model>--<Run>/<caseId>/rubrics_judge--<judgeModel>.json` ("
        + ", ".join(f"`{name}`: {n} tasks" for name, n in runs.items()) + "). Try the scorer on them: "
        f"`benchwright evaluate workspace_bench --runs {RUNS} --data OUT/workspace_bench`. No agent ran and "
        "no model judged: the verdicts are a seeded draw, with the release's quirks on a few tasks (no judge "
        "file, two judge models, `passed` as a string, an output-path refresh, an API error).",
        "",
        "## Counts",
        "",
        f"- Tasks: {counts['tasks']} ({personas}); Lite: {counts['lite_tasks']}.",
        f"- Rubrics: {counts['rubrics']}; task files: {counts['task_files']} of {counts['task_file_types']} types; "
        f"tasks without dependencies: {counts['tasks_without_deps']}.",
        f"- Workspace files: {counts['workspace_files']} of {counts['workspace_types']} types (a file's type is its "
        "lower-case extension, or its name when it has none: Dockerfile, Makefile).",
        f"- Planted edges: {counts['planted_edges']}.",
        "",
        "## The planted truth",
        "",
        "Each line of `planted_edges.jsonl` is `{workspace, src, dst, edge_type, kind, file_type}`; `src` and "
        "`dst` are relative to `workspace` (`filesys/<role>_raw` or `tasks/<id>`, where paths are stored paths "
        "`data/<hex>_<name>`); `file_type` is the type of `src`.",
        "",
        "- Explicit edges point from the file that holds the reference to the file it names. A reference is "
        "written relative to the referring file's folder or as the bare file name; a bare name is unique in "
        "its workspace except for the ambiguous references below. TypeScript imports and LaTeX `\\input`/"
        "`\\bibliography` omit the extension, as those languages do; Python imports name modules; an .xlsx "
        "formula names the workbook as `'folder/[book.xlsx]Summary'!B2`; an external link is a real "
        "`xl/externalLinks` part whose relationship targets the workbook (the formula uses it as `[1]`); a "
        ".docx/.pptx picture keeps the image's file name (python-docx `pic:cNvPr name`, python-pptx `descr`) "
        "and its bytes; an OLE object (python-pptx) holds the workbook's bytes under a shape named after it.",
        "- Implicit edges follow the lineage: `version_chain` from the older to the newer version (v1 -> v2 "
        "-> final, earlier -> later date); `derived_from` from the source to the file that repeats its numbers; "
        "`same_entity` between every pair of the files of a dossier (customers, suppliers, papers, competitors), "
        "smaller path first. A dossier's entity is named in no other file.",
        "- Task workspaces: the input -> input edges of each task's `file_dep_graph` (version chains and "
        "derived files), between stored paths. Task files carry no explicit references.",
        "",
        "## Deliberately ambiguous references",
        "",
        "These bare names match files in several folders; the truth lists the file meant.",
        "",
    ]
    lines += [f"- `{ws}`: `{src}` names `{name}`, meaning `{dst}`" for ws, src, name, dst in ambiguous] or ["- none"]
    lines.append("")
    return "\n".join(lines)
