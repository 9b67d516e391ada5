"""Layers import downward only, and no modules import each other in a circle (imports inside
functions included: they hide cycles, they do not remove them)."""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

REPO = Path(__file__).resolve().parents[1]
# folder -> import package (pyproject.toml's package-dir)
FOLDERS = {"benchwright": "benchwright", "schemas": "benchwright.schemas", "loaders": "benchwright.loaders",
           "validation": "benchwright.validation", "cards": "benchwright.cards",
           "evaluation": "benchwright.evaluation", "baselines": "benchwright.baselines",
           "pipelines": "benchwright.pipelines", "benchmarks": "benchwright.benchmarks"}
# Bottom to top. The core's infrastructure; the schemas; the datasets' domain code and file formats
# (no Beam); then the layers. A module imports from its own rank or below.
DOMAIN = ("benchwright.geometry", "benchwright.wordeval",
          "benchwright.formats", "benchwright.wildbox", "benchwright.workspace_bench", "benchwright.vlm_unlearning")
RANKS = {"core": 0, "schemas": 1, "domain": 2, "loaders": 3, "validation": 4, "cards": 5, "evaluation": 6,
         "baselines": 7, "pipelines": 8, "benchmarks": 9, "cli": 9}


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


def test_no_import_cycles():
    cycles = sorted(" -> ".join(c) for c in nx.simple_cycles(graph()))
    assert not cycles, "\n".join(cycles)


def test_the_checker_sees_imports_inside_functions(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from benchwright.build import build\n"
                 "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from benchwright import cli\n")
    known = {"benchwright.build": f, "benchwright.cli": f}
    assert imports(f, known) == {"benchwright.build"}
