"""The dataset registry: the one list of datasets the CLI, ``build all`` and the contract tests use.

``DATASETS`` are the datasets benchwright publishes (``benchwright build all``, the README); ``TEMPLATE`` is the
small dataset ``benchwright new NAME`` copies (``benchwright.scaffold``): registered like them, so every command
takes it and every test parametrised over ``names()`` runs on it, but never built by ``build all``. Each entry
names the module whose ``DATASET`` is the dataset's contract (a ``benchwright.dataset.Dataset``).
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
# The template dataset (docs/ADDING_A_DATASET.md): `benchwright new NAME` copies its files and adds NAME above.
TEMPLATE = {"template": "benchwright.pipelines.template"}
# Dataset id -> its build settings' type (the ``Config`` its contract declares, a ``benchwright.dataset.Config``), in
# a module that imports neither Beam nor datasets: ``benchwright build <ds> --help`` lists them at once.
SETTINGS = {
    "wildbox": "benchwright.wildbox.config:Config",
    "wordeval": "benchwright.wordeval.config:Config",
    "workspace_bench": "benchwright.workspace_bench.config:Config",
    "vlm_unlearning": "benchwright.vlm_unlearning.config:Config",
    "template": "benchwright.template.config:Config",
}


def names() -> tuple[str, ...]:
    """Every registered dataset, the template last: what the commands take and the tests run on."""
    return (*DATASETS, *TEMPLATE)


def published() -> tuple[str, ...]:
    """The datasets benchwright publishes: what ``benchwright build all`` builds and the README lists."""
    return tuple(DATASETS)


def module(name: str) -> str:
    """The module whose ``DATASET`` is dataset ``name``'s contract."""
    if name not in DATASETS and name not in TEMPLATE:
        raise BenchwrightError(f"unknown dataset {name!r}; known: {', '.join(names())}")
    return {**DATASETS, **TEMPLATE}[name]


def get(name: str):
    """The contract (``DATASET``) of dataset ``name``."""
    with collection_paused():  # its pipeline's imports: Beam, datasets, the stages' libraries
        return importlib.import_module(module(name)).DATASET


def settings(name: str) -> type:
    """The type of dataset ``name``'s build settings (its ``Config``), without importing its pipeline."""
    if name not in SETTINGS:
        raise BenchwrightError(f"unknown dataset {name!r}; known: {', '.join(names())}")
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
        declared = [n for n in names() if getattr(get(n), what, None)]
        raise BenchwrightError(f"dataset {name!r} declares no {what}; datasets that do: {', '.join(declared)}")
    return resolve(target)
