"""Code size (issue 26.7): no file of the package's folders is over 800 lines but the synthetic
generators (files named ``*synth*``, which write test data), and no function is over 80 lines. Pure
AST over the source files: nothing is imported or built."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("benchwright", "pipelines", "loaders", "validation", "schemas", "cards", "baselines", "evaluation")
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80
# Functions allowed over the bound, each with why; an entry that no longer names an offender fails the test, so
# the list cannot go stale. (Issue 26's WildBox annotation, WildBox parser and CLI parser were split: none left.)
ALLOWED_LONG_FUNCTIONS: set[str] = set()


def _sources() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (REPO / folder).rglob("*.py") if "synth" not in p.name)


def _functions(tree: ast.AST, prefix: str = ""):
    """(qualified name, lines) of every function and method, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node.end_lineno - node.lineno + 1
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")
        else:
            yield from _functions(node, prefix)


def _long_functions() -> dict[str, int]:
    out = {}
    for path in _sources():
        rel = path.relative_to(REPO).as_posix()
        for name, lines in _functions(ast.parse(path.read_text(encoding="utf-8"), rel)):
            if lines > MAX_FUNCTION_LINES:
                out[f"{rel}:{name}"] = lines
    return out


def test_no_file_is_over_800_lines_but_the_synthetic_generators():
    long = [f"{p.relative_to(REPO).as_posix()} ({n} lines)" for p in _sources()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES]
    assert not long, f"files over {MAX_FILE_LINES} lines: split them along their sections: {long}"


def test_no_function_is_over_80_lines():
    long = _long_functions()
    offenders = [f"{name} ({n} lines)" for name, n in sorted(long.items()) if name not in ALLOWED_LONG_FUNCTIONS]
    assert not offenders, f"functions over {MAX_FUNCTION_LINES} lines: split them into named steps: {offenders}"
    stale = sorted(ALLOWED_LONG_FUNCTIONS - set(long))
    assert not stale, f"allowed but no longer over {MAX_FUNCTION_LINES} lines: take them off the list: {stale}"
