"""Workspace-Bench sources: a release is told only by its own markers (or ``--source-kind``); any
other folder, a top-level ``tasks/`` included, is one workspace of files."""
from __future__ import annotations

import json
import shutil

import pytest

from benchwright.errors import SourceError
from benchwright.workspace_bench.sources import FOLDER, RELEASE, open_source


def _write(root, files: dict):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


ANSIBLE_ROLE = {"tasks/main.yml": "---\n- name: install nginx\n  ansible.builtin.apt:\n    name: nginx\n",
                "handlers/main.yml": "---\n- name: restart nginx\n  ansible.builtin.service:\n    name: nginx\n",
                "defaults/main.yml": "---\nnginx_port: 80\n", "meta/main.yml": "galaxy_info:\n  role_name: nginx\n"}
BUILD_TASKS = {"tasks/build/run.py": "print('build')\n", "tasks/12/notes.md": "# a folder named by a number\n",
               "src/app.py": "from tasks.build import run\n"}


@pytest.mark.parametrize("files", [ANSIBLE_ROLE, BUILD_TASKS,
                                   {"tasks.json": json.dumps({"version": "2.0.0", "tasks": [{"label": "build"}]}),
                                    "tasks-lite.js": "module.exports = [];\n", "filesys/notes.txt": "x\n"}],
                         ids=["ansible role", "tasks/build", "other tasks.json"])
def test_a_folder_with_a_tasks_folder_is_a_folder(tmp_path, files):
    """Before the fix, any top-level tasks/ (or tasks.json, filesys/) made a release: the Ansible role
    was refused ('the source yielded nothing'), tasks/build/ crashed the build (int('build'))."""
    src = open_source(str(_write(tmp_path / "project", files)))
    assert src.shape == FOLDER and src.markers == () and not src.task_files
    assert [(w.name, w.task_id) for w in src.workspaces] == [("project", None)]


def test_the_release_markers(tmp_path, fixtures_dir):
    runner = _write(tmp_path / "runner", {"tasks/12/metadata.json": "{}", "tasks/12/data/a.csv": "x\n",
                                          "tasks/build/notes.txt": "not a task\n", "filesys/kaifa_raw/a.py": "\n"})
    src = open_source(str(runner))
    assert src.shape == RELEASE and src.markers == ("tasks/12/metadata.json", "filesys/kaifa_raw/")
    assert [w.name for w in src.workspaces] == ["filesys/kaifa_raw", "tasks/12"]
    assert [u.rsplit("/", 3)[-3:] for u in src.task_files] == [["tasks", "12", "metadata.json"]]
    # a tasks/ folder that is no task is refused with its reason (the pipeline quarantines it), never read
    assert [loc for loc, _ in src.not_tasks] == ["tasks/build"] and "not a task id" in src.not_tasks[0][1]

    website = tmp_path / "website"
    website.mkdir()
    shutil.copy(fixtures_dir / "workspace_bench" / "tasks_head.json", website / "tasks.json")
    assert open_source(str(website)).markers == ('tasks.json ({"full": [...]})',)
    # a release file that is damaged past its head is still the release's (and refused as such)
    (website / "tasks.json").write_text('{"full": [{"absolute_id": 1, ')
    assert open_source(str(website)).shape == RELEASE
    lite = _write(tmp_path / "lite", {"tasks-lite.js": "window.WORKSPACE_BENCH_LITE_TASKS = [];\n"})
    assert open_source(str(lite)).markers == ("tasks-lite.js (WORKSPACE_BENCH_LITE_TASKS)",)


def test_source_kind_overrides_the_markers(tmp_path):
    runner = _write(tmp_path / "runner", {"tasks/12/metadata.json": "{}"})
    forced = open_source(str(runner), FOLDER)
    assert forced.shape == FOLDER and [w.name for w in forced.workspaces] == ["runner"]
    role = open_source(str(_write(tmp_path / "role", ANSIBLE_ROLE)), RELEASE)
    assert role.shape == RELEASE and role.markers == ("--source-kind release",)
    assert [loc for loc, _ in role.not_tasks] == [] and role.workspaces == ()
    with pytest.raises(SourceError, match="unknown source kind 'zip'"):
        open_source(str(runner), "zip")


def test_a_task_folder_name_must_be_ascii_digits(tmp_path):
    """'²' and '١٢' are str.isdigit(); int('²') raises. They are not task folders."""
    src = open_source(str(_write(tmp_path / "r", {"tasks/7/metadata.json": "{}", "tasks/²/metadata.json": "{}",
                                                  "tasks/١٢/metadata.json": "{}", "tasks_lite/²/x": ""})))
    assert [w.name for w in src.workspaces] == ["tasks/7"]
    assert sorted(loc for loc, _ in src.not_tasks) == ["tasks/²", "tasks/١٢"]
    assert src.lite_folder_ids == ("²",)  # a refused Lite entry (the pipeline says why)
