"""What a newcomer meets at the command line (issue 23), each driven as a user runs it: ``benchwright`` in a
subprocess. A build never replaces what is not a build of its dataset unless told to (--force), and
says what it replaces; a mistyped option is an error with a "did you mean", never a silent Beam flag;
``--out`` naming a file is one line; every command's help prints, with each dataset's options; a build
prints no library's chatter."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchwright.layout import MANIFEST
from tests.quality_builds import tiny_build

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def benchwright(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchwright.cli", *map(str, args)], cwd=cwd or REPO,
                          env=env or ENV, capture_output=True, text=True, timeout=600)


def benchwright_here(capfd, *args: str) -> subprocess.CompletedProcess:
    """``benchwright ARGS`` through the CLI's ``main`` in this process (the worker has paid for its imports), its
    output read at the file descriptors: what a user's terminal would get, library output included. For what
    the command line says and does; what a process pays or imports at start-up is tested by ``benchwright``."""
    from benchwright.cli import main as cli_main

    capfd.readouterr()
    try:
        code = cli_main([*map(str, args)])
    except SystemExit as done:  # argparse: --help, a usage error
        code = done.code if isinstance(done.code, int) else 1
    said = capfd.readouterr()
    return subprocess.CompletedProcess(["benchwright", *map(str, args)], code, said.out, said.err)


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


# -- issue 23.1: a build replaces only a build of its dataset --------------------------------------

def test_a_folder_that_is_not_a_build_is_refused_in_one_line_and_left_as_it_was(tmp_path):
    folder = tmp_path / "out" / "vlm_unlearning"
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("my notes\n")
    done = benchwright("build", "vlm_unlearning", "--out", tmp_path / "out")
    assert done.returncode == 2, done.stderr
    assert lines(done.stderr) == [lines(done.stderr)[0]] and "Traceback" not in done.stderr
    assert str(folder) in done.stderr and "notes.txt" in done.stderr and "--force" in done.stderr
    assert "running the pipeline" not in done.stdout  # refused before anything was built
    assert (folder / "notes.txt").read_text() == "my notes\n"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["vlm_unlearning"]

    # another dataset's build is not this dataset's to replace
    shutil.rmtree(folder)
    (folder / "_build").mkdir(parents=True)
    (folder / MANIFEST).write_text(json.dumps({"dataset": "wildbox", "files": []}))
    done = benchwright("build", "vlm_unlearning", "--out", tmp_path / "out")
    assert done.returncode == 2 and "is a build of 'wildbox'" in done.stderr

    # `build all` checks every output before it builds any
    done = benchwright("build", "all", "--out", tmp_path / "out")
    assert done.returncode == 2 and "running the pipeline" not in done.stdout
    assert not (tmp_path / "out" / "wildbox").exists()


CHEAPEST = "template"  # the dataset whose tiny build costs least (~9 CPU-s): what the CLI does is the same for all


def test_a_rebuild_says_what_it_replaces_and_force_replaces_a_build_holding_a_users_file(tmp_path_factory, tmp_path,
                                                                                       capfd):
    source, built = tiny_build(CHEAPEST, tmp_path_factory)
    out = tmp_path / "out"
    shutil.copytree(built, out / CHEAPEST)
    (out / CHEAPEST / "notes.txt").write_text("mine\n")
    old = json.loads((out / CHEAPEST / MANIFEST).read_text())
    rows = sum(s["rows"] for s in old["shards"])

    refused = benchwright("build", CHEAPEST, "--source", source, "--out", out)
    assert refused.returncode == 2
    assert "its manifest does not list (notes.txt)" in refused.stderr and "--force" in refused.stderr
    assert (out / CHEAPEST / "notes.txt").exists()

    # options Beam knows pass as they are, so do --beam-arg and everything after --
    done = benchwright("build", CHEAPEST, "--source", source, "--out", out, "--force",
                       "--job_name", "cli-test", "--beam-arg=--experiments=cli_test", "--", "--not_beams=1")
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stdout.splitlines() if "replacing" in line]
    assert len(said) == 1, done.stdout
    said = re.fullmatch(
        rf"\[{CHEAPEST}\] replacing the build of \d{{4}}-\d\d-\d\d \d\d:\d\d UTC, {rows:,} rows, which holds "
        rf"files its manifest does not list \(notes\.txt\) \(--force\); diff: {rows:,} rows \(\+0\), files (\d+) "
        r"changed, 0 added, 0 removed, (\d+) unchanged; input unchanged; 0 of \d+ statistics drifted beyond their "
        r"limit \(_build/statistics/drift.json\)", said[0])
    assert said and int(said[1]) + int(said[2]) == len(old["files"]), done.stdout
    assert not (out / CHEAPEST / "notes.txt").exists()
    new = json.loads((out / CHEAPEST / MANIFEST).read_text())
    assert new["options"]["beam_args"] == ["--job_name", "cli-test", "--experiments=cli_test", "--not_beams=1"]
    # issue 23.12: no library's chatter in a build's output (a fresh process: great-expectations makes its
    # context, and said so, once per process)
    assert "ephemeral docs site" not in done.stdout + done.stderr
    assert benchwright_here(capfd, "validate", out / CHEAPEST).returncode == 0


def test_out_naming_a_file_is_one_line(tmp_path):
    target = tmp_path / "results.txt"
    target.write_text("not a folder\n")
    for out in (target, target / "sub"):
        done = benchwright("build", "vlm_unlearning", "--out", out)
        assert done.returncode == 2
        assert lines(done.stderr) == [f"benchwright: error: --out {out}: {target} is a file, not a folder; "
                                      "nothing was built"]
    assert target.read_text() == "not a folder\n"
    # a refused output is refused before Beam, datasets or torch is imported (~3 s a refusal otherwise)
    assert set(imported_heavy("build", "all", "--out", str(target))) <= {"fsspec"}


# -- issue 23.2: no silent typo ---------------------------------------------------------------------

def test_a_mistyped_option_is_an_error_with_a_hint_not_a_beam_flag(tmp_path, capfd, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = benchwright_here(capfd, "build", "vlm_unlearning", "--ouut", tmp_path / "elsewhere")
    assert done.returncode == 2
    assert "--ouut: did you mean --out?" in done.stderr and "after --" in done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing built, not even at the default ./out

    done = benchwright_here(capfd, "build", "wildbox", "--direct_num_workers", "2")
    assert done.returncode == 2 and "--workers" in done.stderr  # Beam's flag would be overridden silently

    # no prefix matching: --verbos is not --verbose
    done = benchwright_here(capfd, "validate", "--verbos", tmp_path)
    assert done.returncode == 2 and "--verbos: did you mean --verbose?" in done.stderr

    # a dataset's own command: the typo is named before the option it misspells is said to be missing
    done = benchwright_here(capfd, "evaluate", "wildbox", "--gt", tmp_path, "--perd", tmp_path / "p.json")
    assert done.returncode == 2 and "--perd: did you mean --pred?" in done.stderr
    assert "required" not in done.stderr


# -- issue 23.8: help -------------------------------------------------------------------------------

@pytest.mark.parametrize("command, options", [
    ("evaluate", {"wildbox": "--ap-bev-protocol", "wordeval": "--outputs", "workspace_bench": "--judge-model",
                  "vlm_unlearning": "--alpha"}),
    ("baseline", {"wildbox": "--head", "wordeval": "--agent", "workspace_bench": "--rankers",
                  "vlm_unlearning": "--markdown"}),
    ("run", {"wordeval": "--memory-mb"}),
])
def test_help_of_a_dataset_command_lists_every_datasets_options(command, options, capfd):
    done = benchwright_here(capfd, command, "--help")
    assert done.returncode == 0, done.stderr
    for name, option in options.items():
        assert f"usage: benchwright {command} {name}" in done.stdout
        assert option in done.stdout.split(f"usage: benchwright {command} {name}")[1]
    if command == "evaluate":  # one dataset's alone
        one = benchwright_here(capfd, command, "wildbox", "--help")
        assert one.returncode == 0 and one.stdout.count("usage:") == 1 and "--ap-bev-protocol" in one.stdout


def test_build_and_synth_help_explain_every_argument(capfd):
    done = benchwright_here(capfd, "build", "--help")
    assert done.returncode == 0
    assert "--routing-scores" in done.stdout and "--force" in done.stdout and "after --" in done.stdout
    done = benchwright_here(capfd, "synth", "--help")
    assert done.returncode == 0
    block = done.stdout.split("options:")[1]
    for option in ("--out OUT", "--scale", "--seed SEED", "--label-defects"):
        entry = block.split(option, 1)[1].split("\n  -", 1)[0]
        assert len(entry.split()) > 3, (option, entry)  # a sentence, not just the option
    assert "DATASET" in done.stdout and "wildbox | wordeval" in done.stdout


# -- issue 23.7: the README's commands without activating anything ----------------------------------

def test_bw_runs_benchwright_from_the_project_environment_without_activation(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "VIRTUAL_ENV": sys.prefix}
    done = subprocess.run([str(REPO / "bw"), "validate", "--help"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: benchwright validate")
    if Path(sys.prefix).resolve() == (REPO / ".venv").resolve():  # then found without VIRTUAL_ENV too
        del env["VIRTUAL_ENV"]
        done = subprocess.run([str(REPO / "bw"), "--help"], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout.startswith("usage: benchwright")


# -- issue 23.12: no chatter ----------------------------------------------------------------------------

def test_bm25_indexing_logs_nothing_below_a_warning(caplog):
    # a build's card runs the Workspace-Bench retrieval baseline once per role: bm25s set its own logger to
    # DEBUG and printed "Building index from tokens" for each (Beam's logging.basicConfig gives it a handler)
    import logging

    from benchwright.baselines.workspace_bench import BM25Ranker

    caplog.set_level(logging.DEBUG)
    ranker = BM25Ranker()
    ranker.prepare({"a": "the quarterly budget sheet", "b": "minutes of the design review"}, {"role": {"a", "b"}})
    assert ranker.scores("budget", ["a", "b"], "role").argmax() == 0
    assert [r.getMessage() for r in caplog.records if r.name.startswith("bm25s") and r.levelno < logging.WARNING] == []


# -- issue 27.1: start-up ---------------------------------------------------------------------------

# Libraries the CLI must not import to parse its command line, print its help or describe a build (each
# takes 0.1-3 s to import: great-expectations 2-3 s, Beam 1-1.3 s, torch, datasets and pandas about 1 s).
HEAVY = ("great_expectations", "apache_beam", "torch", "datasets", "pandas", "pyarrow", "fsspec", "cv2",
         "matplotlib", "mlcroissant", "jinja2", "tqdm")


def imported_heavy(*argv: str) -> list[str]:
    """The HEAVY modules loaded once ``benchwright.cli`` is imported and, with ``argv``, its main has run."""
    code = ("import json, sys\nimport benchwright.cli\n"
            f"if {list(argv)!r}:\n"
            f"    with open('/dev/null', 'w') as sys.stdout:\n"
            f"        try:\n            benchwright.cli.main({list(argv)!r})\n"
            f"        except SystemExit:\n            pass\n"
            f"    sys.stdout = sys.__stdout__\n"
            f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_cli_its_help_and_info_import_no_heavy_library(tmp_path_factory, tmp_path):
    """``import benchwright.cli``, ``benchwright --help``, ``build --help``'s parser and ``benchwright info`` of a
    local build load none of the slow libraries (a top-level import added back fails this); info lists
    the build's configs in the dataset's order, and a build whose manifest predates its configs list is
    described the same (its configs from the dataset's module)."""
    _, built = tiny_build("wildbox", tmp_path_factory)
    assert imported_heavy() == []
    assert imported_heavy("--help") == []
    assert imported_heavy("synth", "--help") == []
    assert imported_heavy("info", str(built)) == []
    info = benchwright("info", built)
    assert info.returncode == 0, info.stderr
    configs = [line.split()[0] for line in info.stdout.splitlines()[1:4]]
    assert configs == ["frames", "boxes", "segments"]  # the dataset's declared order
    old = tmp_path / "wildbox"
    shutil.copytree(built, old)
    manifest = json.loads((old / MANIFEST).read_text())
    del manifest["configs"]
    (old / MANIFEST).write_text(json.dumps(manifest))
    assert benchwright("info", old).stdout.replace(str(old), str(built)) == info.stdout


def test_build_help_lists_each_datasets_settings_without_importing_beam():
    """Issue 26: ``build <ds> --help`` lists the dataset's settings (its ``Config``: each field with its default
    and what it does) from the registry's settings module, importing no pipeline and no slow library."""
    assert imported_heavy("build", "--help") == []
    assert imported_heavy("build", "wordeval", "--help") == []
    done = benchwright("build", "wordeval", "--help")
    assert done.returncode == 0 and "wordeval's settings" in done.stdout and "vlm_unlearning's" not in done.stdout
    settings = done.stdout.split("wordeval's settings", 1)[1]
    for option, shown in (("--seeds SEEDS", "(default: 0,1)"), ("--libreoffice-gate {all,none}", "(default: all)"),
                          ("--unit-ids UNIT_IDS", "default: every unit"), ("--lite-seed LITE_SEED", "(default: 0)")):
        entry = " ".join(settings.split(option, 1)[1].split("\n  --", 1)[0].split())
        assert shown in entry and len(entry.split()) > 8, (option, entry)
