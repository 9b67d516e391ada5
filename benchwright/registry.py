"""The dataset registry: the one list of datasets the CLI, ``build all`` and the contract tests use.

Each entry names the module whose ``DATASET`` is the dataset's contract (a ``benchwright.dataset.Dataset``).
Modules are imported only when a dataset is used: Beam, datasets and the domain libraries are slow
to import, and the core imports no layer at module level.
"""
from __future__ import annotations

import importlib

from benchwright.errors import BenchwrightError
from benchwright.memory import collection_paused

# Dataset id -> module defining DATASET. Adding a dataset = one line here (docs/ADDING_A_DATASET.md).
DATASETS = {
    "wildbox": "benchwright.pipelines.wildbox",
    "wordeval": "benchwright.pipelines.wordeval",
    "workspace_bench": "benchwright.pipelines.workspace_bench",
    "vlm_unlearning": "benchwright.pipelines.vlm_unlearning",
}
# Dataset id -> its build settings' type (the ``Config`` its contract declares, a ``benchwright.dataset.Config``), in
# a module that imports neither Beam nor datasets: ``benchwright build <ds> --help`` lists them at once.
SETTINGS = {
    "wildbox": "benchwright.wildbox.config:Config",
    "wordeval": "benchwright.wordeval.config:Config",
    "workspace_bench": "benchwright.workspace_bench.config:Config",
    "vlm_unlearning": "benchwright.vlm_unlearning.config:Config",
}


def names() -> tuple[str, ...]:
    return tuple(DATASETS)


def get(name: str):
    """The contract (``DATASET``) of dataset ``name``."""
    if name not in DATASETS:
        raise BenchwrightError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")
    with collection_paused():  # its pipeline's imports: Beam, datasets, the stages' libraries
        return importlib.import_module(DATASETS[name]).DATASET


def settings(name: str) -> type:
    """The type of dataset ``name``'s build settings (its ``Config``), without importing its pipeline."""
    if name not in SETTINGS:
        raise BenchwrightError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")
    return resolve(SETTINGS[name])


def resolve(target: str):
    """``"package.module:attribute"`` -> the attribute (a contract's synth, evaluator, baselines)."""
    module, attr = target.split(":")
    with collection_paused():
        return getattr(importlib.import_module(module), attr)


def part(name: str, what: str):
    """A declared part of a dataset's contract (``synth``, ``evaluator``, ``baselines``), resolved;
    a clear error when the dataset does not declare it."""
    target = getattr(get(name), what, None)
    if not target:
        declared = [n for n in DATASETS if getattr(get(n), what, None)]
        raise BenchwrightError(f"dataset {name!r} declares no {what}; datasets that do: {', '.join(declared)}")
    return resolve(target)
