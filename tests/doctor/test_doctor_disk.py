"""Check ``disk`` on a real small filesystem: a 1 MiB tmpfs mounted for the test."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from compressbench.doctor.base import Context, Options, Result
from compressbench.doctor.checks import run_one
from support.http_server import Routes, json_route

LLAMA = {"backend": "hf", "model": "meta-llama/Llama-3.1-8B-Instruct", "dtype": "bfloat16"}
TINY = {"model_type": "llama", "vocab_size": 64, "hidden_size": 16, "intermediate_size": 32,
        "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1}  # fmt: skip


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs (skipped, saying why, where this process may not mount one)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    cmd = ["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs", str(mnt)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except OSError as exc:
        pytest.skip(f"no mount command here ({exc}): the full-disk test needs a 1 MiB tmpfs")
    if proc.returncode != 0:
        pytest.skip(f"mounting a 1 MiB tmpfs is not permitted here: {proc.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True, timeout=30)


@pytest.fixture
def offline_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, closed_port: int) -> None:
    """The Hub unreachable and an empty Hub cache: sizes come from the table of known models."""
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))


def disk(params: Path, cache: Path) -> Result:
    return run_one("disk", Context(Options(params=params, cache_dir=cache, timeout=2.0)))


def test_llama_weights_do_not_fit_a_full_disk(
    small_fs: Path, offline_hub: None, write_params: Callable[..., Path]
) -> None:
    result = disk(write_params(LLAMA), small_fs)
    assert result.status == "FAIL", result.summary
    assert result.summary.startswith(f"{small_fs}: 1.0 MiB free < 15.7 GiB needed")
    assert "compressbench's table of known models" in result.summary
    assert result.figures["weights_bytes"] == 2 * 8_029_995_008  # parameters x bf16


def test_a_model_that_fits_passes_until_the_disk_is_filled(
    small_fs: Path,
    serve: Callable[[Routes], str],
    write_params: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    hub = serve({"/org/tiny/resolve/main/config.json": json_route(TINY, ETag='"e"')})
    monkeypatch.setenv("HF_ENDPOINT", hub)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    params = write_params({"backend": "hf", "model": "org/tiny", "dtype": "float32"})
    result = disk(params, small_fs)
    assert result.status == "PASS", result.summary
    assert "org/tiny config.json" in result.summary and "none cached" in result.summary
    with contextlib.suppress(OSError), (small_fs / "filler").open("wb") as f:
        f.write(b"\1" * (2 << 20))  # more than fits: the tmpfs ends full (ENOSPC)
    result = disk(params, small_fs)
    assert result.status == "FAIL" and "0.0 MiB free <" in result.summary, result.summary


def test_weights_already_cached_need_no_room(
    small_fs: Path, offline_hub: None, write_params: Callable[..., Path]
) -> None:
    blobs = small_fs / "models--meta-llama--Llama-3.1-8B-Instruct" / "blobs"
    blobs.mkdir(parents=True)
    weights = 2 * 8_029_995_008
    with (blobs / "weights").open("wb") as f:  # sparse: a cached copy's size, no room taken
        f.truncate(weights)
    result = disk(write_params(LLAMA), small_fs)
    assert result.status == "PASS", result.summary
    assert "nothing to fetch" in result.summary and "15.0 GiB already there" in result.summary


def test_server_reader_skips(write_params: Callable[..., Path], tmp_path: Path) -> None:
    result = disk(write_params({"backend": "openai", "model": "m"}), tmp_path)
    assert result.status == "SKIP" and "the weights live on the server" in result.summary
