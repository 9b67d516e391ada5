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
