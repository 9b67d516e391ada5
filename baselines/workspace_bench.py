"""Workspace-Bench retrieval baseline: can a ranker find the files a task depends on from its instruction alone?

``benchwright baseline workspace_bench --data BUILD [--split lite|full] [--rankers bm25,dense] [--out FILE]``

For each task the candidates are the files an agent could read: the task's own data files (``files``
rows with that task_id) and its role's workspace (``filesys/<role>_raw``). The relevant ones are the
task's dependency files: the manifest files that are an endpoint of its ``file_dep_graph``
(``loaders.workspace_bench.task_dependency_files``). Every candidate is ranked against the instruction:

- ``bm25``: BM25 (``bm25s``, Lucene variant) over the path's tokens and the file's ``text_excerpt``, one
  index per role (its workspace and all its tasks' data files: the IDF of the role's corpus);
- ``dense``: cosine similarity of WordLlama embeddings (256-d; the weights ship inside the wordllama
  wheel and are loaded from there, never downloaded) of the same text;
- ``chance``: the expected recall of a uniformly random ranking (k / candidates per relevant file), the floor.

Scores are rounded to 6 decimals and ties broken by path (then file id), so a ranking is the same on
every run and machine. Reported: recall@5 and recall@10, the mean over tasks with at least one
dependency file and pooled (found / all dependency files), per ranker and per persona; a dependency
file the build has no row for counts as not found (and is counted).
"""
from __future__ import annotations

import functools
import json
import logging
import math
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from benchwright.arguments import ArgumentParser, parser_of
from benchwright.loaders.workspace_bench import readable_files, task_dependency_files, tasks_frame
from benchwright.progress import Progress, current, use
from benchwright.schemas.workspace_bench import PERSONAS, SPLITS

K_VALUES = (5, 10)
RANKERS = ("bm25", "dense")
SCORE_DECIMALS = 6
# Tokens: runs of letters or digits, so a path's separators and snake_case split into words
# ("data/..._invoice_2024.xlsx" -> data, invoice, 2024, xlsx); single characters dropped.
TOKEN_PATTERN = r"(?u)[^\W_]{2,}"
WORKSPACE_OF_ROLE = "filesys/{role}_raw"


def path_words(path: str) -> str:
    return " ".join(re.findall(TOKEN_PATTERN, path or ""))


def document_text(file: dict, target_path: str | None = None) -> str:
    """What a ranker reads of a file: its path's words (and, for a task file, the workspace path the
    runner copies it to), then its text excerpt."""
    paths = [file["path"]] + ([target_path] if target_path else [])
    return " ".join(path_words(p) for p in paths) + "\n" + (file.get("text_excerpt") or "")


def ranking(scores, files: list[dict]) -> list[int]:
    """Candidate indices, best first: rounded score descending, then path, then file id."""
    rounded = np.round(np.asarray(scores, dtype=np.float64), SCORE_DECIMALS)
    return sorted(range(len(files)), key=lambda i: (-rounded[i], files[i]["path"], files[i]["file_id"]))


class BM25Ranker:
    """BM25 with one index per role: the role's workspace plus the data files of all its tasks. A task's
    candidates are scored in its role's index, so IDF comes from the role's whole corpus (one index per
    role instead of one per task: a role workspace of thousands of files is indexed once)."""

    name = "bm25"

    def __init__(self):
        import bm25s

        # bm25s sets its logger to DEBUG when imported and logs each index it builds ("Building index from
        # tokens"); its warnings stay
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        self._bm25s = bm25s
        self._indexes: dict[str, tuple] = {}

    def _tokenize(self, texts: list[str]) -> list[list[str]]:
        return self._bm25s.tokenize(texts, token_pattern=TOKEN_PATTERN, stopwords="en", return_ids=False,
                                    show_progress=False)

    def prepare(self, documents: dict[str, str], corpora: dict[str, set[str]]) -> None:
        for key in sorted(corpora):
            ids = sorted(corpora[key])
            if not ids:  # a role with no files (a source of task records only): nothing to rank
                continue
            retriever = self._bm25s.BM25()
            retriever.index(self._tokenize([documents[i] for i in ids]), show_progress=False)
            self._indexes[key] = (retriever, {fid: pos for pos, fid in enumerate(ids)})

    def scores(self, query: str, file_ids: list[str], corpus: str) -> np.ndarray:
        if not file_ids:
            return np.zeros(0)
        retriever, position = self._indexes[corpus]
        every = retriever.get_scores(self._tokenize([query])[0])
        return every[[position[i] for i in file_ids]]


@functools.lru_cache(maxsize=1)
def wordllama_model():
    """WordLlama's packaged model, loaded once per process (its tables, twice per build otherwise: one ranker per
    corpus); embedding reads it, nothing changes it."""
    import wordllama
    from wordllama import WordLlama

    # the wheel ships its weights; its default loader looks elsewhere and would try to download
    return WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)


class DenseRanker:
    name = "dense"

    def __init__(self):
        self._model = wordllama_model()
        self._vectors: dict[str, np.ndarray] = {}

    def _embed(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(self._model.embed(texts, norm=False), dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)   # empty text: a zero vector

    def prepare(self, documents: dict[str, str], corpora: dict[str, set[str]]) -> None:
        ids = sorted(documents)   # a fixed order and batching: the same build gives the same vectors
        if not ids:
            return
        self._vectors.update(zip(ids, self._embed([documents[i] for i in ids])))

    def scores(self, query: str, file_ids: list[str], corpus: str) -> np.ndarray:
        if not file_ids:
            return np.zeros(0)
        q = self._embed([query])[0]
        return np.array([float(self._vectors[i] @ q) for i in file_ids])


def make_ranker(name: str):
    return {"bm25": BM25Ranker, "dense": DenseRanker}[name]()


def _recall_row(found: dict, relevant: int) -> dict:
    return {f"recall@{k}": found[k] / relevant for k in K_VALUES}


def _summary(per_task: list[dict], ranker: str) -> dict:
    """Mean recall@k over tasks with a dependency file, pooled recall@k (found / relevant), per persona."""
    def block(rows):
        relevant = sum(r["dependency_files"] for r in rows)
        out = {"tasks": len(rows)}
        for k in K_VALUES:
            out[f"recall@{k}"] = math.fsum(r[ranker][f"recall@{k}"] for r in rows) / len(rows) if rows else None
            out[f"pooled_recall@{k}"] = (math.fsum(r[ranker][f"found@{k}"] for r in rows) / relevant) if relevant else None
        return out

    rows = [r for r in per_task if r["dependency_files"]]
    by_persona = {p: block([r for r in rows if r["persona"] == p]) for p in PERSONAS
                  if any(r["persona"] == p for r in rows)}
    return {**block(rows), "by_persona": by_persona}


def card_tables(build: str, settings) -> dict:
    """The card's retrieval table (the dataset's declared ``card_baselines``): each ranker's recall on every split."""
    from benchwright.card import markdown_table

    rows = []
    for split in SPLITS:
        result = retrieval_table(build, split)
        rows += [[split, name, result["tasks_evaluated"]] + [r[f"{m}@{k}"] for k in K_VALUES
                                                              for m in ("recall", "pooled_recall")]
                 for name, r in result["rankers"].items()]
    table = markdown_table(["split", "ranker", "tasks", "recall@5", "pooled recall@5", "recall@10",
                            "pooled recall@10"], [[v if v is not None else "n/a" for v in r] for r in rows])
    return {"retrieval_table": table}


def retrieval_table(build, split: str = "full", rankers=RANKERS) -> dict:
    """The baseline's results on a build's split (what the card shows): see the module docstring."""
    with current().phase(f"retrieval baseline ({split})") as phase:
        return _retrieval_table(build, split, rankers, phase)


def _retrieval_table(build, split: str, rankers, phase) -> dict:
    tasks = tasks_frame(build, split).to_dict("records")
    deps = task_dependency_files(build, split)
    files = readable_files(build)
    by_task, by_workspace = defaultdict(list), defaultdict(list)
    for f in files:
        (by_task[f["task_id"]] if f["task_id"] is not None else by_workspace[f["workspace"]]).append(f)

    # Each file's text once: a workspace file's is the same for every task of its role (the workspace
    # is most of every task's candidates), a task file belongs to one task.
    plans, documents = [], {}
    corpora: dict[str, set[str]] = defaultdict(set)
    read = phase.task("tasks' files read", len(tasks), "tasks")
    ranked_tasks = {name: phase.task(name, None, "tasks ranked", started=False) for name in rankers}
    for task in read.iterate(tasks):
        manifest = {m["stored_relpath"]: m for m in task["data_manifest"]}
        dep_paths = {m["stored_relpath"] for m in manifest.values() if m["filename"] in deps.get(task["task_id"], set())}
        candidates = sorted(by_task.get(task["task_id"], []) + by_workspace.get(WORKSPACE_OF_ROLE.format(role=task["role"]), []),
                            key=lambda f: f["file_id"])
        for f in candidates:
            if f["file_id"] not in documents:
                documents[f["file_id"]] = document_text(f, manifest[f["path"]]["target_path"]
                                                        if f["task_id"] is not None and f["path"] in manifest else None)
        corpora[task["role"]].update(f["file_id"] for f in candidates)
        relevant = {f["file_id"] for f in candidates if f["task_id"] == task["task_id"] and f["path"] in dep_paths}
        plans.append((task, candidates, relevant, len(dep_paths)))

    per_task = [{"task_id": t["task_id"], "persona": t["persona"], "candidates": len(c), "dependency_files": n,
                 "dependency_files_without_a_row": n - len(rel)} for t, c, rel, n in plans]
    for name in rankers:
        ranker = make_ranker(name)
        ranker.prepare(documents, corpora)
        ranked_tasks[name].update(0, sum(1 for *_, n in plans if n))
        for row, (task, candidates, relevant, n) in zip(per_task, plans):
            if not n:
                continue
            ranked_tasks[name].advance()
            ids = [f["file_id"] for f in candidates]
            order = ranking(ranker.scores(task["instruction"], ids, task["role"]), candidates) if candidates else []
            ranked = [ids[i] for i in order]
            found = {k: len(relevant & set(ranked[:k])) for k in K_VALUES}
            first = next((r + 1 for r, fid in enumerate(ranked) if fid in relevant), None)
            row[name] = {**_recall_row(found, n), **{f"found@{k}": found[k] for k in K_VALUES},
                         "first_relevant_rank": first}
    for row, (_, candidates, relevant, n) in zip(per_task, plans):
        if n:
            # a random order puts each candidate in the top k with probability min(k, N) / N
            expected = {k: len(relevant) * min(k, len(candidates)) / len(candidates) if candidates else 0.0
                        for k in K_VALUES}
            row["chance"] = {**_recall_row(expected, n), **{f"found@{k}": expected[k] for k in K_VALUES}}

    counts = [r["candidates"] for r in per_task]
    return {
        "split": split, "k": list(K_VALUES), "tasks": len(per_task),
        "tasks_evaluated": sum(1 for r in per_task if r["dependency_files"]),
        "tasks_without_dependency_files": [r["task_id"] for r in per_task if not r["dependency_files"]],
        "dependency_files": sum(r["dependency_files"] for r in per_task),
        "dependency_files_without_a_row": sum(r["dependency_files_without_a_row"] for r in per_task),
        "candidates": {"mean": float(np.mean(counts)) if counts else 0.0, "min": min(counts, default=0),
                       "max": max(counts, default=0)},
        "rankers": {name: _summary(per_task, name) for name in (*rankers, "chance")},
        "per_task": per_task,
    }


def summary_lines(result: dict) -> list[str]:
    def pct(x):
        return "n/a" if x is None else f"{100 * x:.1f}%"

    lines = [f"split {result['split']}: {result['tasks_evaluated']} of {result['tasks']} tasks have dependency files "
             f"({result['dependency_files']} files; candidates per task {result['candidates']['mean']:.1f} mean)"]
    for name, r in result["rankers"].items():
        lines.append(f"  {name:6s} " + "  ".join(f"recall@{k} {pct(r[f'recall@{k}'])} (pooled {pct(r[f'pooled_recall@{k}'])})"
                                                for k in K_VALUES))
    return lines


def cli_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="benchwright baseline workspace_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="a built Workspace-Bench")
    parser.add_argument("--split", choices=("lite", "full"), default="full")
    parser.add_argument("--rankers", default=",".join(RANKERS), help="comma-separated: bm25, dense")
    parser.add_argument("--out", type=Path, help="write the JSON results here")
    parser.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    return parser


@parser_of(cli_parser)
def run_cli(argv) -> int:
    args = cli_parser().parse_args(argv)
    rankers = tuple(r.strip() for r in args.rankers.split(",") if r.strip())
    unknown = sorted(set(rankers) - set(RANKERS))
    if unknown:
        print(f"error: unknown rankers {unknown}; known: {', '.join(RANKERS)}", file=sys.stderr)
        return 2
    with use(Progress("off" if args.no_progress else "auto", prefix="[workspace_bench]")):
        result = retrieval_table(args.data, args.split, rankers)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print("\n".join(summary_lines(result)))
    return 0
