"""Checks ``gpu`` (GPUs visible to torch, CUDA build, driver) and ``gpu-memory`` (free memory
for the configured model and batch).

Whether the configured reader needs a GPU follows its backend: ``hf`` and ``vllm`` run the
model on one (``--cpu-ok`` accepts an ``hf`` reader on CPU, as the tests run it), ``llamacpp``
only with ``n_gpu_layers`` != 0, ``openai`` never (the server holds the model). A check whose
reader needs no GPU SKIPs with that reason when none is visible.
"""

from __future__ import annotations

import dataclasses
import importlib
import shutil
import subprocess
from dataclasses import dataclass

from compressbench.doctor import model
from compressbench.doctor.base import FAIL, PASS, Context, Result, Skip, gib, one_line
from compressbench.readers.registry import backend

#: Share of the memory a reader may need beyond weights and KV cache (activations, allocator).
OVERHEAD = 1.10


@dataclass(frozen=True)
class Gpu:
    name: str
    total: int
    free: int


@dataclass(frozen=True)
class Inventory:
    """What torch sees: the GPUs, its version and CUDA build, and the driver (nvidia-smi)."""

    gpus: tuple[Gpu, ...]
    torch: str | None
    cuda_build: str | None
    driver: str | None


def driver_version() -> str | None:
    """The NVIDIA driver version from ``nvidia-smi`` (else pynvml), None when neither answers."""
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run(
                [smi, "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=10,
            )
            first = out.stdout.strip().splitlines()
            if out.returncode == 0 and first:
                return first[0].strip()
        except (OSError, subprocess.TimeoutExpired):
            pass
    try:
        pynvml = importlib.import_module("pynvml")  # nvidia-ml-py, where installed
        pynvml.nvmlInit()
        return str(pynvml.nvmlSystemGetDriverVersion())
    except Exception:
        return None


def inventory() -> Inventory:
    """The real machine's GPUs as torch sees them (CUDA initialised on each to read free memory)."""
    try:
        import torch
    except ImportError:
        return Inventory((), None, None, driver_version())
    gpus: list[Gpu] = []
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            free, total = torch.cuda.mem_get_info(i)
            gpus.append(Gpu(torch.cuda.get_device_name(i), int(total), int(free)))
    return Inventory(tuple(gpus), torch.__version__, torch.version.cuda, driver_version())


def gpu_need(ctx: Context) -> str | None:
    """Why the configured reader needs a GPU, or None (invalid params: assume it does)."""
    try:
        spec = ctx.reader
    except Skip:
        return "assumed (the parameters are invalid)"
    return backend(spec.backend).gpu_use(dataclasses.asdict(spec))


def _inventory(ctx: Context) -> Inventory:
    found: Inventory = ctx.cached("gpu-inventory", inventory)
    return found


def _no_gpu(inv: Inventory) -> str:
    if inv.torch is None:
        return "no GPU: torch is not installed"
    build = f"CUDA {inv.cuda_build} build" if inv.cuda_build else "built without CUDA"
    driver = f"driver {inv.driver}" if inv.driver else "nvidia-smi not found"
    return f"no GPU visible to torch {inv.torch} ({build}; {driver})"


def judge_gpu(inv: Inventory, need: str | None, cpu_ok: bool) -> Result:
    """The ``gpu`` verdict for an inventory."""
    figures = {
        "count": len(inv.gpus),
        "gpus": [{"name": g.name, "total_bytes": g.total, "free_bytes": g.free} for g in inv.gpus],
        "torch": inv.torch,
        "cuda_build": inv.cuda_build,
        "driver": inv.driver,
    }
    if not inv.gpus:
        if need is None:
            raise Skip(f"{_no_gpu(inv)}; not needed by this reader")
        if cpu_ok:
            raise Skip(f"{_no_gpu(inv)}; --cpu-ok: the reader runs on CPU")
        return Result("gpu", FAIL, f"{_no_gpu(inv)}; {need} (--cpu-ok to run on CPU)", figures)
    names = sorted({g.name for g in inv.gpus})
    mem = ", ".join(gib(g.total) for g in inv.gpus)
    summary = (
        f"{len(inv.gpus)} x {' / '.join(names)} ({mem}); torch {inv.torch}, CUDA "
        f"{inv.cuda_build} build; driver {inv.driver or 'unknown (no nvidia-smi)'}"
    )
    return Result("gpu", PASS, summary, figures)


def check_gpu(ctx: Context) -> Result:
    return judge_gpu(_inventory(ctx), gpu_need(ctx), ctx.options.cpu_ok)


@dataclass(frozen=True)
class Need:
    """GPU memory the configured reader needs; ``floor``: what must be free at start (vLLM)."""

    bytes: int
    detail: str
    floor_share: float = 0.0


def memory_need(ctx: Context) -> Need:
    """Weights + KV cache of the longest batch, times :data:`OVERHEAD` (Skip: size unknown)."""
    spec = ctx.reader
    src = model.source(spec)
    size = model.size(ctx, src, spec)
    if size is None:
        raise Skip(f"size of {spec.model} unknown: {model.unknown_reason(ctx, src)}")
    answer = max((spec.max_new_tokens.get(p, 0) for p in ctx.params.block("probes")), default=0)
    reader = backend(spec.backend)  # how many sequences of how many tokens its KV cache holds
    batch, tokens = reader.kv_rows(spec.batch_size, spec.n_ctx, spec.max_input_tokens + answer)
    kv = (size.kv_per_token or 0) * batch * tokens
    kv_text = f"KV {gib(kv)} for {batch} x {tokens:,} tokens" if size.kv_per_token else "KV n/a"
    detail = f"weights {gib(size.weights)} + {kv_text}, +{OVERHEAD - 1:.0%}"
    return Need(int((size.weights + kv) * OVERHEAD), detail, reader.gpu_memory_floor)


def judge_memory(inv: Inventory, need: Need) -> Result:
    """The ``gpu-memory`` verdict: device 0 (where the readers load) against the need."""
    figures = {"need_bytes": need.bytes, "detail": need.detail}
    if not inv.gpus:
        return Result("gpu-memory", FAIL, f"no GPU; needs {gib(need.bytes)} ({need.detail})")
    gpu = inv.gpus[0]
    figures.update(free_bytes=gpu.free, total_bytes=gpu.total)
    required = max(need.bytes, int(need.floor_share * gpu.total))
    where = f"GPU 0 {gpu.name}: {gib(gpu.free)} free of {gib(gpu.total)}"
    floor = f"; vLLM claims {need.floor_share:.0%} at start" if need.floor_share else ""
    if gpu.free < required:
        text = f"{where} < {gib(required)} needed ({need.detail}{floor})"
        return Result("gpu-memory", FAIL, text, figures)
    text = f"{where} >= {gib(required)} needed ({need.detail}{floor})"
    return Result("gpu-memory", PASS, text, figures)


def check_gpu_memory(ctx: Context) -> Result:
    reason = gpu_need(ctx)
    if reason is None:
        raise Skip(f"not needed: reader {ctx.reader.backend} holds no model on a GPU here")
    inv = _inventory(ctx)
    if not inv.gpus and ctx.options.cpu_ok:
        raise Skip("no GPU; --cpu-ok: the reader runs on CPU")
    try:
        need = memory_need(ctx)
    except Skip:
        raise
    except Exception as exc:
        raise Skip(f"cannot size {ctx.reader.model}: {one_line(exc)}") from None
    return judge_memory(inv, need)
