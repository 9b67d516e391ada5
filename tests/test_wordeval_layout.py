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
        {"set_core_property", "char_style_equivalent"}
