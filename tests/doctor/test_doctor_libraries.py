"""Checks ``libraries`` and ``reader`` load each backend's declared libraries for real: a shared
library the dynamic loader cannot find is one FAIL line naming it; the readers of KEEP-Bench's
generative compressors are checked beside ``params.yaml``'s reader."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from compressbench.readers.libraries import backend_libraries, load_failure
from compressbench.readers.registry import reader_names

Doctor = Callable[..., subprocess.CompletedProcess[str]]
llama_cpp = pytest.importorskip("llama_cpp")


@pytest.fixture
def libllama_alone(tmp_path: Path) -> Path:
    """A folder holding llama.cpp's ``libllama.so`` without the ``libggml`` libraries it links:
    loading it fails in the dynamic loader, as ``libgomp.so.1`` did in the cpu image."""
    lib = Path(llama_cpp.__file__).parent / "lib"
    alone = tmp_path / "lib"
    alone.mkdir()
    shutil.copy(lib / "libllama.so", alone / "libllama.so")
    return alone


def test_every_backend_declares_what_it_loads() -> None:
    for name in reader_names():
        assert backend_libraries(name) or name == "mock", name  # the test reader loads nothing
    assert backend_libraries("llamacpp") == ("llama_cpp",)
    assert backend_libraries("mock") == ()


def test_load_failure_names_a_missing_module() -> None:
    assert load_failure(("json",)) is None
    text = load_failure(("json", "compressbench_no_such_module"))
    assert text == (
        "cannot load compressbench_no_such_module: module compressbench_no_such_module is not "
        "installed"
    )


def test_loading_is_judged_in_a_fresh_interpreter(
    libllama_alone: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """llama_cpp is already imported in this process (above), as torch's libgomp.so.1 was in
    doctor's before a llama.cpp load: a stage process that imports llama_cpp alone still fails,
    and so must the check."""
    monkeypatch.setenv("LLAMA_CPP_LIB_PATH", str(libllama_alone))
    text = load_failure(("llama_cpp",))
    assert text is not None and text.startswith("cannot load llama_cpp: Failed to load shared")
    assert "libggml.so.0: cannot open shared object file" in text


def test_libraries_pass_on_this_install(doctor: Doctor) -> None:
    proc = doctor("--only", "libraries")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = proc.stdout.strip()
    assert line.startswith("PASS  libraries")
    assert "llamacpp loads" in line and "hf loads" in line and "presses loads" in line


def test_a_missing_shared_library_is_one_fail_line(
    doctor: Doctor, write_params: Callable[..., Path], libllama_alone: Path
) -> None:
    params = write_params()  # the shipped reader: llamacpp, the packaged 1.5B
    proc = doctor("--params", str(params), "--only", "reader",
                  env={"LLAMA_CPP_LIB_PATH": str(libllama_alone)})  # fmt: skip
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        f"FAIL  reader      reader llamacpp: cannot load llama_cpp: Failed to load shared "
        f"library '{libllama_alone / 'libllama.so'}': libggml.so.0: cannot open shared object "
        "file: No such file or directory"
    ]
    assert "Traceback" not in proc.stderr
    proc = doctor("--only", "libraries", env={"LLAMA_CPP_LIB_PATH": str(libllama_alone)})
    assert proc.returncode == 1
    assert proc.stdout.startswith("FAIL  libraries   llamacpp: cannot load llama_cpp:")
    assert "libggml.so.0: cannot open shared object file" in proc.stdout


def test_keep_compressor_reader_is_checked_too(
    doctor: Doctor, write_params: Callable[..., Path], closed_port: int
) -> None:
    """``reader`` is fine; KEEP's ``llm`` compressor asks a server that is not there."""
    keep = {
        "compressors": {"llm": {"backend": "openai", "model": "qwen"}},
        "cases": "builtin",
    }
    params = write_params(keepbench=keep)
    url = f"http://127.0.0.1:{closed_port}/v1"
    proc = doctor("--params", str(params), "--only", "reader", env={"OPENAI_BASE_URL": url})
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        f"FAIL  reader      keepbench.compressors.llm (openai): {url}/models unreachable"
    )


def test_keep_compressor_on_the_same_reader_is_checked_once(
    doctor: Doctor, write_params: Callable[..., Path]
) -> None:
    proc = doctor("--params", str(write_params()), "--only", "reader")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("packaged qwen2.5-coder-1.5b-instruct") == 1
