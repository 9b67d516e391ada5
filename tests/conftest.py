"""Shared test fixtures. Real public samples live in tests/fixtures/ (see its README for sources and licences)."""
import os
import resource
from pathlib import Path

import pytest

# the hostile corpus hooks hold the datasets' own checks: their asserts say what differed, as a test's do
pytest.register_assert_rewrite("tests.hostile")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "tests" / "fixtures"


# BENCHWRIGHT_TEST_CPU_LOG=FILE: each test's CPU seconds (its process's and every child it waited for: the builds
# it runs in a subprocess or a forked child), a line "<node id>\t<seconds>" per test, appended. The suite is
# CPU-bound on 2 cores, so this, not --durations' wall time, says what a test costs. A module or session
# fixture is counted in the first test that needs it.
_CPU_LOG = os.environ.get("BENCHWRIGHT_TEST_CPU_LOG")


def _cpu_seconds() -> float:
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


if _CPU_LOG:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        before = _cpu_seconds()
        yield
        with open(_CPU_LOG, "a", encoding="utf-8") as log:
            log.write(f"{item.nodeid}\t{_cpu_seconds() - before:.2f}\n")


def pytest_collection_modifyitems(config, items):
    """The test files slowest first (``tests/file_seconds.json``, refreshed by ``scripts/test_seconds.py``),
    each file's tests in their own order. ``make test`` hands whole files to its workers in this order
    (``--dist loadfile --no-loadscope-reorder``; xdist's own order is by number of tests), so a long file does
    not start last and keep one worker busy while the other has nothing left. A file not in the table (new)
    runs first."""
    import json

    seconds = json.loads((REPO_ROOT / "tests" / "file_seconds.json").read_text(encoding="utf-8"))
    unmeasured = max(seconds.values(), default=0.0) + 1
    order = {item: i for i, item in enumerate(items)}
    items.sort(key=lambda item: (-seconds.get(item.nodeid.split("::")[0], unmeasured), order[item]))


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def kitti_dir(fixtures_dir) -> Path:
    return fixtures_dir / "kitti" / "training"


@pytest.fixture(scope="session")
def wordeval_text_build(tmp_path_factory) -> Path:
    """WordEval's tiny source plus a text-only unit, built once per run by the CLI in a subprocess (the
    harness, Lite, baseline and progress tests share it, in whichever pytest-xdist worker they run)."""
    from tests.quality_builds import made_once
    from tests.wordeval_helpers import build_tiny_with_text_units

    return made_once("wordeval-text", tmp_path_factory, build_tiny_with_text_units)


@pytest.fixture(scope="session")
def wordeval_cases(tmp_path_factory) -> dict:
    """Every WordEval catalogue case (``cases.build_all()``: ~70 CPU-s), made once per run and shared by the
    pytest-xdist workers (the catalogue, coverage, gates and oracle tests; ``build_all`` alone memoises per process)."""
    from benchwright.wordeval.cases import build_all
    from tests.quality_builds import made_once

    return made_once("wordeval-cases", tmp_path_factory, lambda _: build_all())


@pytest.fixture(scope="session")
def moto_server():
    """A local S3-compatible server (moto's server mode on 127.0.0.1) for this test process, started when a test
    first needs one and stopped at the end of the run; yields its URL. The test files that use object storage
    share it (``s3_endpoint`` in tests/test_object_storage.py empties it for each module and points the AWS
    environment at it), rather than each starting its own."""
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the moto S3 server did not start")
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
