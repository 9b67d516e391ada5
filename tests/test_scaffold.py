"""``benchwright new NAME`` (issue 26, item 6): the template dataset's files copied to NAME's and NAME registered,
in a copy of the checkout's files it touches (``--root``): every file there, the template's name nowhere in them,
the registration the tests read, and the new code importing and running under its name (its declaration, its
settings, its synthetic source, its first stage, its hostile hook). Cheap: no build (the template's own tiny build
is the contract tests')."""
from __future__ import annotations

import importlib
import importlib.util
import re
import shutil
import sys
from pathlib import Path

import pytest

from benchwright import registry, scaffold
from benchwright.cli import main as cli_main
from tests import test_registry

ROOT = Path(__file__).resolve().parents[1]
NAME = "bird_song"
LAYERS = ("pipelines", "schemas", "loaders", "validation", "cards", "evaluation", "baselines")


@pytest.fixture
def checkout(tmp_path) -> Path:
    """The files ``new`` reads and edits, copied from the checkout."""
    for path in [f.format(ds=scaffold.TEMPLATE_NAME) for f in scaffold.FILES] + [
            scaffold.REGISTRY, scaffold.PYPROJECT, scaffold.PINS, scaffold.RELIABILITY, scaffold.README]:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / path, tmp_path / path)
    return tmp_path


def test_the_files_new_writes_are_the_files_the_registry_test_checks():
    assert scaffold.FILES == test_registry.FILES


def test_new_copies_the_template_under_the_name_and_registers_it(checkout, capsys, monkeypatch):
    assert cli_main(["new", NAME, "--root", str(checkout)]) == 0
    said = capsys.readouterr().out
    assert "SLOT" in said and f"benchwright build {NAME}" in said
    files = [checkout / f.format(ds=NAME) for f in scaffold.FILES]
    assert all(f.is_file() for f in files)
    left = {f.relative_to(checkout).as_posix(): m for f in files
            if (m := re.findall(r".{0,30}template.{0,30}", f.read_text(encoding="utf-8"), re.I))}
    assert not left, left
    assert "class BirdSong(Dataset):" in (checkout / f"pipelines/{NAME}.py").read_text()

    # the registration, read as the tests read it: the copied registry module, the pins, the reliability rows
    spec = importlib.util.spec_from_file_location("registry_copy", checkout / scaffold.REGISTRY)
    copy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy)
    assert copy.names() == (*registry.published(), NAME, *registry.TEMPLATE) and NAME in copy.published()
    assert copy.SETTINGS[NAME] == f"benchwright.{NAME}.config:Config"
    assert f'"benchwright.template", "benchwright.{NAME}",' in (checkout / scaffold.PYPROJECT).read_text()
    pins = (checkout / scaffold.PINS).read_text()
    assert f'"{NAME}": {{' in pins and pins.count('"records": {"test": 7, "train": 17}') == 2
    reliability = (checkout / scaffold.RELIABILITY).read_text()
    template_rows = re.findall(r"^\| `template` \|(.*)$", reliability, re.M)
    assert template_rows and re.findall(rf"^\| `{NAME}` \|(.*)$", reliability, re.M) == template_rows
    readme = (checkout / scaffold.README).read_text()
    assert f"### BirdSong (`{NAME}`)" in readme and "(#birdsong-bird_song)" in readme
    assert f'load_dataset("out/{NAME}", "records"' in readme

    # the new code imports and runs under its name (its folders added to the layers' packages for this test)
    import benchwright
    import tests.hostile

    for package, folder in [(benchwright, "benchwright"), (tests.hostile, "tests/hostile")] + [
            (importlib.import_module(f"benchwright.{layer}"), layer) for layer in LAYERS]:
        monkeypatch.setattr(package, "__path__", [*package.__path__, str(checkout / folder)])
    monkeypatch.setitem(registry.DATASETS, NAME, copy.DATASETS[NAME])
    monkeypatch.setitem(registry.SETTINGS, NAME, copy.SETTINGS[NAME])
    try:
        test_registry.test_every_dataset_uses_the_same_names(NAME)
        dataset = registry.get(NAME)
        assert type(dataset).__name__ == "BirdSong" and dataset.settings.dataset == NAME
        assert dataset.configured(min_words=3).settings.min_words == 3
        source = checkout / "raw"
        assert registry.part(NAME, "synth")(source, scale="tiny", seed=0)["records"] == 24
        stages = importlib.import_module(f"benchwright.{NAME}.stages")
        sources = importlib.import_module(f"benchwright.{NAME}.sources")
        records = [r for rel in sources.source_files(str(source)) for r in stages.parse_file((str(source), rel), 1)]
        assert len(records) == 24 and all(isinstance(r, dict) for r in records)
        hook = importlib.import_module(f"tests.hostile.{NAME}")
        assert {c.dataset for c in hook.corpus(checkout / "hostile", None).cases} == {NAME}
    finally:
        for module in [m for m in sys.modules if NAME in m]:
            del sys.modules[module]


def test_new_refuses_a_bad_name_a_registered_one_and_a_folder_that_is_no_checkout(checkout, tmp_path, capsys):
    refusals = {("Bird-Song",): "is not a dataset name", ("class",): "is not a dataset name",
                ("template",): "is a registered dataset already", ("wildbox",): "is a registered dataset already"}
    for argv, said in refusals.items():
        assert cli_main(["new", *argv, "--root", str(checkout)]) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1, err
    (checkout / "schemas" / f"{NAME}.py").write_text("# mine\n")
    assert cli_main(["new", NAME, "--root", str(checkout)]) == 2
    assert f"schemas/{NAME}.py exists already" in capsys.readouterr().err
    assert not (checkout / "pipelines" / f"{NAME}.py").exists()  # refused before anything was written
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli_main(["new", NAME, "--root", str(empty)]) == 2
    assert "is not a benchwright checkout" in capsys.readouterr().err
