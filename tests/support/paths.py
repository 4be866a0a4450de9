"""Where things are: the repository root, tests/ itself and the reference material beside the
repository (../shared)."""

from __future__ import annotations

from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = TESTS_DIR.parent
SHARED = REPO_ROOT.parent / "shared"
