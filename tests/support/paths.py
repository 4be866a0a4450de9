"""Where things are: the repository root, tests/ itself, the TPBench release rows kept in the
repository (tests/data/tpbench_release) and the reference material beside the repository
(../shared; ``COMPRESSBENCH_SHARED`` points the tests elsewhere)."""

from __future__ import annotations

import os
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = TESTS_DIR.parent
RELEASE = TESTS_DIR / "data" / "tpbench_release"
SHARED = Path(os.environ.get("COMPRESSBENCH_SHARED") or REPO_ROOT.parent / "shared")
