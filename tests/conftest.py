"""Shared fixtures: where the read-only reference material lives (../shared beside the repo)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"


def _require(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent (reference material lives in ../shared beside the repo)")
    return path


@pytest.fixture(scope="session")
def ref_dir() -> Path:
    """../shared/ref: spec, scorer reference cases, released probe rows."""
    return _require(SHARED / "ref")


@pytest.fixture(scope="session")
def corpora_dir() -> Path:
    """../shared/corpora: real SGD and MultiWOZ 2.2 files (gzipped upstream JSON)."""
    return _require(SHARED / "corpora")
