"""Layers import downward only, and no modules import each other in a circle (imports inside
functions included: they hide cycles, they do not remove them). docs/ARCHITECTURE.md draws the order."""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import networkx as nx

from benchwright import registry

REPO = Path(__file__).resolve().parents[1]
# folder -> import package (pyproject.toml's package-dir)
FOLDERS = {"benchwright": "benchwright", "schemas": "benchwright.schemas", "loaders": "benchwright.loaders",
           "validation": "benchwright.validation", "cards": "benchwright.cards",
           "evaluation": "benchwright.evaluation", "baselines": "benchwright.baselines",
           "pipelines": "benchwright.pipelines", "benchmarks": "benchwright.benchmarks"}
# Bottom to top. The core's infrastructure; the schemas; the file formats several datasets share; each dataset's
# domain code (no Beam); the readers and checks of a built dataset and its card; the pipelines, which produce it;
# its consumers, the evaluators and the baselines (the pipelines name them as "module:function" strings, never
# import them: the producer does not depend on its consumers). A module imports from its own rank or below.
FORMATS = ("benchwright.formats",)
DOMAIN = tuple(f"benchwright.{name}" for name in registry.names())  # every registered dataset's, the template's too
RANKS = {"core": 0, "schemas": 1, "formats": 2, "domain": 3, "loaders": 4, "validation": 5, "cards": 6,
         "pipelines": 7, "evaluation": 8, "baselines": 9, "benchmarks": 10, "cli": 10}


@functools.cache  # read once per run: every test of the file walks the same tree
def modules() -> dict[str, Path]:
    out = {}
    for folder, package in FOLDERS.items():
        for f in (REPO / folder).rglob("*.py"):
            parts = [p for p in f.relative_to(REPO / folder).with_suffix("").parts if p != "__init__"]
            out[".".join([package, *parts])] = f
    return out


def layer(module: str) -> str:
    if module == "benchwright.cli":
        return "cli"
    if any(module == d or module.startswith(d + ".") for d in FORMATS):
        return "formats"
    if any(module == d or module.startswith(d + ".") for d in DOMAIN):
        return "domain"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in RANKS and parts[1] != "cli" else "core"


def _type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imports(path: Path, known: dict[str, Path]) -> set[str]:
    """Modules of the package that ``path`` imports anywhere (not under ``if TYPE_CHECKING``)."""
    found = set()

    def visit(node):
        if isinstance(node, ast.If) and _type_checking(node):
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for name in [node.module] + [f"{node.module}.{a.name}" for a in node.names]:
                if name in known:
                    found.add(name)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


@functools.cache
def graph() -> nx.DiGraph:
    known = modules()
    g = nx.DiGraph()
    g.add_nodes_from(known)
    for module, path in known.items():
        for target in imports(path, known) - {module}:
            # a package's __init__ is imported with any of its modules; only real edges count
            if not module.startswith(target + "."):
                g.add_edge(module, target)
    return g


def test_layers_import_downward_only():
    bad = sorted(f"{a} ({layer(a)}) imports {b} ({layer(b)})" for a, b in graph().edges
                 if RANKS[layer(b)] > RANKS[layer(a)])
    assert not bad, "\n".join(bad)


def test_the_pipelines_import_neither_their_evaluators_nor_their_baselines():
    """The producer does not depend on its consumers: a card's baseline tables and a measure of an export are
    declared as "module:function" strings (``Dataset.card_baselines``), resolved by the core when it runs them."""
    consumers = sorted(f"{a} imports {b}" for a, b in graph().edges
                       if layer(a) == "pipelines" and layer(b) in ("evaluation", "baselines"))
    assert not consumers, "\n".join(consumers)
    assert RANKS["pipelines"] < RANKS["evaluation"] < RANKS["baselines"]


def test_domain_code_imports_no_beam():
    """``benchwright/<ds>/`` and the formats are code with no Beam (a stage function yields ``benchwright.records``'
    Reject and Read; the pipeline's stages run it), not even through a function's import."""
    beam_modules = {m for m, path in modules().items()  # the core's modules that import Beam when imported
                    if layer(m) == "core" and re.search(r"^(import|from) apache_beam", path.read_text(encoding="utf-8"),
                                                        re.MULTILINE)}
    assert {"benchwright.stage", "benchwright.writer", "benchwright.build"} <= beam_modules
    g = graph()
    found = sorted(f"{m} reaches {b}" for m in g if layer(m) in ("domain", "formats")
                   for b in nx.descendants(g, m) & beam_modules)
    assert not found, "\n".join(found)


def test_no_import_cycles():
    cycles = sorted(" -> ".join(c) for c in nx.simple_cycles(graph()))
    assert not cycles, "\n".join(cycles)


def test_the_checker_sees_imports_inside_functions(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from benchwright.build import build\n"
                 "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from benchwright import cli\n")
    known = {"benchwright.build": f, "benchwright.cli": f}
    assert imports(f, known) == {"benchwright.build"}
