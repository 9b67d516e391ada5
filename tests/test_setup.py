"""The set-up a newcomer runs (issue 23.6, 22.19): each make target installs only what it needs and says
what first, at the versions in constraints.txt, which pins every distribution the project needs (so pip
has one candidate each and resolves at once)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]


def plan(purpose: str) -> str:
    env = {**os.environ, "SETUP_PLAN": "1", "PY": "/nonexistent/bin/python"}  # as on a machine with nothing yet
    done = subprocess.run(["bash", "scripts/setup.sh", purpose], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_build_all_installs_what_building_needs_and_says_so_and_test_adds_the_rest():
    dry = subprocess.run(["make", "-n", "build-all", "test"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0
    assert "bash scripts/setup.sh build" in dry.stdout and "bash scripts/setup.sh test" in dry.stdout
    build, test = plan("build"), plan("test")
    assert build.startswith("setup (build) installs what is missing of:")
    assert "libreoffice-writer-nogui" in build and "with [torch,dask]," in build  # --runner dask needs dask.distributed
    assert "chromium" not in build and "dataflow" not in build and "test" not in build.split("[")[1].split("]")[0]
    assert "chromium" in test and "with [torch,dask,test,dataflow]," in test
    assert "at the versions in constraints.txt" in build


def test_constraints_pin_every_distribution_the_project_needs_within_its_own_pins():
    spec = importlib.util.spec_from_file_location("constraints_script", REPO / "scripts" / "constraints.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    pins = {}
    for line in (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    needed = script.pinned()  # every distribution benchwright[test,torch,dataflow] needs, from this environment
    missing = sorted(set(needed) - set(pins))
    assert not missing, f"not in constraints.txt (run make constraints): {missing}"
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    direct = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    for text in direct:
        req = Requirement(text)
        assert req.specifier.contains(pins[canonicalize_name(req.name)], prereleases=True), (text, pins[canonicalize_name(req.name)])


def test_every_subpackage_is_listed_so_a_wheel_ships_it():
    # setuptools' explicit ``packages`` list puts only what it names into a wheel (an editable install
    # finds the rest on disk, so nothing here noticed that wordeval/ops and wordeval/agents were missing)
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    found = set()
    for package, folder in cfg["package-dir"].items():
        for init in (REPO / folder).rglob("__init__.py"):
            found.add(".".join([package, *init.parent.relative_to(REPO / folder).parts]))
    assert not found - set(cfg["packages"]), sorted(found - set(cfg["packages"]))
