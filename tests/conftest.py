"""Shared test fixtures. Real public samples live in tests/fixtures/ (see its README for sources and licences)."""
import os
from pathlib import Path

import pytest

# the hostile corpus hooks hold the datasets' own checks: their asserts say what differed, as a test's do
pytest.register_assert_rewrite("tests.hostile")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "tests" / "fixtures"


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
