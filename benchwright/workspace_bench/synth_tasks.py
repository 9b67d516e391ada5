"""The plan of the synthetic release's tasks: personas, difficulties, capabilities, data files,
dependency graphs, instructions and rubrics, with the release's published totals at ``full``.

Allocation (exact totals, ``allocate`` = the largest-remainder rule of ``benchwright.subsets``):
  1. personas and difficulties: the release's counts (smaller scales: allocated proportionally);
  2. file counts: the release's buckets (1-5, 6-20, 21-50, 50+) and total; the 50+ tasks share what
     the others leave;
  3. file types: the release's 24 types with per-type totals whose groups are the published ones;
     tasks take types largest-first, weighted by their persona's affinity, so totals stay exact;
  4. graph shapes: ``to_output`` (every manifest file -> the output; sometimes a few files in no edge),
     ``chain`` (numbered or dated versions, v_i -> v_i+1, like the release's tool_1.sh -> tool_2.sh),
     ``derived`` (a summary file repeating a table's numbers -> plus the rest -> output) and ``none``
     (13 tasks without dependencies at ``full``);
  5. capabilities: the release's counts per capability, each given to the tasks with the fewest so far
     (Lineage Tracing preferring chains, Heterogeneous File Understanding several types);
  6. rubrics: the release's 7,399 over the tasks by difficulty; labels dealt so that the seven labels'
     totals are the release's (two tasks in the legacy "Assessment" vocabulary).
Each task's input -> input edges are its planted implicit edges (``version_chain``/``derived_from``),
between stored paths.
"""
from __future__ import annotations

import posixpath
import random
from dataclasses import dataclass, field

from benchwright.hashing import stable_hash64
from benchwright.schemas.workspace_bench import CAPABILITIES, DIFFICULTIES, PERSONAS, ROLE_OF_PERSONA
from benchwright.subsets import allocate
from benchwright.workspace_bench.synth_content import (
    FULL_MANIFEST_TYPE_COUNTS, MONTHS, PERSONA_TYPE_AFFINITY, Words, number_table, slug)
from benchwright.workspace_bench.synth_files import FORMAT_OF_TYPE, FileSpec, file_type
from benchwright.workspace_bench.synth_workspace import PlantedEdge, WorkspacePlan

# The release's published counts (tests/fixtures/workspace_bench/dataset-stats.json).
FULL_TASKS = 388
FULL_PERSONAS = {"Operations Manager": 122, "Logistics Manager": 115, "Researcher": 67, "Backend Developer": 43,
                 "Product Manager": 41}
FULL_DIFFICULTIES = {"easy": 54, "medium": 206, "hard": 128}
FULL_CAPABILITIES = {"Workspace Exploration": 278, "Task-Providing File Utilization": 238,
                     "Result-Providing Files Utilization": 211, "Semantic Content Relations Understanding": 170,
                     "Lineage Tracing": 136, "Heterogeneous File Understanding": 109}
FULL_RUBRIC_TYPES = {"Outcome Evaluation": 3863, "Basic Evaluation": 1843, "Process Evaluation": 1485,
                     "Result Evaluation": 169, "Results Assessment": 24, "Basic Assessment": 8,
                     "Process Assessment": 7}
FULL_RUBRICS = 7399
FULL_FILE_BUCKETS = {"1-5": 305, "6-20": 50, "21-50": 20, "50+": 13}
FULL_WITHOUT_DEPS = 13
LEGACY = ("Results Assessment", "Basic Assessment", "Process Assessment")
# Rubrics of the two legacy-vocabulary tasks at full (24 + 8 + 7 = 39, like the release's task 1: 20).
FULL_LEGACY_RUBRICS = (20, 19)
RESULT_TASKS_FULL = 12
BUCKET_RANGE = {"1-5": (1, 5), "6-20": (6, 20), "21-50": (21, 50), "50+": (51, 600)}
RUBRICS_BY_DIFFICULTY = {"easy": 14, "medium": 19, "hard": 22}
assert sum(FULL_PERSONAS.values()) == sum(FULL_DIFFICULTIES.values()) == sum(FULL_FILE_BUCKETS.values()) == FULL_TASKS
assert sum(FULL_RUBRIC_TYPES.values()) == FULL_RUBRICS and tuple(FULL_PERSONAS) == PERSONAS
assert tuple(FULL_CAPABILITIES) == CAPABILITIES and tuple(FULL_DIFFICULTIES) == DIFFICULTIES

FAMILY = {**{t: "docs" for t in ("md", "txt", "html", "docx", "pdf", "pptx")},
          **{t: "sheets" for t in ("xlsx", "csv", "tsv")},
          **{t: "code" for t in ("py", "sh", "js", "ts", "sql", "ipynb", "Makefile")},
          **{t: "data" for t in ("json", "yaml", "yml", "xml", "jsonl")},
          "png": "media", "jpg": "media", "zip": "archive"}
TABLE_TYPES = ("xlsx", "csv", "tsv", "json", "yaml", "yml", "xml", "jsonl", "md", "docx", "pdf", "txt", "html", "pptx")
SUMMARY_TYPES = ("md", "docx", "pdf", "txt", "html", "pptx")
# types whose files hold a table of numbers (a chart for images)
NUMBER_TYPES = tuple(t for t in TABLE_TYPES if t not in SUMMARY_TYPES) + ("png", "jpg")
SUBFOLDERS = ("archive", "old", "incoming", "batch_b")


@dataclass
class ManifestFile:
    filename: str
    target_path: str               # where the runner copies it inside the role workspace
    stored_relpath: str            # data/<16 hex>_<filename>, relative to the task folder
    spec: FileSpec                 # spec.path == stored_relpath


@dataclass
class TaskPlan:
    absolute_id: int
    persona: str
    difficulty: str
    n_files: int = 0
    types: list[str] = field(default_factory=list)
    shape: str = "to_output"
    capabilities: list[str] = field(default_factory=list)
    rubric_labels: list[str] = field(default_factory=list)
    task: str = ""
    output_files: list[str] = field(default_factory=list)
    rubrics: list[str] = field(default_factory=list)
    graph: list[dict] = field(default_factory=list)
    manifest: list[ManifestFile] = field(default_factory=list)
    implicit: list[tuple[str, str, str]] = field(default_factory=list)   # stored paths

    @property
    def role(self) -> str:
        return ROLE_OF_PERSONA[self.persona]

    def record(self, runner: bool = False) -> dict:
        """The release's task record (the 12 keys in its order); ``runner`` adds the runner's ``id``,
        ``file_system`` and each manifest entry's ``target_path``."""
        manifest = [{"filename": m.filename, "stored_relpath": m.stored_relpath,
                     **({"target_path": m.target_path} if runner else {})} for m in self.manifest]
        out = {"absolute_id": self.absolute_id, "persona": self.persona, "task": self.task,
               "task_diff": self.difficulty, "output_files": list(self.output_files), "rubrics": list(self.rubrics),
               "rubric_types": list(self.rubric_labels), "file_dep_graph": [dict(e) for e in self.graph],
               "data_manifest": manifest, "tested_capabilities": list(self.capabilities),
               "collaboration_type": list(self.capabilities), "file_count": len(self.manifest)}
        if runner:
            out["id"] = str(self.absolute_id)
            out["file_system"] = self.role
        return out

    def edges(self) -> list[PlantedEdge]:
        ws = f"tasks/{self.absolute_id}"
        return sorted(PlantedEdge(ws, s, d, t, "implicit", file_type(s)) for s, d, t in set(self.implicit))


def _scaled(counts: dict[str, int], n: int) -> dict[str, int]:
    return allocate(counts, n) if n != sum(counts.values()) else dict(counts)


def _rank(seed: int, *key) -> int:
    return stable_hash64(":".join(map(str, (seed,) + key)))


# ---------------------------------------------------------------------------------------------
# Allocation
# ---------------------------------------------------------------------------------------------

def allocate_tasks(n_tasks: int, n_files: int | None, n_rubrics: int, seed: int) -> list[TaskPlan]:
    """Personas, difficulties, file counts and types, shapes, capabilities and rubric labels of
    ``n_tasks`` tasks (``n_files`` None: whatever the buckets' draws add up to)."""
    rng = random.Random(_rank(seed, "tasks"))
    personas = [p for p, k in _scaled(FULL_PERSONAS, n_tasks).items() for _ in range(k)]
    rng.shuffle(personas)
    diffs = [d for d, k in _scaled(FULL_DIFFICULTIES, n_tasks).items() for _ in range(k)]
    rng.shuffle(diffs)
    tasks = [TaskPlan(i + 1, p, d) for i, (p, d) in enumerate(zip(personas, diffs))]
    _file_counts(tasks, n_files, rng)
    _file_types(tasks, rng)
    _shapes(tasks, round(FULL_WITHOUT_DEPS * n_tasks / FULL_TASKS), rng)
    _capabilities(tasks, seed)
    _rubric_labels(tasks, n_rubrics, rng)
    return tasks


def _file_counts(tasks: list[TaskPlan], n_files: int | None, rng: random.Random) -> None:
    buckets = [b for b, k in _scaled(FULL_FILE_BUCKETS, len(tasks)).items() for _ in range(k)]
    rng.shuffle(buckets)
    big = []
    for t, bucket in zip(tasks, buckets):
        lo, hi = BUCKET_RANGE[bucket]
        if bucket == "1-5":
            t.n_files = rng.choices(range(1, 6), weights=(30, 25, 20, 14, 11))[0]
        elif bucket == "50+":
            big.append(t)
        else:
            t.n_files = rng.randint(lo, hi)
    if not big:
        return
    left = (n_files if n_files is not None else 60 * len(big)) - sum(t.n_files for t in tasks)
    if left < 51 * len(big):
        raise ValueError(f"{n_files} files leave too few for the {len(big)} tasks of 50+ files")
    # seeded weights, largest remainder: the 50+ tasks share what is left, each above 50
    weights = {str(t.absolute_id): int(1000 * rng.lognormvariate(0, 0.6)) + 1 for t in big}
    extra = allocate(weights, left - 51 * len(big))
    for t in big:
        t.n_files = 51 + extra[str(t.absolute_id)]


def _file_types(tasks: list[TaskPlan], rng: random.Random) -> None:
    remaining = _scaled(FULL_MANIFEST_TYPE_COUNTS, sum(t.n_files for t in tasks))

    def best(persona: str, exclude=()) -> str:
        aff = PERSONA_TYPE_AFFINITY[persona]
        options = [t for t, k in remaining.items() if k > 0 and t not in exclude]
        if not options:
            options = [t for t, k in remaining.items() if k > 0]
        return max(options, key=lambda t: (remaining[t] * aff.get(t, 0.05) * rng.uniform(0.5, 1.5), t))

    for t in sorted(tasks, key=lambda t: (-t.n_files, t.absolute_id)):
        n_aux = 0 if t.n_files < 3 else rng.choice((0, 0, 1, 2))
        # the bulk type first (topped up with the next best types when it runs short), then the aux files
        for size in [t.n_files - n_aux] + [1] * n_aux:
            while size > 0:
                ftype = best(t.persona, exclude=t.types)
                take = min(remaining[ftype], size)
                t.types += [ftype] * take
                remaining[ftype] -= take
                size -= take
    assert all(k == 0 for k in remaining.values()), remaining


def _shapes(tasks: list[TaskPlan], without_deps: int, rng: random.Random) -> None:
    salt = rng.random()
    order = sorted(tasks, key=lambda t: _rank(salt, t.absolute_id))
    for t in order[:without_deps]:
        t.shape = "none"
    for t in order[without_deps:]:
        bulk = max(set(t.types), key=lambda x: (t.types.count(x), x))
        summary_ok = any(x in SUMMARY_TYPES for x in t.types) and any(x in TABLE_TYPES for x in t.types)
        roll = rng.random()
        if t.n_files >= 3 and t.types.count(bulk) >= 3 and roll < 0.2:
            t.shape = "chain"
        elif t.n_files >= 2 and summary_ok and roll < 0.35:
            t.shape = "derived"
        else:
            t.shape = "to_output"


def _capabilities(tasks: list[TaskPlan], seed: int) -> None:
    counts = {c: max(1, round(k * len(tasks) / FULL_TASKS)) for c, k in FULL_CAPABILITIES.items()}

    def affinity(t: TaskPlan, cap: str) -> int:
        if cap == "Lineage Tracing":
            return 1 if t.shape in ("chain", "derived") else 0
        if cap == "Heterogeneous File Understanding":
            return 1 if len(set(t.types)) > 1 else 0
        return 0

    for cap in sorted(counts, key=lambda c: -counts[c]):
        ranked = sorted(tasks, key=lambda t: (len(t.capabilities), -affinity(t, cap), _rank(seed, cap, t.absolute_id)))
        for t in ranked[:counts[cap]]:
            t.capabilities.append(cap)
    for t in tasks:
        t.capabilities.sort(key=lambda c: _rank(seed, "order", t.absolute_id, c))


def _rubric_labels(tasks: list[TaskPlan], n_rubrics: int, rng: random.Random) -> None:
    full = len(tasks) == FULL_TASKS
    ops = sorted((t for t in tasks if t.persona == "Operations Manager"), key=lambda t: t.absolute_id)
    legacy_tasks = ops[:2] if full else ops[:1]
    legacy_sizes = FULL_LEGACY_RUBRICS if full else (20,)
    counts: dict[int, int] = {}
    for t, n in zip(legacy_tasks, legacy_sizes):
        counts[t.absolute_id] = n
    others = [t for t in tasks if t.absolute_id not in counts]
    weights = {str(t.absolute_id): int(100 * RUBRICS_BY_DIFFICULTY[t.difficulty] * rng.uniform(0.7, 1.3))
               for t in others}
    for k, v in allocate(weights, n_rubrics - sum(counts.values())).items():
        counts[int(k)] = v
    if min(counts.values()) < 3:
        raise ValueError("too few rubrics for the tasks")
    # labels: the release's totals (scaled), the legacy ones only on the legacy tasks
    legacy_total = sum(counts[t.absolute_id] for t in legacy_tasks)
    legacy = allocate({k: FULL_RUBRIC_TYPES[k] for k in LEGACY}, legacy_total)
    modern_labels = ("Outcome Evaluation", "Basic Evaluation", "Process Evaluation", "Result Evaluation")
    modern = _scaled({k: FULL_RUBRIC_TYPES[k] for k in modern_labels}, n_rubrics - legacy_total)
    modern["Result Evaluation"] = max(1, modern["Result Evaluation"])
    modern["Outcome Evaluation"] = 0
    modern["Outcome Evaluation"] = n_rubrics - legacy_total - sum(modern.values())
    _deal(legacy_tasks, counts, legacy, "Basic Assessment", "Results Assessment", None, rng)
    n_result_tasks = max(1, round(RESULT_TASKS_FULL * len(tasks) / FULL_TASKS))
    result_tasks = sorted(others, key=lambda t: (-counts[t.absolute_id], t.absolute_id))[:max(n_result_tasks * 3, 1)]
    salt = rng.random()
    result_tasks = sorted(result_tasks, key=lambda t: _rank(salt, t.absolute_id))[:n_result_tasks]
    _deal(others, counts, modern, "Basic Evaluation", "Outcome Evaluation", (result_tasks, "Result Evaluation"), rng)


def _deal(tasks: list[TaskPlan], counts: dict[int, int], labels: dict[str, int], first: str, second: str,
          reserved, rng: random.Random) -> None:
    """Every task gets one ``first`` (put first) and one ``second`` label; ``reserved`` = (tasks, label)
    puts all of that label on those tasks; the rest is dealt at random over the free slots."""
    left = dict(labels)
    free: dict[int, int] = {}
    for t in tasks:
        t.rubric_labels = [first, second]
        left[first] -= 1
        left[second] -= 1
        free[t.absolute_id] = counts[t.absolute_id] - 2
    if min(left.values()) < 0:
        raise ValueError(f"not enough labels for one {first} and one {second} per task: {labels}")
    if reserved:
        holders, label = reserved
        weights = {str(t.absolute_id): free[t.absolute_id] for t in holders}
        for k, n in allocate(weights, min(left[label], sum(weights.values()))).items():
            t = next(t for t in holders if t.absolute_id == int(k))
            t.rubric_labels += [label] * n
            free[t.absolute_id] -= n
            left[label] -= n
    pool = [label for label, n in sorted(left.items()) for _ in range(n)]
    rng.shuffle(pool)
    k = 0
    for t in tasks:
        n = free[t.absolute_id]
        t.rubric_labels += pool[k:k + n]
        k += n
        head, rest = t.rubric_labels[0], t.rubric_labels[1:]
        rng.shuffle(rest)
        t.rubric_labels = [head] + rest
    assert k == len(pool)


# ---------------------------------------------------------------------------------------------
# Contents: files, graph, instruction, rubrics
# ---------------------------------------------------------------------------------------------

_FMT_NAME = {"md": "Markdown", "docx": "Word", "pdf": "PDF", "txt": "plain-text", "pptx": "PowerPoint",
             "html": "HTML", "xlsx": "Excel", "csv": "CSV", "tsv": "TSV", "py": "Python", "sh": "shell",
             "js": "JavaScript", "ts": "TypeScript", "sql": "SQL", "ipynb": "Jupyter notebook", "json": "JSON",
             "yaml": "YAML", "yml": "YAML", "xml": "XML", "jsonl": "JSON Lines", "png": "PNG", "jpg": "JPEG",
             "zip": "zip", "Makefile": "Makefile"}
_OUTPUT_TYPES = {"docs": ("md", "docx", "html", "md"), "sheets": ("docx", "xlsx", "md", "pptx"),
                 "code": ("md", "md", "txt"), "data": ("md", "csv", "md"), "media": ("docx", "md", "pptx"),
                 "archive": ("md",)}
_VERB = {"docs": ("Merge", "Summarise", "Index", "Compare"), "sheets": ("Analyse", "Consolidate", "Reconcile"),
         "code": ("Review", "Catalogue", "Audit"), "data": ("Extract", "Collect", "Validate"),
         "media": ("Catalogue", "Describe"), "archive": ("Inventory",)}


def referable_files(ws: WorkspacePlan) -> list[str]:
    """The files of ``ws`` a task's instruction may name (documents, sheets, slides, tables), in planning order."""
    return [p for p in ws.files if file_type(p) in ("docx", "xlsx", "pdf", "md", "pptx", "csv")]


def _workspace_refs(ws: WorkspacePlan, rng: random.Random, k: int, docs: list[str]) -> list[str]:
    return rng.sample(docs, min(k, len(docs))) if docs else rng.sample(list(ws.files), 1)


def fill_task(t: TaskPlan, ws: WorkspacePlan, seed: int, subfolder: bool = False,
              referable: list[str] | None = None) -> None:
    """Names, data files, graph, instruction and rubrics of task ``t`` (its allocation done);
    ``subfolder`` forces some of its files into a subfolder (whose files share a stored prefix);
    ``referable``: ``referable_files(ws)``, when the caller has it (a full plan's 388 tasks share six
    workspaces of thousands of files)."""
    rng = random.Random(_rank(seed, "task", t.absolute_id))
    words = Words(t.persona, rng)
    bulk = max(set(t.types), key=lambda x: (t.types.count(x), x))
    family = FAMILY[bulk]
    folder_name = words.stem()
    folder = f"desktop/{folder_name}"
    stem = words.stem()
    dated = t.shape == "chain" and t.types.count(bulk) <= 60 and rng.random() < 0.5
    year = rng.choice((2023, 2024, 2025))
    entity = slug(words.entity("customer")) if family == "sheets" and rng.random() < 0.5 else None

    # names: bulk files numbered / dated / per month; the others by their own stems
    names: list[str] = []
    bulk_index = 0
    for ftype in t.types:
        ext = "" if ftype == "Makefile" else f".{ftype}"
        if ftype == "Makefile":
            name = "Makefile"
        elif ftype == bulk and t.types.count(bulk) > 1:
            bulk_index += 1
            if dated:
                day = bulk_index - 1
                name = f"{stem}_{year}-{1 + day // 28:02d}-{1 + day % 28:02d}{ext}"
            elif entity and bulk_index <= 12:
                name = f"{entity}_{stem}_{year}_{bulk_index:02d}{ext}"
            else:
                name = f"{stem}_{bulk_index}{ext}"
        else:
            name = f"{words.stem()}{ext}"
        names.append(name)
    if len(set(names)) != len(names):
        raise ValueError(f"task {t.absolute_id}: repeated file names")
    # targets: most files in the task folder, some tasks also a subfolder (whose files share one prefix)
    sub = rng.choice(SUBFOLDERS) if len(names) >= 3 and (rng.random() < 0.25 or subfolder) else None
    in_sub = set(rng.sample(range(len(names)), max(1, len(names) // 4))) if sub else set()
    files = []
    for i, (ftype, name) in enumerate(zip(t.types, names)):
        target = f"{folder}/{sub}/{name}" if i in in_sub else f"{folder}/{name}"
        key = posixpath.dirname(target) if i in in_sub else target
        prefix = f"{stable_hash64(f'{seed}:{t.absolute_id}:{key}'):016x}"
        stored = f"data/{prefix}_{name}"
        table = None
        if ftype in NUMBER_TYPES:
            header = ["month", "units", "amount"] if family == "sheets" else ["item", "count", "value"]
            table = number_table(rng, header, rng.randint(4, 10), [MONTHS[m % 12][:3] for m in range(12)])
        extra = {"photo": ftype == "jpg", "type": ftype}
        if ftype in ("md", "docx", "pdf", "txt"):
            extra["facts"] = _facts(rng)
            extra["lines"] = [f"{k}: {v}" for k, v in extra["facts"]]
        spec = FileSpec(stored, FORMAT_OF_TYPE[ftype], t.persona, _rank(seed, t.absolute_id, name) >> 32,
                        title=name.rsplit(".", 1)[0].replace("_", " ").capitalize(), table=table, extra=extra)
        files.append(ManifestFile(name, target, stored, spec))

    # outputs and graph
    out_type = rng.choice(_OUTPUT_TYPES[family])
    if t.shape == "chain":
        output = f"{stem}_latest.{bulk}" if bulk != "Makefile" else "Makefile.latest"
    else:
        output = f"{folder_name}_{rng.choice(('summary', 'report', 'overview', 'briefing', 'index'))}.{out_type}"
    outputs = [output]
    if rng.random() < 0.08 and t.shape != "chain":
        outputs.append(f"{folder_name}_notes.md")
    graph: list[dict] = []
    isolated: set[int] = set()
    if t.shape == "chain":
        chained = [i for i, ft in enumerate(t.types) if ft == bulk]
        keep = len(chained) - (rng.randint(1, max(1, len(chained) // 4)) if rng.random() < 0.5 else 0)
        keep = max(2, keep)
        for a, b in zip(chained[:keep], chained[1:keep]):
            graph.append({"from": names[a], "to": names[b]})
            t.implicit.append((files[a].stored_relpath, files[b].stored_relpath, "version_chain"))
        isolated = set(range(len(names))) - set(chained[:keep])
        if rng.random() < 0.5:
            graph.append({"from": names[chained[keep - 1]], "to": output})
    elif t.shape == "derived":
        src = next(i for i, ft in enumerate(t.types) if ft in TABLE_TYPES and files[i].spec.table is not None) \
            if any(files[i].spec.table is not None for i in range(len(files))) else 0
        dst = next((i for i, ft in enumerate(t.types) if ft in SUMMARY_TYPES and i != src), None)
        if dst is None or files[src].spec.table is None:
            t.shape = "to_output"
        else:
            files[dst].spec.table = files[src].spec.table
            graph.append({"from": names[src], "to": names[dst]})
            t.implicit.append((files[src].stored_relpath, files[dst].stored_relpath, "derived_from"))
    if t.shape in ("to_output", "derived"):
        if len(names) >= 4 and rng.random() < 0.25:
            isolated = set(rng.sample(range(len(names)), rng.randint(1, max(1, len(names) // 5))))
        for i, name in enumerate(names):
            if i not in isolated:
                graph.append({"from": name, "to": output})
    if t.shape == "none":
        graph = []
    # the release lists manifest files and edges in a rotated order, not sorted
    turn = rng.randrange(len(files))
    t.manifest = files[turn:] + files[:turn]
    if graph:
        g_turn = rng.randrange(len(graph)) if t.shape != "chain" else 0
        graph = graph[g_turn:] + graph[:g_turn]
    t.graph = graph
    t.output_files = outputs

    # instruction
    ws_files = _workspace_refs(ws, rng, 2, referable_files(ws) if referable is None else referable)
    pattern = f"{stem}_*.{bulk}" if t.types.count(bulk) > 1 else names[0]
    listing = ", ".join(f"`{n}`" for n in names[:4]) + (" and the others" if len(names) > 4 else "")
    verb = rng.choice(_VERB[family])
    parts = []
    if t.shape == "chain":
        parts.append(f"The `{folder}/` directory holds {t.types.count(bulk)} versions of `{pattern}` created over "
                     f"several iterations. Work out which one is the latest, keep it as `{output}`, and note which "
                     f"versions it supersedes.")
    else:
        parts.append(f"{verb} the {words.topic()} material in `{folder}/` ({listing}) and produce "
                     f"`{output}` as a {_FMT_NAME.get(out_type, out_type)} file.")
        if t.shape == "derived":
            parts.append("One of the files already summarises another; check that its numbers agree before using them.")
    if "Workspace Exploration" in t.capabilities or "Result-Providing Files Utilization" in t.capabilities:
        parts.append(f"Follow the structure of `{ws_files[0]}` in the workspace.")
    else:
        parts.append(f"Keep the terminology used in `{ws_files[0]}`.")
    if len(outputs) > 1:
        parts.append(f"Also write your working notes to `{outputs[1]}`.")
    parts.append("Save the result under `model_output/`.")
    t.task = " ".join(parts)
    t.rubrics = _rubrics(t, names, files, output, ws_files, folder, bulk, rng)


_GENERIC_OUTCOME = ("include a short summary at the top?", "use consistent units throughout?",
                    "only report figures that can be traced to an input file?",
                    "avoid inventing data that no input holds?",
                    "group related items together?", "list the gaps or open questions found in the inputs?",
                    "propose concrete next steps?", "keep the original file names when it refers to inputs?",
                    "flag inconsistencies between the inputs, if there are any?", "avoid duplicated entries?",
                    "state the period or date range it covers?")
_GENERIC_PROCESS = ("Did the agent avoid reading files outside the workspace?",
                    "Did the agent write only inside `model_output/`?",
                    "Did the agent verify the numbers it reports against the inputs?",
                    "Did the agent finish with a list of the output paths?")
_FACT_KEYS = ("Owner", "Deadline", "Budget", "Reference", "Status", "Priority")
_STATUS = ("open", "approved", "on hold", "in review", "closed")


def _facts(rng: random.Random) -> list[tuple[str, str]]:
    """Key facts a document states (one per line) and a rubric can ask about."""
    values = {"Owner": lambda: rng.choice(("operations team", "finance desk", "regional lead", "project office")),
              "Deadline": lambda: f"{rng.choice((2024, 2025))}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
              "Budget": lambda: f"{rng.randint(5, 900) * 100:,}", "Reference": lambda: f"REF-{rng.randint(1000, 9999)}",
              "Status": lambda: rng.choice(_STATUS), "Priority": lambda: rng.choice(("high", "medium", "low"))}
    return [(k, values[k]()) for k in rng.sample(_FACT_KEYS, 3)]


def _rubrics(t: TaskPlan, names, files, output, ws_files, folder, bulk, rng) -> list[str]:
    """Yes/no questions about the task's files and output, one per label, drawn from per-kind pools
    built from the task's file names and the numbers in its tables."""
    tables = [(m.filename, m.spec.table) for m in files if m.spec.table]
    latest = names[max((i for i, ft in enumerate(t.types) if ft == bulk), default=0)]
    basic = [f"Was the output file `{output}` created?",
             f"Is `{output}` saved with exactly that file name and format?",
             f"Does `{output}` start with a title that states what it covers?",
             f"Is `{output}` placed under `model_output/`?",
             f"Is `{output}` readable without errors in its default application?"]
    basic += [f"Does `{output}` mention `{name}` by its file name?" for name in names]
    basic += [f"Is `{output}` non-empty?", f"Is `{output}` well-formed, so that it opens without repair?",
              f"Does `{output}` use the language of the instruction?"]
    outcome, process = [], []
    for name in names:
        outcome.append(f"Does `{output}` cover the content of `{name}`?")
        process.append(f"Did the agent open `{name}` before writing `{output}`?")
    for a, b in zip(names, names[1:]):
        process.append(f"Did the agent compare `{a}` with `{b}`?")
    for name, table in tables:
        header, *rows = table
        col = header[1]
        outcome.append(f"Does `{output}` state the total {col} in `{name}` as {sum(r[1] for r in rows):,}?")
        top = max(rows, key=lambda r: r[2])
        outcome.append(f"Does `{output}` identify {top[0]} as the row with the highest {header[2]} in `{name}`?")
        for row in rows:
            outcome.append(f"Does `{output}` give the {header[2]} of {row[0]} in `{name}` as {row[2]:,}?")
    for name, facts in ((m.filename, m.spec.extra.get("facts", ())) for m in files):
        for key, value in facts:
            outcome.append(f"Does `{output}` report the {key.lower()} given in `{name}` ({value})?")
    outcome.append(f"Does `{output}` account for all {len(names)} input files?")
    outcome += [f"Does `{output}` {q}" for q in _GENERIC_OUTCOME]
    if t.shape == "chain":
        outcome.insert(0, f"Is `{output}` identical in content to `{latest}`?")
        process.insert(0, f"Was `{latest}` identified as the latest version?")
    if rng.random() < 0.15 and files:
        # the release's rubrics sometimes quote a stored, hash-prefixed name
        m = rng.choice(files)
        outcome.insert(1, f"For `{posixpath.basename(m.stored_relpath)}`, is its content reflected in `{output}`?")
    process += [f"Did the agent look at `{ws_files[0]}` in the workspace?",
                f"Did the agent leave the original files in `{folder}/` unchanged?",
                "Did the agent state which files it used?",
                f"Did the agent check `{output}` after writing it?",
                f"Did the agent explore `{folder}/` before starting?"]
    process += _GENERIC_PROCESS
    pools = {"Basic": basic, "Outcome": outcome, "Result": list(reversed(outcome)), "Process": process}
    used = {k: 0 for k in pools}
    out = []
    for label in t.rubric_labels:
        kind = next(k for k in pools if label.startswith(k))
        pool = pools[kind]
        i = used[kind]
        used[kind] += 1
        text = pool[i % len(pool)]
        if i >= len(pool):
            text = text[:-1] + f" (check {i // len(pool) + 1})?"
        out.append(text)
    return out
