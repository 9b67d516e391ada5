"""Shared test fixtures. Real public samples live in ../shared/fixtures beside the checkout."""
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("BENCHWRIGHT_SHARED", REPO_ROOT.parent / "shared"))
FIXTURES = SHARED / "fixtures"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.fail(f"shared fixtures not found at {FIXTURES}; set BENCHWRIGHT_SHARED")
    return FIXTURES


@pytest.fixture(scope="session")
def kitti_dir(fixtures_dir) -> Path:
    return fixtures_dir / "kitti" / "training"
