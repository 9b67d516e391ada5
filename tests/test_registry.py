"""Every registered dataset has the same files in the same places, the same names for the same things, and
pinned row counts for its tiny build (as TFDS pins each split's size): a change that moves a count says so
here, in a diff a reviewer reads, not in a count that is merely above 0."""
from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

from benchwright import registry
from benchwright.manifest import rows_by_config_split
from tests.quality_builds import tiny_build

ROOT = Path(__file__).resolve().parents[1]

# The files a dataset <ds> has (docs/ADDING_A_DATASET.md)
FILES = (
    "pipelines/{ds}.py",              # the declaration (DATASET)
    "schemas/{ds}.py",                # CONFIGS, SPLITS, ID_COLUMNS
    "loaders/{ds}.py",
    "validation/{ds}.py",
    "cards/{ds}.py",
    "cards/{ds}.md.j2",
    "evaluation/{ds}.py",
    "baselines/{ds}.py",
    "benchwright/{ds}/__init__.py",   # the domain code, no Beam
    "benchwright/{ds}/synth.py",      # SCALES, write_source
    "benchwright/{ds}/sources.py",    # one parser per raw format
    "benchwright/{ds}/stages.py",     # what each pipeline stage does to one element
    "benchwright/{ds}/config.py",     # Config: the build settings (registry.SETTINGS names it)
    "benchwright/{ds}/README.md",     # what the domain package holds, module by module
    "docs/reference/{ds}.md",         # facts about the real release and its formats
    "tests/hostile/{ds}.py",          # the hostile corpus hook (tests/test_hostile_inputs.py)
)

# Rows per config and split of each dataset's tiny build (synth --scale tiny --seed 0, built with the
# defaults): tests/quality_builds.py's tiny_build, which the contract and browser tests share.
PINNED_TINY_ROWS = {
    "wildbox": {  # 18 segments, 72 frames, 200 cuboids; 3 boxes filtered (1 px or less once clipped)
        "boxes": {"train": 87, "validation": 110},
        "frames": {"train": 31, "validation": 41},
        "segments": {"train": 8, "validation": 10},
    },
    "wordeval": {  # 2 templates, their units and tables_add, seeds 0 and 1 (4 atomic cases not planned)
        "atomic": {"lite": 6, "test": 22},
        "compositional": {"lite": 2, "test": 8},
    },
    "workspace_bench": {  # 7 tasks over the five role workspaces; Lite: min(100, ceil(7 x 100 / 388)) = 2
        "edges": {"full": 171},
        "files": {"full": 141, "lite": 15},
        "rubrics": {"full": 133, "lite": 40},
        "task_edges": {"full": 12, "lite": 5},
        "tasks": {"full": 7, "lite": 2},
    },
    "template": {  # 24 records in two files, none refused
        "records": {"test": 7, "train": 17},
    },
    "vlm_unlearning": {  # 10 examples from 6 records (4 training, 2 test)
        **{view: {"forget": 4, "retain": 2, "test": 4} for view in ("multimodal", "text_only", "image_only")},
        **{f"{family}_g{gamma}": {"forget": 4} for family in ("modroute", "random") for gamma in (0.25, 0.5, 0.75)},
        "records": {"test": 2, "train": 4},
    },
}


@pytest.mark.parametrize("name", registry.names())
def test_every_dataset_has_the_files_of_the_contract(name):
    # a layer's module may be a package once it outgrows one file (evaluation/wildbox/, baselines/wildbox/)
    missing = [f.format(ds=name) for f in FILES if not (ROOT / f.format(ds=name)).is_file()
               and not (f.endswith("/{ds}.py") and (ROOT / f.format(ds=name)[:-3] / "__init__.py").is_file())]
    assert not missing, f"{name} lacks {missing} (docs/ADDING_A_DATASET.md)"
    readme = (ROOT / "benchwright" / name / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# ") and len(readme.split()) >= 150, f"benchwright/{name}/README.md says too little"
    modules = {p.stem for p in (ROOT / "benchwright" / name).glob("*.py") if p.stem != "__init__"}
    named = set(re.findall(r"`(?:[\w/]+/)?(\w+)\.py`", readme))
    assert modules <= named, f"benchwright/{name}/README.md does not name {sorted(modules - named)}"


@pytest.mark.parametrize("name", registry.names())
def test_every_dataset_uses_the_same_names(name):
    """One name per thing: the schema's ``CONFIGS`` (config -> Features), ``SPLITS``, ``ID_COLUMNS`` and
    ``SUBSET_SPLITS`` are what the dataset declares; ``benchwright.<ds>.synth.write_source(out_dir, scale,
    seed, progress)`` over ``SCALES``; the evaluator and baselines as ``run_cli``."""
    from datasets import Features

    dataset = registry.get(name)
    assert registry.module(name) == f"benchwright.pipelines.{name}" and dataset.name == name
    schema = importlib.import_module(f"benchwright.schemas.{name}")
    assert isinstance(schema.CONFIGS, dict) and all(isinstance(f, Features) for f in schema.CONFIGS.values())
    assert dataset.configs == schema.CONFIGS
    assert isinstance(schema.SPLITS, tuple) and dataset.splits == schema.SPLITS
    assert dataset.id_columns == schema.ID_COLUMNS and set(schema.ID_COLUMNS) == set(schema.CONFIGS)
    assert all(column in schema.CONFIGS[c] for c, column in schema.ID_COLUMNS.items())
    assert dataset.subset_splits == getattr(schema, "SUBSET_SPLITS", {})
    synth = importlib.import_module(f"benchwright.{name}.synth")
    assert registry.resolve(dataset.synth) is synth.write_source
    assert list(inspect.signature(synth.write_source).parameters)[:4] == ["out_dir", "scale", "seed", "progress"]
    assert {"tiny", "default", "full"} <= set(synth.SCALES)
    assert dataset.evaluator == f"benchwright.evaluation.{name}:run_cli"
    assert dataset.baselines == f"benchwright.baselines.{name}:run_cli"


def test_the_readme_shows_every_dataset_to_a_researcher():
    """The README's contents, and a section per published dataset (listed in the contents; not the template) with
    its reference doc, one ``load_dataset`` line of one of its configs, and its citation when the dataset declares
    one."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    contents = readme.split("\n## Contents\n", 1)[1].split("\n## ", 1)[0]
    sections = readme.split("\n### ")
    assert not [s for s in sections if s.split("\n", 1)[0].endswith(tuple(f"(`{t}`)" for t in registry.TEMPLATE))]
    for name in registry.published():
        dataset = registry.get(name)
        (section,) = [s for s in sections if s.split("\n", 1)[0].endswith(f"(`{name}`)")]
        heading = section.split("\n", 1)[0]
        anchor = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        assert f"(#{anchor})" in contents, (name, anchor)
        assert f"docs/reference/{name}.md" in section and f"benchwright/{name}/README.md" in section, name
        configs = re.findall(rf'load_dataset\("out/{name}", "([\w.]+)"', section)
        assert len(configs) == 1 and configs[0] in dataset.configs, (name, configs)
        if dataset.citation:
            assert dataset.citation.split("\n")[0] in section, name
    for heading in ("Quick start", "Reliability", "Performance", "Adding a dataset"):
        assert f"\n## {heading}\n" in readme and f"(#{heading.lower().replace(' ', '-')})" in contents, heading


@pytest.mark.parametrize("name", registry.names())
def test_the_tiny_build_has_its_pinned_row_counts(name, tmp_path_factory):
    _, built = tiny_build(name, tmp_path_factory)
    assert rows_by_config_split(built) == PINNED_TINY_ROWS.get(name)
