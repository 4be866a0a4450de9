"""Run commands in a git clone of the repository as a user would: the venv's tools on PATH,
the clone's own code (the code DVC hashes), an answer cache inside the clone, no tracking URI
from the caller's environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def clone_env(root: Path) -> dict[str, str]:
    """The environment for commands in the clone ``root``."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(root / "src")  # the clone's code, not the editable install's
    env["COMPRESSBENCH_ANSWER_CACHE"] = str(root / ".cache" / "answers.sqlite")
    env.pop("MLFLOW_TRACKING_URI", None)
    return env


def run_in(root: Path, *args: str, timeout: int = 1800) -> subprocess.CompletedProcess[str]:
    """Run ``args`` in ``root``; fail the test with the command and its output unless it exits 0."""
    proc = subprocess.run(
        args, cwd=root, env=clone_env(root), capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, f"{' '.join(args)} in {root}:\n{proc.stdout}{proc.stderr}"
    return proc
