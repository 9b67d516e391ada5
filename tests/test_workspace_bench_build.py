"""Workspace-Bench builds from the other source shapes: the real website release (tasks.json and a
Lite list, no files), and plain folders a user wants scanned (real files nobody here wrote; the hostile
cases are in the corpus, tests/test_hostile_inputs.py)."""
from __future__ import annotations

import email
import json
import shutil
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from benchwright import registry
from benchwright.layout import MANIFEST, QUARANTINE_DIR
from benchwright.schemas import workspace_bench as schema
from tests.builds import build_dataset

DATASET = registry.get("workspace_bench")


def _rows(root: Path, config: str, split: str = "full") -> list[dict]:
    files = sorted((root / config).glob(f"{split}-*.parquet"))
    return [r for f in files for r in pq.read_table(f).to_pylist()]


def _quarantine(root: Path) -> list[dict]:
    return [json.loads(line) for f in sorted((root / QUARANTINE_DIR).glob("*.jsonl"))
            for line in f.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def website(fixtures_dir, tmp_path_factory):
    """The real release's first 7 tasks as the website ships them, with a Lite list holding tasks 3
    and 7 (the real Lite file's first entries among them) in the real file's shape."""
    source = tmp_path_factory.mktemp("website") / "release"
    source.mkdir()
    shutil.copy(fixtures_dir / "workspace_bench" / "tasks_head.json", source / "tasks.json")
    tasks = json.loads((source / "tasks.json").read_text())["full"]
    lite = [t for t in tasks if t["absolute_id"] in (3, 7)]
    (source / "tasks-lite.js").write_text("window.WORKSPACE_BENCH_LITE_TASKS = " + json.dumps(lite, indent=2) + ";\n")
    return source, build_dataset("workspace_bench", source, tmp_path_factory.mktemp("website-out"))


def test_the_real_website_release_builds_with_its_own_lite_list(website):
    _, root = website
    tasks = _rows(root, "tasks")
    assert sorted(int(t["task_id"]) for t in tasks) == [1, 2, 3, 4, 5, 6, 7]
    assert sorted(int(t["task_id"]) for t in _rows(root, "tasks", "lite")) == [3, 7]
    # the fixture README's counts: 139 rubrics, 210 graph edges, 220 manifest files
    assert len(_rows(root, "rubrics")) == 139 and len(_rows(root, "rubrics", "lite")) == 21 + 10
    assert len(_rows(root, "task_edges")) == 210
    assert sum(t["file_count"] for t in tasks) == 220
    names = schema.RUBRICS["rubric_type"].names
    assert Counter(names[r["rubric_type"]] for r in _rows(root, "rubrics")) == {
        "Outcome": 81, "Basic": 25 + 4, "Process": 13 + 6, "Result": 10}
    # our rule keeps the release's share: ceil(7 * 100 / 388) = 2 tasks
    assert sum(t["lite_rule_selected"] for t in tasks) == 2
    by_id = {int(t["task_id"]): t for t in tasks}
    assert (by_id[6]["graph_edges"], by_id[6]["graph_depth"], by_id[6]["isolated_manifest_files"]) == (30, 30, 9)
    manifest = json.loads((root / MANIFEST).read_text())
    units = manifest["reconciliation"]["units"]
    assert units["task"] == {"read": 7, "written": 7, "quarantined": 0, "filtered": 0, "bad_fraction": 0.0}
    assert units["file"]["read"] == 0 and not (root / "files").exists()  # no files shipped: no files config
    card = (root / "README.md").read_text()
    assert "| Backend Developer | 6 | 2 |" in card


NOTEBOOK_WITH_SURROGATES = json.dumps({
    "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "id": "a1",
               "source": ["import pandas as pd\n", "odd = \"\\udcff\"  # an escaped lone surrogate\n",
                          "df = pd.read_csv(\"data.csv\")\n"]},
              {"cell_type": "markdown", "metadata": {}, "id": "b2", "source": ["see [the notes](\\ud83d\\ude00.md)"]}],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).replace("\\\\u", "\\u")


# A plain project: an Ansible role's tasks/main.yml, a tasks/build/ folder, click's test line
# ``pathlib.Path("\\udcff")``, a JSON value and a notebook cell that escape a lone surrogate, and a symbolic link.
PROJECT_FILES = {
    "tasks/main.yml": "---\n- name: install nginx\n  ansible.builtin.apt:\n    name: nginx\n"
                      "- ansible.builtin.include_tasks: configure.yml\n",
    "tasks/configure.yml": "---\n- name: configure\n  ansible.builtin.template:\n    src: nginx.conf.j2\n",
    "tasks/build/run.py": "import pathlib\n\npath = pathlib.Path(\"\\udcff\")\nprint(open('data.csv').read())\n",
    "handlers/main.yml": "---\n- name: restart nginx\n  ansible.builtin.service:\n    name: nginx\n",
    "config.json": '{"input": "\\udcff.csv", "data": "data.csv"}',
    "analysis.ipynb": NOTEBOOK_WITH_SURROGATES, "data.csv": "x,y\n1,2\n", "tasks/build/data.csv": "a\n1\n"}


@pytest.fixture(scope="module")
def user_folder(fixtures_dir, tmp_path_factory) -> tuple[Path, Path]:
    """(a user's folder, its build): the project above (``PROJECT_FILES`` and a link) with the stdlib's email
    package and real .docx files nobody here wrote beside it (one build for the two tests below)."""
    source = tmp_path_factory.mktemp("folder") / "my_project"
    for rel, text in PROJECT_FILES.items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text(text, encoding="utf-8")
    (source / "latest.csv").symlink_to("data.csv")
    shutil.copytree(Path(email.__file__).parent, source / "email", ignore=shutil.ignore_patterns("__pycache__"))
    for d in sorted((fixtures_dir / "docx" / "python-docx").glob("*.docx"))[:5]:
        shutil.copy(d, source / d.name)
    return source, build_dataset("workspace_bench", source, tmp_path_factory.mktemp("folder-out"))


def test_a_plain_folder_of_real_files_is_one_workspace(user_folder):
    """The stdlib's email package and real .docx files nobody here wrote, scanned as a user's folder."""
    source, root = user_folder
    files = _rows(root, "files")
    on_disk = sorted(p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file())
    assert sorted(f["path"] for f in files) == on_disk
    assert {f["workspace"] for f in files} == {"my_project"} and all(f["task_id"] is None for f in files)
    assert {f["file_type"] for f in files if f["path"].endswith(".docx")} == {"docx"}
    assert len([f for f in files if f["path"].endswith(".docx")]) == 5
    edges = {(e["src"], e["dst"]) for e in _rows(root, "edges")}
    assert ("email/mime/text.py", "email/mime/nonmultipart.py") in edges
    for e in _rows(root, "edges"):
        if e["kind"] == 0 and e["src"].endswith(".py"):  # explicit: its evidence is a line of its file
            assert e["evidence"].strip() in (source / e["src"]).read_text(encoding="utf-8")
    assert not (root / "tasks").exists()


def test_a_project_with_a_tasks_folder_and_surrogates_is_one_workspace(user_folder):
    """The project's part of the folder (``PROJECT_FILES``). Before the fixes the tasks/ folder made it a
    'release' (the role was refused: 'the source yielded nothing'; tasks/build crashed FileRows with
    int('build')), and the surrogates stopped the build with UnicodeEncodeError in ScanFiles."""
    source, root = user_folder
    rows = {f["path"]: f for f in _rows(root, "files")}
    on_disk = sorted(p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file())
    assert {*PROJECT_FILES, "latest.csv"} <= set(rows) and sorted(rows) == on_disk
    assert {f["workspace"] for f in rows.values()} == {"my_project"} and not (root / "tasks").exists()
    # the link is its target's bytes, and says so
    assert rows["latest.csv"]["link_target"] == "data.csv" and rows["latest.csv"]["sha256"] == rows["data.csv"]["sha256"]
    assert [p for p, f in rows.items() if f["link_target"]] == ["latest.csv"]
    assert "| symbolic links (link_target: the target's bytes, not a copy) | 1 |" in (root / "README.md").read_text()
    # the notebook's surrogates are repaired (a pair joined, a lone one U+FFFD): the cell still parses
    assert "odd = \"\ufffd\"" in rows["analysis.ipynb"]["text_excerpt"]
    edges = {(e["src"], e["reference"], e["dst"]) for e in _rows(root, "edges") if e["kind"] == 0}
    assert {("analysis.ipynb", "data.csv", "data.csv"), ("analysis.ipynb", "\U0001F600.md", None),
            ("config.json", "data.csv", "data.csv"), ("tasks/build/run.py", "data.csv", "tasks/build/data.csv"),
            ("tasks/main.yml", "configure.yml", "tasks/configure.yml")} <= edges
    manifest = json.loads((root / MANIFEST).read_text())
    assert manifest["counters"]["unencodable_strings.ScanFiles"] >= 2  # the notebook's and the JSON's
    assert manifest["reconciliation"]["units"]["file"]["quarantined"] == 0


def test_source_kind_reaches_the_source_and_is_checked(tmp_path, monkeypatch):
    """``build workspace_bench --source-kind K`` (a setting, as vlm_unlearning's ``--format``) decides how the
    source is read; an unknown kind is refused naming the kinds, on the command line and in the settings."""
    import apache_beam as beam

    from benchwright.cli import main as cli_main
    from benchwright.errors import BenchwrightError
    from benchwright.pipelines import workspace_bench as pipeline_module

    runner_layout = tmp_path / "release"
    (runner_layout / "tasks" / "12").mkdir(parents=True)
    (runner_layout / "tasks" / "12" / "metadata.json").write_text("{}")
    seen = []
    real = pipeline_module.open_source
    monkeypatch.setattr(pipeline_module, "open_source", lambda url, kind=None: seen.append(real(url, kind)) or seen[-1])
    for dataset in (DATASET, DATASET.configured(source_kind="folder")):
        pipeline = beam.Pipeline()
        dataset.expand(pipeline, str(runner_layout), str(tmp_path / "staging"), None)
        shutil.rmtree(pipeline.local_tempdir, ignore_errors=True)
    assert [s.shape for s in seen] == ["release", "folder"]
    with pytest.raises(BenchwrightError, match=r"source_kind: 'zip' is not one of release, folder"):
        DATASET.configured(source_kind="zip")
    with pytest.raises(SystemExit):  # argparse's usage error, naming the choices, before anything is built
        cli_main(["build", "workspace_bench", "--source", str(runner_layout), "--out", str(tmp_path / "out"),
                  "--source-kind", "zip"])
    assert not (tmp_path / "out").exists()
