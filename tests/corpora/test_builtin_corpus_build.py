"""The committed built-in corpus is exactly what scripts/builtin_corpus/build.py generates."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.paths import REPO_ROOT

BUILD = REPO_ROOT / "scripts" / "builtin_corpus" / "build.py"


def test_builtin_corpus_is_up_to_date(tmp_path: Path) -> None:
    # Run from an unrelated directory: the script must locate the repo from its own path.
    proc = subprocess.run(
        [sys.executable, str(BUILD), "--check"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, (
        "built-in corpus is stale; rebuild with `python scripts/builtin_corpus/build.py`\n"
        + proc.stdout
        + proc.stderr
    )
