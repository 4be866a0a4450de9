"""A real llama.cpp OpenAI-compatible server (``llama_cpp.server``) on SmolLM2-135M's GGUF, on a
free local port: the ``llama_server`` fixture (tests/conftest.py) runs one per test module."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from support.http_server import free_port
from support.processes import stop


def serve_smollm2() -> Iterator[str]:
    """Start the server, yield its ``/v1`` base URL once it answers, stop it afterwards; skips
    when llama-cpp-python[server] is not installed."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python[server] is not installed")
    from compressbench.readers.smollm import find_gguf

    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(find_gguf()),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}")
            try:
                with urllib.request.urlopen(url + "/v1/models", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not become ready in 120 s")
            time.sleep(0.3)
        yield url + "/v1"
    finally:
        stop(proc, timeout=20)
