"""Fixtures of the doctor's tests: parameter files, real local HTTP servers, a closed port, the
CLI run as a subprocess with a clean environment."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from support import http_server
from support.http_server import Routes, start_server
from support.paths import REPO_ROOT

Completed = subprocess.CompletedProcess[str]


@pytest.fixture
def serve() -> Iterator[Callable[[Routes], str]]:
    """Start real HTTP servers answering ``routes`` (shut down after the test); base URLs."""
    servers: list[ThreadingHTTPServer] = []

    def start(routes: Routes) -> str:
        server, url = start_server(routes)
        servers.append(server)
        return url

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def closed_port() -> int:
    return http_server.free_port()


@pytest.fixture
def write_params(tmp_path: Path) -> Callable[..., Path]:
    """``params.yaml`` in ``tmp_path``: the shipped one with ``reader`` / ``tracking`` changes."""

    def write(reader: Mapping[str, Any] | None = None, **top: Any) -> Path:
        raw = yaml.safe_load((REPO_ROOT / "params.yaml").read_text(encoding="utf-8"))
        raw["reader"].update(reader or {})
        raw.update(top)
        path = tmp_path / "params.yaml"
        path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
        return path

    return write


@pytest.fixture
def clean_env(tmp_path: Path) -> dict[str, str]:
    """The environment without tokens, servers or tracking URIs; an empty HF_HOME."""
    drop = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_ENDPOINT", "HF_HUB_OFFLINE", "HF_HUB_CACHE")
    drop += ("OPENAI_BASE_URL", "OPENAI_API_KEY", "MLFLOW_TRACKING_URI")
    drop += ("COMPRESSBENCH_IMAGE_LOCK_SHA256", "COMPRESSBENCH_BASE_DIGEST")
    drop += ("COMPRESSBENCH_IMAGE_TARGET", "COMPRESSBENCH_IMAGES_LOCK")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["HF_HOME"] = str(tmp_path / "hf_home")
    return env


@pytest.fixture
def doctor(tmp_path: Path, clean_env: dict[str, str]) -> Callable[..., Completed]:
    """Run ``compressbench doctor ARGS`` for real in ``tmp_path`` (``env`` added to the clean)."""

    def run(*args: str, env: Mapping[str, str] | None = None) -> Completed:
        cmd = [str(Path(sys.executable).parent / "compressbench"), "doctor", *args]
        return subprocess.run(
            cmd,
            cwd=tmp_path,
            env={**clean_env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=300,
        )

    return run
