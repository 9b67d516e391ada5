"""Workspace-Bench retrieval baseline on a hand-made build: recall@k equals a hand count (an instruction naming
its dependency files ranks them first under BM25; a dependency sharing no word with the instruction is last),
results are deterministic, and the loaders read the build (datasets.load_dataset included)."""
from __future__ import annotations

import copy
import hashlib
import json
import re

import pytest

from benchwright.baselines.workspace_bench import ranking, retrieval_table, run_cli
from benchwright.loaders.workspace_bench import load, task_dependency_files, tasks_frame
from benchwright.workspace_bench.release import read_tasks_json
from tests.test_workspace_bench_scoring import synthetic_record, write_build


def file_row(workspace: str, path: str, text: str, task_id: str | None = None) -> dict:
    return {"file_id": f"{workspace}/{path}", "workspace": workspace, "path": path, "task_id": task_id,
            "size": len(text), "sha256": hashlib.sha256(text.encode()).hexdigest(), "magika_label": "txt",
            "magika_score": 1.0, "extension": path.rsplit(".", 1)[-1], "file_type": "txt",
            "file_type_source": "magika", "is_text": True, "encoding": "utf-8", "line_count": 1,
            "word_count": len(text.split()), "text_excerpt": text}


def task(aid, persona, instruction, data: dict[str, str], deps: list[str], output="out.md", missing=()):
    """A task record whose data files are ``data`` ({file name: text}) plus manifest-only ``missing``
    names, with an edge from each of ``deps`` to the output."""
    record = synthetic_record(aid, persona, "medium", ["Workspace Exploration"], ["Outcome Evaluation"])
    names = list(data) + list(missing)
    record.update(task=instruction, output_files=[output], file_count=len(names),
                  data_manifest=[{"filename": n, "stored_relpath": f"data/{i:016x}_{n}"} for i, n in enumerate(names)],
                  file_dep_graph=[{"from": d, "to": output} for d in deps])
    files = [file_row(f"tasks/{aid}", f"data/{i:016x}_{n}", text, str(aid)) for i, (n, text) in enumerate(data.items())]
    return record, files


KAIFA = [file_row("filesys/kaifa_raw", p, t) for p, t in (
    ("src/app.py", "import flask app = Flask(name)"), ("docs/README.md", "Project overview and setup instructions"),
    ("notes/standup.md", "Daily standup notes for the platform team"), ("ops/deploy.sh", "kubectl apply"))]
YUNYING = [file_row("filesys/yunying_raw", f"reports/q{i:02d}_revenue.md", f"quarterly revenue report for region {i}")
           for i in range(12)]


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    t101 = task(101, "Backend Developer", "Merge invoice_2024.xlsx with budget_plan.docx and write report.md",
                {"invoice_2024.xlsx": "Invoice 2024 totals", "budget_plan.docx": "Budget plan for next year",
                 "holiday_photo.png": ""}, ["invoice_2024.xlsx", "budget_plan.docx"])
    t102 = task(102, "Operations Manager", "Compile the quarterly revenue report for all regions",
                {"ledger.csv": "account,amount"}, ["ledger.csv"])
    t103 = task(103, "Researcher", "Tidy the bibliography", {"refs.bib": "@article{x}"}, [])
    t104 = task(104, "Backend Developer", "Check deploy.sh against kubernetes_manifest.yaml",
                {"kubernetes_manifest.yaml": "apiVersion: v1 kind: Deployment"},
                ["kubernetes_manifest.yaml", "missing_config.toml"], missing=["missing_config.toml"])
    tasks = [t101, t102, t103, t104]
    root = tmp_path_factory.mktemp("wb") / "build"
    root.mkdir()
    return write_build(root, [r for r, _ in tasks], lite_ids=(101, 102, 103),
                       files=KAIFA + YUNYING + [f for _, fs in tasks for f in fs])


def test_bm25_recall_is_the_hand_count(build):
    result = retrieval_table(build, "full", rankers=("bm25",))
    rows = {r["task_id"]: r for r in result["per_task"]}
    # 101: the instruction names both dependency files: ranks 1 and 2 of 7 candidates (4 kaifa + 3 task files)
    assert rows["101"]["candidates"] == 7 and rows["101"]["bm25"]["first_relevant_rank"] == 1
    assert rows["101"]["bm25"]["found@5"] == 2 and rows["101"]["bm25"]["recall@5"] == 1.0
    # 102: ledger.csv shares no word with the instruction; all 12 revenue reports do: last of 13
    assert rows["102"]["candidates"] == 13 and rows["102"]["bm25"]["first_relevant_rank"] == 13
    assert rows["102"]["bm25"]["recall@10"] == 0.0
    # 104: one of two dependency files has no row in the build (counted, never found): recall 1/2
    assert (rows["104"]["dependency_files"], rows["104"]["dependency_files_without_a_row"]) == (2, 1)
    assert rows["104"]["bm25"]["recall@5"] == 0.5
    # 103 has no dependency graph: not evaluated
    assert result["tasks_without_dependency_files"] == ["103"] and result["tasks_evaluated"] == 3
    bm25 = result["rankers"]["bm25"]
    assert bm25["recall@5"] == pytest.approx((1 + 0 + 0.5) / 3) and bm25["pooled_recall@5"] == pytest.approx(3 / 5)
    assert bm25["recall@10"] == pytest.approx(0.5) and bm25["pooled_recall@10"] == pytest.approx(3 / 5)
    assert bm25["by_persona"] == {
        "Operations Manager": {"tasks": 1, "recall@5": 0.0, "pooled_recall@5": 0.0, "recall@10": 0.0,
                               "pooled_recall@10": 0.0},
        "Backend Developer": {"tasks": 2, "recall@5": 0.75, "pooled_recall@5": 0.75, "recall@10": 0.75,
                              "pooled_recall@10": 0.75}}
    # chance: each relevant candidate is in a random top k with probability min(k, N) / N
    chance = result["rankers"]["chance"]
    assert chance["recall@5"] == pytest.approx((5 / 7 + 5 / 13 + 0.5 * 5 / 5) / 3)
    assert chance["pooled_recall@10"] == pytest.approx((2 * 7 / 7 + 10 / 13 + 1) / 5)


def test_lite_split_keeps_its_tasks_only(build):
    result = retrieval_table(build, "lite", rankers=("bm25",))
    assert [r["task_id"] for r in result["per_task"]] == ["101", "102", "103"]
    assert result["rankers"]["bm25"]["pooled_recall@5"] == pytest.approx(2 / 3)


def test_both_rankers_are_deterministic_and_the_cli_writes_json(build, tmp_path, capsys):
    first = retrieval_table(build, "full")
    assert json.dumps(first, sort_keys=True) == json.dumps(retrieval_table(build, "full"), sort_keys=True)
    dense = {r["task_id"]: r["dense"] for r in first["per_task"] if "dense" in r}
    assert set(dense) == {"101", "102", "104"}
    assert all(0.0 <= d[f"recall@{k}"] <= 1.0 for d in dense.values() for k in (5, 10))
    assert dense["104"]["recall@5"] == 0.5     # 5 candidates: the one present file is always in the top 5
    # the instruction names task 101's dependency files: the embeddings put one first, as BM25 does
    # (a flipped similarity would put them last)
    assert dense["101"]["first_relevant_rank"] == 1
    out = tmp_path / "retrieval.json"
    assert run_cli(["--data", str(build), "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == json.loads(json.dumps(first))
    shown = capsys.readouterr()
    assert "recall@5" in shown.out
    # the tasks read and ranked, on stderr (a bar on a terminal; here, not one: a plain line)
    assert re.search(r"^\[workspace_bench\] retrieval baseline \(full\) done in \d+s: tasks' files read (\d+)/\1 tasks; "
                     r"bm25 (\d+)/\2 tasks ranked; dense \2/\2 tasks ranked$", shown.err, re.MULTILINE), shown.err
    assert run_cli(["--data", str(build), "--rankers", "bm25,tfidf"]) == 2


def test_ties_are_broken_by_path():
    files = [{"file_id": f"w/{p}", "path": p} for p in ("b.md", "a.md", "c.md", "a.md.bak")]
    assert ranking([0.5, 0.5, 0.9, 0.5 + 1e-9], files) == [2, 1, 3, 0]


def test_loaders_read_the_build(build, tmp_path, fixtures_dir):
    lite = load(build, "tasks", "lite", cache_dir=str(tmp_path / "hf"))
    assert lite.num_rows == 3 and lite.features["persona"].names[0] == "Operations Manager"
    frame = tasks_frame(build, "full")
    assert list(frame["task_id"]) == ["101", "102", "103", "104"]
    assert list(frame["persona"]) == ["Backend Developer", "Operations Manager", "Researcher", "Backend Developer"]
    assert task_dependency_files(build, "full") == {"101": {"invoice_2024.xlsx", "budget_plan.docx"},
                                                     "102": {"ledger.csv"}, "103": set(),
                                                     "104": {"kubernetes_manifest.yaml", "missing_config.toml"}}
    # the real tasks: task 6's chain names tool_1..tool_31; an endpoint written as a stored path resolves
    real = read_tasks_json(str(fixtures_dir / "workspace_bench" / "tasks_head.json"))
    six = copy.deepcopy(real[5])
    six["file_dep_graph"].append({"from": "data/d48147673e3ac9cc_tool_33.sh", "to": "tool_latest.sh"})
    root = write_build(tmp_path / "real", [six, real[6]])
    deps = task_dependency_files(root, "full")
    assert deps["6"] == {f"tool_{i}.sh" for i in range(1, 32)} | {"tool_33.sh"}
    assert deps["7"] == {m["filename"] for m in real[6]["data_manifest"]}
