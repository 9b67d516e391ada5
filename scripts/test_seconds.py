"""Writes tests/file_seconds.json, each test file's wall seconds, from a pytest JUnit XML report:

    python scripts/test_seconds.py REPORT.xml

``make test`` runs the files slowest first (tests/conftest.py orders them by this table), so that on two
workers the long files do not start last and leave one worker alone at the end. Refresh it from an idle
full run after the suite's costs change; a file missing from it runs first (assumed slow until measured)."""
from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

TABLE = Path(__file__).resolve().parents[1] / "tests" / "file_seconds.json"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    seconds: dict[str, float] = defaultdict(float)
    for case in ET.parse(argv[0]).getroot().iter("testcase"):
        # classname "tests.test_contract" (or "tests.test_x.TestClass")
        module = case.get("classname", "").split(".")
        path = "/".join(module[:2]) + ".py" if len(module) >= 2 else None
        if path:
            seconds[path] += float(case.get("time") or 0)
    TABLE.write_text(json.dumps({k: round(v, 1) for k, v in sorted(seconds.items())}, indent=1) + "\n",
                     encoding="utf-8")
    print(f"{TABLE.name}: {len(seconds)} files, {sum(seconds.values()):,.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
