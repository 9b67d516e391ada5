"""WordEval's domain package has the layout every dataset shares (docs/ADDING_A_DATASET.md)."""
from __future__ import annotations

from pathlib import Path

import benchwright

CORE = Path(benchwright.__file__).parent
DOMAIN = CORE / "wordeval"


def _modules(folder: Path) -> set[str]:
    return {p.stem for p in folder.glob("*.py") if p.stem != "__init__"} | \
        {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}


def test_no_domain_module_shadows_a_core_module():
    # ``benchwright.wordeval.build`` next to the core's ``benchwright.build`` read as the same thing
    assert not (_modules(DOMAIN) & {p.stem for p in CORE.glob("*.py")})


def test_ooxml_is_a_format_declared_with_its_schemas():
    import tomllib

    cfg = tomllib.loads((CORE.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    ooxml = CORE / "formats" / "ooxml"
    assert (ooxml / "__init__.py").is_file() and not (CORE / "ooxml").exists()
    assert "benchwright.formats.ooxml" in cfg["packages"] and "benchwright.ooxml" not in cfg["packages"]
    # the packaged XSDs the validator and schema_order read ship with the package
    assert "xsd/*" in cfg["package-data"]["benchwright.formats.ooxml"]
    assert (ooxml / "xsd" / "wml.xsd").is_file()


def test_operations_are_split_by_subsystem():
    # one module per catalogue/units/NN_<subsystem>.yaml; each unit's operation lives in its
    # subsystem's module, or is shared (the generic set_property, or another subsystem's command)
    from benchwright.wordeval import ops
    from benchwright.wordeval.catalogue import SUBSYSTEMS, load_catalogue

    units = sorted((DOMAIN / "catalogue" / "units").glob("*.yaml"))
    assert [p.stem.split("_", 1)[1] for p in units] == list(SUBSYSTEMS)
    assert {m.__name__.rsplit(".", 1)[1] for m in ops.SUBSYSTEM_MODULES} == set(SUBSYSTEMS) | {"generic"}
    assert not (DOMAIN / "ops.py").exists()
    home = {name: fn.__module__.rsplit(".", 1)[1] for name, fn in ops.OPERATIONS.items()}
    used_by = {}
    for u in load_catalogue().units.values():
        used_by.setdefault(u["operation"], set()).add(u["subsystem"])
    for name, subsystems in used_by.items():
        assert home[name] == "generic" or home[name] in subsystems, (name, home[name], subsystems)
    # every other operation is used by a unit of the subsystem whose module holds it (the character
    # style alternative is the self-test's equivalent of a direct character property)
    assert {n for n, m in home.items() if m != "generic" and m not in used_by.get(n, ())} <= \
        {"char_style_equivalent"}


def _defined_names(path: Path) -> list[str]:
    """Top-level functions and classes and their methods, but operations (the catalogue calls them by name)."""
    import ast
    out = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and any("operation" in ast.unparse(d) for d in node.decorator_list):
            continue
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.append(node.name)
        if isinstance(node, ast.ClassDef):
            out += [m.name for m in node.body if isinstance(m, ast.FunctionDef) and not m.name.startswith("__")]
    return out


def test_no_dead_code_in_the_wordeval_domain_and_the_ooxml_format():
    # every function, class and method is used somewhere in the repository besides its own
    # definition and its module's __all__ (WordDoc.runs_for, libreoffice_opens ... were not)
    import re

    repo = CORE.parent
    folders = ("benchwright", "schemas", "loaders", "validation", "cards", "evaluation", "baselines", "pipelines",
               "benchmarks", "tests")
    sources = [re.sub(r"__all__ = \[.*?\]", "", p.read_text(encoding="utf-8"), flags=re.S)
               for folder in folders for p in (repo / folder).rglob("*.py")]
    # every identifier used anywhere, read once: a name (all word characters) is used where it is a whole
    # word not preceded by "def " or "class " (one pass, not one search of every file per name)
    used = {m.group() for src in sources for m in re.finditer(r"(?<!def )(?<!class )\b\w+", src)}
    dead = []
    for path in sorted(DOMAIN.rglob("*.py")) + sorted((CORE / "formats" / "ooxml").glob("*.py")):
        for name in _defined_names(path):
            assert re.fullmatch(r"\w+", name), name
            if name not in used:
                dead.append(f"{path.relative_to(repo)}: {name}")
    assert not dead, dead


# What an operation module must not do itself (issue 26.7): the OOXML accessors in formats/ooxml find,
# make and move elements, as python-docx's oxml layer does for its proxies.
_XML_MODULES = ("lxml", "docx.oxml", "copy")                    # element trees, python-docx's XML layer, deep copies
_XML_HELPERS = {"qn", "w_el", "border_el", "get_or_add", "insert_child", "etree", "OxmlElement", "SubElement",
                "parse_xml", "deepcopy"}
# lxml element methods; append / insert / remove too, though lists have them: an operation module builds its
# lists without them (comprehensions, +=), so any call is an element's
_ELEMENT_CALLS = {"find", "findall", "iterfind", "iter", "xpath", "addnext", "addprevious", "getparent", "getnext",
                  "getprevious", "itersiblings", "iterchildren", "iterancestors", "getroottree", "remove", "append",
                  "insert", "makeelement", "set"}
_ELEMENT_ATTRIBUTES = {"tag", "attrib", "nsmap"}


def _raw_xml(path: Path) -> list[str]:
    """Where a module imports an XML library or calls an element method or XML helper."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        found |= {f"{node.lineno}: import {n}" for n in names if n.split(".")[0] in _XML_MODULES
                  or n.startswith("docx.oxml")}
        if isinstance(node, ast.ImportFrom):
            found |= {f"{node.lineno}: import {a.name}" for a in node.names if a.name in _XML_HELPERS}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _ELEMENT_CALLS:
            found.add(f"{node.lineno}: .{node.func.attr}()")
        if isinstance(node, ast.Attribute) and node.attr in _ELEMENT_ATTRIBUTES | {"deepcopy", "xpath"}:
            found.add(f"{node.lineno}: .{node.attr}")
        if isinstance(node, ast.Name) and node.id in _XML_HELPERS:
            found.add(f"{node.lineno}: {node.id}")
    return sorted(found)


def test_operations_keep_the_xml_in_the_ooxml_format():
    # issue 26.7: an operation calls python-docx's proxies or formats/ooxml's accessors (paragraph.py, run.py,
    # table.py, revisions.py, comments.py, fields.py ...), as python-docx's proxies leave the XML to docx.oxml;
    # no operation module finds, makes or moves an element itself. No module is exempt.
    modules = sorted((DOMAIN / "ops").glob("*.py"))
    assert len(modules) == 18
    found = {p.name: hits for p in modules if (hits := _raw_xml(p))}
    assert not found, found


def test_the_raw_xml_check_finds_what_the_operations_did_before():
    # the check above fails on the operation code issue 26.7 moved (a w:ins made and placed in place, a
    # table border set, an lxml import), and passes the same steps through the accessors
    import tempfile

    raw = (
        "from lxml import etree\n"
        "from benchwright.formats.ooxml.ns import qn\n"
        "def op(wd, target, params):\n"
        "    ins = w_el('w:ins')\n"
        "    ins.set(qn('w:id'), '1')\n"
        "    runs[0].addprevious(ins)\n"
        "    tbl.find(qn('w:tblPr')).xpath('./w:tblBorders')\n"
        "    el.tag = 'x'\n")
    clean = (
        "from benchwright.formats.ooxml import revisions as oxml\n"
        "def op(wd, target, params):\n"
        "    oxml.delete_runs(runs_for(wd, target), wd.next_revision_id(), AUTHOR)\n")
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "raw.py").write_text(raw, encoding="utf-8")
        (Path(d) / "clean.py").write_text(clean, encoding="utf-8")
        hits = _raw_xml(Path(d) / "raw.py")
        assert not _raw_xml(Path(d) / "clean.py")
    assert {"1: import lxml", "2: import qn", "4: w_el", "5: .set()", "5: qn", "6: .addprevious()", "7: .find()",
            "7: .xpath()", "8: .tag"} <= set(hits), hits
