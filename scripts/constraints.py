"""Write constraints.txt: the exact version of every distribution ``benchwright[test,torch,dataflow]`` needs,
read from an environment where that install works (``make constraints`` runs it with the project's
Python, after ``make test`` or ``make setup`` installed everything).

``scripts/setup.sh`` installs with ``pip install -c constraints.txt``: with every version fixed, pip has
one candidate per distribution and nothing to backtrack over (a fresh resolution backtracked for more
than 10 minutes between s3fs, aiobotocore and botocore). After adding a dependency to pyproject.toml:
install it into the environment (``.venv/bin/python -m pip install -e '.[test,torch,dataflow]'``), run
``make constraints``, and commit constraints.txt with pyproject.toml. ``--check`` only says whether
constraints.txt is what this environment gives (exit 1 when not).

The walk is over the installed distributions' own requirement metadata (importlib.metadata), markers
evaluated for this interpreter, so the file holds what the project needs and nothing else installed by
hand. Local version labels (torch's "+cpu") are dropped: ``torch==2.13.0`` is met by the CPU build and
the default one alike.
"""
from __future__ import annotations

import argparse
import platform
import sys
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "constraints.txt"
EXTRAS = ("test", "torch", "dataflow")


def pinned(root: str = "benchwright", extras: tuple[str, ...] = EXTRAS) -> dict[str, str]:
    """{canonical name: installed version} of every distribution ``root[extras]`` needs, transitively;
    raises when one is missing or its installed version does not meet a requirement on it."""
    environment = default_environment()
    found: dict[str, str] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [(Requirement(f"{root}[{','.join(extras)}]"), None)]
    while todo:
        req, wanted_by = todo.pop()
        name = canonicalize_name(req.name)
        key = (name, frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = distribution(req.name)
        except PackageNotFoundError:
            raise SystemExit(f"{req} (wanted by {wanted_by or 'the project'}) is not installed here; install "
                             f"the project with its extras first: pip install -e '.[{','.join(EXTRAS)}]'") from None
        version = Version(dist.version)
        if req.specifier and not req.specifier.contains(version, prereleases=True):
            raise SystemExit(f"{dist.metadata['Name']} {version} does not meet {req} (wanted by {wanted_by})")
        if name != canonicalize_name(root):
            found[name] = version.public
        for text in dist.requires or ():
            child = Requirement(text)
            if child.marker is None or any(child.marker.evaluate({**environment, "extra": extra})
                                           for extra in ("", *req.extras)):
                todo.append((child, f"{dist.metadata['Name']} {version}"))
    return dict(sorted(found.items()))


def render(versions: dict[str, str]) -> str:
    head = [
        "# Every distribution benchwright[test,torch,dataflow] needs, at the versions of one working install",
        f"# (CPython {platform.python_version()}, {platform.system()} {platform.machine()}). scripts/setup.sh installs",
        "# with `pip install -c constraints.txt`, so pip resolves at once. Regenerate after changing the",
        "# dependencies in pyproject.toml: `make constraints` (scripts/constraints.py says how).",
    ]
    return "\n".join(head + [f"{name}=={version}" for name, version in versions.items()]) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    ap.add_argument("--check", action="store_true", help="only compare with constraints.txt (exit 1 if it differs)")
    ns = ap.parse_args(argv)
    text = render(pinned())
    if ns.check:
        old = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        body = [line for line in text.splitlines() if not line.startswith("#")]
        same = body == [line for line in old.splitlines() if not line.startswith("#")]
        print(f"{TARGET.name} is {'up to date' if same else 'NOT what this environment gives: run make constraints'}")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.name}: {len(text.splitlines()) - 4} distributions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
