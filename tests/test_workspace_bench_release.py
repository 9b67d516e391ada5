"""Workspace-Bench task records: the 7 real tasks of the release (tests/fixtures/workspace_bench/tasks_head.json)
become TASKS / RUBRICS / TASK_EDGES rows; the Lite JavaScript file and the runner's metadata.json are read
without executing anything; bad records name their file, task and element."""
from __future__ import annotations

import copy
import json
from collections import Counter

import pytest

from benchwright.errors import RecordError, SourceError
from benchwright.workspace_bench.release import (normalise_rubric_type, read_lite_js, read_runner_tasks,
                                                 read_tasks_json, task_rows)


@pytest.fixture(scope="module")
def head(fixtures_dir):
    return read_tasks_json(str(fixtures_dir / "workspace_bench" / "tasks_head.json"))


def by_id(records, aid):
    return copy.deepcopy(next(r for r in records if r["absolute_id"] == aid))


def test_all_seven_real_tasks_ingest_with_the_fixture_counts(head):
    rows = [task_rows(r, "website") for r in head]
    tasks = [t for t, _, _, _ in rows]
    assert [t["task_id"] for t in tasks] == ["1", "2", "3", "4", "5", "6", "7"]
    assert all(not problems for _, _, _, problems in rows)
    assert Counter(t["persona"] for t in tasks) == {"Backend Developer": 6, "Operations Manager": 1}
    assert Counter(t["difficulty"] for t in tasks) == {"easy": 3, "medium": 4}
    assert sum(len(rubrics) for _, rubrics, _, _ in rows) == 139
    assert sum(len(edges) for _, _, edges, _ in rows) == 210
    assert sum(t["file_count"] for t in tasks) == 220
    # the fixture README's table: (rubrics, edges, files) per task
    assert [(t["rubric_count"], t["graph_edges"], t["file_count"]) for t in tasks] == [
        (20, 7, 7), (24, 40, 40), (21, 37, 37), (20, 43, 43), (24, 50, 50), (20, 30, 40), (10, 3, 3)]
    # role from the persona (the website export has no file_system)
    assert [t["role"] for t in tasks] == ["yunying"] + ["kaifa"] * 6
    assert all(t["source_format"] == "website" and t["lite_rule_selected"] is None for t in tasks)


def test_both_rubric_vocabularies_normalise(head):
    rubrics = [r for rec in head for r in task_rows(rec, "website")[1]]
    assert Counter(r["rubric_type_original"] for r in rubrics) == {
        "Outcome Evaluation": 81, "Basic Evaluation": 25, "Process Evaluation": 13,
        "Results Assessment": 10, "Process Assessment": 6, "Basic Assessment": 4}
    assert Counter(r["rubric_type"] for r in rubrics) == {"Outcome": 81, "Basic": 29, "Process": 19, "Result": 10}
    task1 = [r for r in rubrics if r["task_id"] == "1"]
    assert {r["rubric_type"] for r in task1} == {"Basic", "Process", "Result"}   # the legacy "Assessment" task
    assert [r["rubric_id"] for r in task1[:3]] == ["1/0", "1/1", "1/2"]
    assert task1[5]["rubric"] == head[0]["rubrics"][5]


@pytest.mark.parametrize("label,expected", [
    ("Basic Evaluation", "Basic"), ("Outcome Evaluation", "Outcome"), ("Process Evaluation", "Process"),
    ("Result Evaluation", "Result"), ("Results Assessment", "Result"), ("Basic Assessment", "Basic"),
    ("Process Assessment", "Process"), ("Result", "Result"), ("Results", "Result"), ("  outcome   evaluation ", "Outcome")])
def test_rubric_type_labels_of_the_release(label, expected):
    # the seven labels of dataset-stats.json, the bare Result(s) and case / spacing variants
    assert normalise_rubric_type(label) == expected


@pytest.mark.parametrize("label", ["Quality Evaluation", "Outcome Review", "", None])
def test_unknown_rubric_type_is_a_record_error(label):
    with pytest.raises(RecordError, match="unknown rubric type"):
        normalise_rubric_type(label, "tasks.json#absolute_id=1/rubric_types[0]")


def test_task_6_is_a_chain_of_31_inputs_with_no_edge_to_the_output(head):
    task, _, edges, problems = task_rows(by_id(head, 6), "website")
    # by hand: tool_1.sh -> tool_2.sh -> ... -> tool_31.sh (30 edges, 31 files, one path 30 long);
    # tool_32.sh .. tool_40.sh are in the manifest but in no edge; tool_latest.sh (the output) in none
    chain = [(f"tool_{i}.sh", f"tool_{i + 1}.sh") for i in range(1, 31)]
    assert sorted((e["src"], e["dst"]) for e in edges) == sorted(chain)
    assert {e["src_kind"] for e in edges} == {e["dst_kind"] for e in edges} == {"manifest"}
    assert (task["graph_nodes"], task["graph_edges"], task["graph_depth"]) == (31, 30, 30)
    assert (task["graph_components"], task["graph_cycles"], task["isolated_manifest_files"]) == (1, 0, 9)
    assert task["output_files"] == ["tool_latest.sh"] and not any(e["dst"] == "tool_latest.sh" for e in edges)
    assert not problems


def test_task_1_is_a_star_of_seven_inputs_into_the_output(head):
    task, _, edges, _ = task_rows(by_id(head, 1), "website")
    assert {e["dst"] for e in edges} == {"japan_2020_06.docx"} and {e["dst_kind"] for e in edges} == {"output"}
    # 7 inputs + 1 output, every path one edge long, one component, every manifest file used
    assert (task["graph_nodes"], task["graph_edges"], task["graph_depth"], task["graph_components"],
            task["isolated_manifest_files"]) == (8, 7, 1, 1, 0)


def test_task_4_files_sharing_a_hash_prefix_stay_distinct(head):
    record = by_id(head, 4)
    shared = [m for m in record["data_manifest"] if m["stored_relpath"].startswith("data/8e77444239d376c6_")]
    assert sorted(m["filename"] for m in shared) == ["prometheus_1551.yml", "prometheus_3495.yml", "prometheus_3683.yml"]
    # an edge naming a stored path resolves to that file, not to the first file with the same prefix
    record["file_dep_graph"].append({"from": "data/8e77444239d376c6_prometheus_3495.yml", "to": "prometheus_1551.yml"})
    task, _, edges, problems = task_rows(record, "website", data_sizes={m["stored_relpath"]: 10 for m in record["data_manifest"]})
    assert not problems
    assert {e["src"] for e in edges if e["dst"] == "prometheus_target_summary.md"} >= {m["filename"] for m in shared}
    # 43 original edges + prometheus_3495 -> prometheus_1551 -> summary: nodes unchanged, path now 2 long
    assert (task["graph_nodes"], task["graph_edges"], task["graph_depth"]) == (44, 44, 2)
    assert task["manifest_bytes"] == 430
    assert sorted(m["stored_relpath"] for m in task["data_manifest"] if m["filename"] in
                  {s["filename"] for s in shared}) == sorted(m["stored_relpath"] for m in shared)


def test_an_unresolvable_endpoint_is_a_problem_naming_task_and_edge(head):
    record = by_id(head, 6)
    record["file_dep_graph"].insert(3, {"from": "tool_3.sh", "to": "tool_99.sh"})
    record["file_dep_graph"].append({"from": "notes.txt", "to": "tool_latest.sh"})
    task, _, edges, problems = task_rows(record, "website")
    assert [(p["unit"], p["locator"]) for p in problems] == [
        ("task_edge", "tasks.json#absolute_id=6/file_dep_graph[3]"),
        ("task_edge", "tasks.json#absolute_id=6/file_dep_graph[31]")]
    assert "'tool_99.sh'" in problems[0]["reason"] and "'notes.txt'" in problems[1]["reason"]
    # every edge of the record is either a row or a problem; rows keep their index in the record
    assert len(edges) + len(problems) == len(record["file_dep_graph"]) == 32
    assert "6/3" not in {e["task_edge_id"] for e in edges} and "6/4" in {e["task_edge_id"] for e in edges}
    assert task["graph_edges"] == 30


def test_a_cycle_is_measured(head):
    record = by_id(head, 6)
    record["file_dep_graph"] += [{"from": "tool_31.sh", "to": "tool_1.sh"}, {"from": "tool_33.sh", "to": "tool_34.sh"},
                                 {"from": "tool_34.sh", "to": "tool_33.sh"}]
    task, _, _, _ = task_rows(record, "website")
    # the 31-file ring and a 2-cycle between tool_33 and tool_34; no longest path in a cyclic graph
    assert (task["graph_depth"], task["graph_cycles"], task["graph_components"]) == (-1, 2, 2)
    assert (task["graph_nodes"], task["graph_edges"], task["isolated_manifest_files"]) == (33, 33, 7)


def test_bad_records_name_file_task_and_element(head):
    record = by_id(head, 2)
    del record["rubric_types"]
    with pytest.raises(RecordError) as err:
        task_rows(record, "website")
    assert err.value.locator == "tasks.json#absolute_id=2" and "rubric_types" in err.value.reason

    record = by_id(head, 2)
    record["rubric_types"][4] = "Style Evaluation"
    with pytest.raises(RecordError) as err:
        task_rows(record, "website")
    assert err.value.locator == "tasks.json#absolute_id=2/rubric_types[4]"

    record = by_id(head, 3)
    record["rubric_types"].pop()
    with pytest.raises(RecordError, match="parallel"):
        task_rows(record, "website", source_file="tasks-lite.js")

    record = by_id(head, 3)
    record["persona"] = "Astronaut"
    with pytest.raises(RecordError) as err:
        task_rows(record, "website")
    assert err.value.locator == "tasks.json#absolute_id=3/persona"

    record = by_id(head, 7)
    record["data_manifest"][1] = {"filename": "x.md"}
    with pytest.raises(RecordError) as err:
        task_rows(record, "website")
    assert err.value.locator == "tasks.json#absolute_id=7/data_manifest[1]" and "stored_relpath" in err.value.reason


def test_missing_data_file_is_a_problem_not_silence(head):
    record = by_id(head, 7)
    sizes = {m["stored_relpath"]: 100 + i for i, m in enumerate(record["data_manifest"])}
    del sizes[record["data_manifest"][2]["stored_relpath"]]
    task, _, edges, problems = task_rows(record, "website", data_sizes=sizes)
    assert task["manifest_bytes"] == 100 + 101 and len(edges) == 3
    assert problems == [{"unit": "data_file", "locator": "tasks.json#absolute_id=7/data_manifest[2]",
                         "reason": "no data file 'data/62cad48b93630f53_project_requirements_document.md' "
                                   "in the task's folder"}]


def test_read_tasks_json_refuses_non_json_and_bad_elements(tmp_path, head):
    bad = tmp_path / "tasks.json"
    bad.write_text('{"full": [\n  {"absolute_id": 1,}\n]}')
    with pytest.raises(SourceError, match=r"tasks.json: not JSON at character \d+ \(line 2, column 21\)"):
        read_tasks_json(str(bad))
    bad.write_text(json.dumps({"full": [head[0], [1, 2], {"absolute_id": "x"}, head[0]]}))
    errors: list = []
    assert [r["absolute_id"] for r in read_tasks_json(str(bad), errors)] == [1]
    assert [e.locator for e in errors] == ["tasks.json#[1]", "tasks.json#[2]", "tasks.json#absolute_id=1"]
    with pytest.raises(RecordError):
        read_tasks_json(str(bad))


def _lite_js(records) -> str:
    # the real file's shape: the assignment, the array at 2-space indentation, a semicolon
    return "window.WORKSPACE_BENCH_LITE_TASKS = " + json.dumps(records, indent=2, ensure_ascii=False) + ";\n"


def test_read_lite_js_parses_the_array_without_executing(tmp_path, head):
    lite = [by_id(head, 3), by_id(head, 7)]
    path = tmp_path / "tasks-lite.js"
    path.write_text(_lite_js(lite), encoding="utf-8")
    records = read_lite_js(str(path))
    assert records == lite
    # Lite tasks keep the full task's id and manifest hashes
    assert [task_rows(r, "website", source_file="tasks-lite.js")[0]["data_manifest"] for r in records] == \
        [task_rows(r, "website")[0]["data_manifest"] for r in lite]
    # a trailing comma is valid JavaScript but not JSON: named by file, line and column
    text = _lite_js(lite)
    broken = text.replace('"file_count": 37\n  },', '"file_count": 37,\n  },')
    path.write_text(broken, encoding="utf-8")
    line = broken[:broken.index('"file_count": 37,')].count("\n") + 2
    with pytest.raises(SourceError, match=rf"tasks-lite.js: .* not JSON at character \d+ \(line {line}, column 3\)"):
        read_lite_js(str(path))
    path.write_text(text + "alert(1);\n", encoding="utf-8")
    with pytest.raises(SourceError, match="unexpected code after the task array"):
        read_lite_js(str(path))
    path.write_text(text.replace("WORKSPACE_BENCH_LITE_TASKS", "OTHER"), encoding="utf-8")
    with pytest.raises(SourceError, match="no assignment"):
        read_lite_js(str(path))


def test_runner_metadata_carries_role_and_target_paths(tmp_path, head):
    for aid, role in ((3, "kaifa"), (10, "yunying")):
        record = by_id(head, 3)
        record.update(absolute_id=aid, id=str(aid), file_system=role)
        for m in record["data_manifest"]:
            m["target_path"] = f"/desktop/deps/{m['filename']}"
        folder = tmp_path / "tasks" / str(aid)
        folder.mkdir(parents=True)
        (folder / "metadata.json").write_text(json.dumps(record))
    (tmp_path / "tasks" / "9").mkdir()
    (tmp_path / "tasks" / "9" / "metadata.json").write_text("{not json")
    errors: list = []
    records = read_runner_tasks(str(tmp_path), errors=errors)
    assert [r["id"] for r in records] == ["3", "10"]        # numeric order, not "10" < "3"
    assert [(e.locator, "not JSON" in e.reason) for e in errors] == [("tasks/9/metadata.json", True)]
    task, rubrics, edges, problems = task_rows(records[1], "runner")
    # the runner's file_system wins over the persona's default role
    assert (task["task_id"], task["role"], task["source_format"]) == ("10", "yunying", "runner")
    assert task["data_manifest"][0]["target_path"] == "/desktop/deps/dependency_item_34.md"
    assert len(rubrics) == 21 and len(edges) == 37 and not problems
    record = dict(records[0], file_dep_graph=[{"from": "ghost.md", "to": "x"}])
    assert task_rows(record, "runner")[3][0]["locator"] == "tasks/3/metadata.json#file_dep_graph[0]"
