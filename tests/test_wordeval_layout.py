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
