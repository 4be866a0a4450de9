"""Checks ``gpu`` and ``gpu-memory``: this machine's real inventory (no GPU: one FAIL line each
for a GPU reader), and the verdicts for an H200's inventory as ``scripts/gpu_check.py`` saw it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from compressbench.doctor.base import Context, Options, Result
from compressbench.doctor.checks import run_one
from compressbench.doctor.gpu import Gpu, Inventory, judge_gpu, judge_memory, memory_need
from support.paths import REPO_ROOT

GIB = 1 << 30
LLAMA = {"backend": "hf", "model": "meta-llama/Llama-3.1-8B-Instruct", "dtype": "bfloat16"}
H200 = Inventory((Gpu("NVIDIA H200", 150_754_820_096, 150_000_000_000),), "2.11.0+cu130",
                 "13.0", "580.65.06")  # fmt: skip
MEASURED = json.loads((REPO_ROOT / "benchmarks/results/gpu_check_h200_2026-11-30.json").read_text())


@pytest.fixture
def offline_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, closed_port: int) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))


def check(name: str, params: Path, **options: object) -> Result:
    return run_one(name, Context(Options(params=params, timeout=2.0, **options)))  # type: ignore[arg-type]


def test_no_gpu_here_fails_one_line_for_a_gpu_reader(
    write_params: Callable[..., Path], offline_hub: None
) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the no-GPU lines cannot show here")
    params = write_params(LLAMA)
    gpu = check("gpu", params)
    assert gpu.status == "FAIL"
    assert gpu.summary.startswith(f"no GPU visible to torch {torch.__version__} (")
    assert gpu.summary.endswith("reader hf runs the model on the GPU (--cpu-ok to run on CPU)")
    memory = check("gpu-memory", params)
    assert memory.status == "FAIL"
    assert memory.summary == (
        "no GPU; needs 17.4 GiB (weights 15.0 GiB + KV 912.0 MiB for 1 x 7,296 tokens, +10%)"
    )
    assert "\n" not in gpu.summary + memory.summary


def test_no_gpu_is_skipped_for_a_cpu_reader_or_with_cpu_ok(
    write_params: Callable[..., Path], offline_hub: None
) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    cpu_reader = write_params({"backend": "llamacpp", "model": "smollm2", "n_gpu_layers": 0})
    assert check("gpu", cpu_reader).status == "SKIP"
    assert "not needed" in check("gpu-memory", cpu_reader).summary
    offloading = write_params({"backend": "llamacpp", "model": "smollm2", "n_gpu_layers": -1})
    assert "n_gpu_layers -1" in check("gpu", offloading).summary
    hf = write_params(LLAMA)
    assert check("gpu", hf, cpu_ok=True).status == "SKIP"
    assert check("gpu-memory", hf, cpu_ok=True).status == "SKIP"


def test_an_h200_passes_with_its_figures() -> None:
    result = judge_gpu(H200, "reader hf runs the model on the GPU", cpu_ok=False)
    assert result.status == "PASS"
    assert result.summary == (
        "1 x NVIDIA H200 (140.4 GiB); torch 2.11.0+cu130, CUDA 13.0 build; driver 580.65.06"
    )
    assert result.figures["count"] == 1


def test_llama_need_matches_the_measured_h200_run(
    write_params: Callable[..., Path], offline_hub: None
) -> None:
    """The paper reader's weights and KV bytes per token as scripts/gpu_check.py measured them."""
    params = write_params({**LLAMA, "batch_size": 8, "max_input_tokens": 7168}, probes=["P1"])
    need = memory_need(Context(Options(params=params, timeout=2.0)))
    weights = MEASURED["decode_bound"]["weight_bytes"]  # the built model's own parameters
    kv_token = MEASURED["decode_bound"]["kv_bytes_per_token"]
    tokens = 8 * (7168 + 96)
    assert need.bytes == pytest.approx((weights + kv_token * tokens) * 1.10, rel=1e-4)
    assert "weights 15.0 GiB + KV 7.1 GiB for 8 x 7,264 tokens" in need.detail
    fits = judge_memory(H200, need)
    assert fits.status == "PASS" and fits.summary.startswith("GPU 0 NVIDIA H200: 139.7 GiB free")
    small = Inventory((Gpu("NVIDIA L4", 24 * GIB, 22 * GIB),), "2.11.0", "12.8", None)
    assert judge_memory(small, need).status == "FAIL"


def test_vllm_needs_its_share_of_the_gpu_free(
    write_params: Callable[..., Path], offline_hub: None
) -> None:
    params = write_params({**LLAMA, "backend": "vllm"})
    need = memory_need(Context(Options(params=params, timeout=2.0)))
    half_used = Inventory((Gpu("NVIDIA H200", 150 * GIB, 75 * GIB),), "2.11.0", "12.8", None)
    result = judge_memory(half_used, need)
    assert result.status == "FAIL" and "vLLM claims 90% at start" in result.summary
    assert "< 135.0 GiB needed" in result.summary
