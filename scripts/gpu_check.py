"""GPU check: the paper reader's shape on one GPU, with and without KV presses (issue 11, item 8).

Builds a Llama-3.1-8B-shaped model from its config with random bf16 weights (speed is that of
real weights; answers are meaningless), a word-level tokenizer whose every word is one token
(no tokenizer files exist on a bare GPU machine), and 50 prompts whose token lengths are the
50 quantiles of the SGD P2 prompts (measured: first 400 SGD test dialogues, every change
event's full-context P2 prompt in the reader's chat template, SmolLM2 tokenizer; mean 475,
range 284-682). Through the project's HF reader it measures, each phase time-boxed:
prefill tokens/s (one at a time and batched), generation one at a time and batched, and
generation under each KV press (SnapKV, PyramidKV, StreamingLLM, ChunkKV presets through
kvpress; kvpress loads from ``--wheels`` when it is not installed). It compares decode rates
with the memory-bandwidth bound and estimates the GPU-hours of the paper's grid.

Run:   PYTHONPATH=src python scripts/gpu_check.py --out OUT/gpu_check.json
CPU:   PYTHONPATH=src python scripts/gpu_check.py --small --out /tmp/gpu_check.json
The JSON is rewritten after every step, so a run that is cut off leaves what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

PRESETS = ("snapkv", "pyramidkv", "streamingllm", "chunkkv")
H200_BANDWIDTH = 4.8e12  # bytes/s, HBM3e (NVIDIA H200 datasheet)


class Report:
    """The JSON result, rewritten atomically after every step."""

    def __init__(self, path: Path) -> None:
        self.path, self.data = path, {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        path.parent.mkdir(parents=True, exist_ok=True)

    def put(self, key: str, value: Any) -> None:
        self.data[key] = value
        self.data["elapsed_s"] = round(time.monotonic() - T0, 1)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1, default=str))
        os.replace(tmp, self.path)
        say(f"[{self.data['elapsed_s']:7.1f}s] {key}: {json.dumps(value, default=str)[:300]}")


def say(msg: str) -> None:
    print(msg, flush=True)


T0 = time.monotonic()


def sync(device: Any) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize()


def prefill_rates(reader: Any, requests: list[Any], batch: int, deadline: float) -> dict[str, Any]:
    """Prefill tokens/s (logits of the last token only), one at a time and in batches."""
    import torch

    from compressbench.readers import chat

    tok, model, dev = reader.tokenizer, reader.model, reader.device
    ids = [chat.encode(tok, chat.render_chat(tok, r.system, r.user), 10**6) for r in requests]
    out: dict[str, Any] = {}
    with torch.inference_mode():
        halfway = time.monotonic() + (deadline - time.monotonic()) / 2
        for label, size, until in (("one_at_a_time", 1, halfway), ("batched", batch, deadline)):
            tokens, seconds, n = 0, 0.0, 0
            for s in range(0, len(ids), size):
                if time.monotonic() > until:
                    break
                rows = ids[s : s + size]
                width = max(map(len, rows))
                x = torch.tensor(
                    [[reader.pad_token_id] * (width - len(r)) + r for r in rows], device=dev
                )
                m = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device=dev)
                sync(dev)
                t = time.perf_counter()
                model(input_ids=x, attention_mask=m, logits_to_keep=1)
                sync(dev)
                seconds += time.perf_counter() - t
                tokens += sum(map(len, rows))
                n += len(rows)
            rate = round(tokens / seconds, 1) if seconds else None
            out[label] = {"prompts": n, "tokens": tokens, "seconds": round(seconds, 4),
                          "tokens_per_s": rate}  # fmt: skip
    out["prompt_tokens"] = [len(r) for r in ids]
    return out


def generation_rates(
    reader: Any, requests: list[Any], prefill_tps: float, deadline: float
) -> dict[str, Any]:
    """Generate through the reader in its batches until ``deadline``; decode rate = output
    tokens / (wall - prefill time at the measured prefill rate)."""
    done, wall, out_tokens, in_tokens, records = 0, 0.0, 0, 0, []
    size = reader.batch_size
    for s in range(0, len(requests), size):
        if time.monotonic() > deadline:
            break
        chunk = requests[s : s + size]
        sync(reader.device)
        t = time.perf_counter()
        gens = reader.generate(chunk)
        sync(reader.device)
        wall += time.perf_counter() - t
        errors = [g.error for g in gens if g.error and g.error != "no-json"]
        if errors:
            return {"error": errors[0], "prompts": done}
        done += len(gens)
        out_tokens += sum(g.tokens_out for g in gens)
        in_tokens += sum(g.tokens_in for g in gens)
        records += [g.record for g in gens if g.record]
    decode_s = wall - in_tokens / prefill_tps if prefill_tps else wall
    res: dict[str, Any] = {
        "prompts": done, "batch_size": size, "wall_s": round(wall, 3), "input_tokens": in_tokens,
        "output_tokens": out_tokens, "seconds_per_prompt": round(wall / done, 4) if done else None,
        "decode_tokens_per_s": round(out_tokens / decode_s, 1) if done and decode_s > 0 else None,
    }  # fmt: skip
    if records:
        kept = [r["kept_fraction"] for r in records]
        res["kept_fraction_mean"] = round(sum(kept) / len(kept), 4)
        res["mode"] = records[0]["mode"]
        res["positions_recovered"] = sum(1 for r in records if r.get("kept_positions") is not None)
    return res


def phase(run: Any) -> dict[str, Any]:
    """A phase's result, or its error (the other phases still run)."""
    try:
        return dict(run())
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def eager_prefill(reader: Any, requests: list[Any], a: Any, deadline: float) -> dict[str, Any]:
    """Prefill rates under eager attention, then back to ``a.attn``."""
    model = reader.model
    switch = getattr(model, "set_attn_implementation", None)
    try:
        if switch is not None:
            switch("eager")
        else:
            model.config._attn_implementation = "eager"
        res = prefill_rates(reader, requests, a.batch_size, deadline)
    finally:
        if switch is not None:
            switch(a.attn)
        else:
            model.config._attn_implementation = a.attn
    res.pop("prompt_tokens", None)
    return res


def decode_bound(
    model: Any, cfg: dict[str, Any], context: float, batch: int, bandwidth: float
) -> dict[str, Any]:
    """Memory-bandwidth decode bound: every step reads all weights once and each row's KV."""
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    elem = next(model.parameters()).element_size()
    kv_per_token = (
        2 * cfg["num_hidden_layers"] * cfg["num_key_value_heads"] * cfg["head_dim"] * elem
    )
    step = lambda b: weight_bytes + b * context * kv_per_token  # noqa: E731
    return {
        "bandwidth_bytes_per_s": bandwidth, "weight_bytes": weight_bytes,
        "kv_bytes_per_token": kv_per_token, "context_tokens": round(context, 1),
        "tokens_per_s_batch1": round(bandwidth / step(1), 1),
        f"tokens_per_s_batch{batch}": round(batch * bandwidth / step(batch), 1),
    }  # fmt: skip


def environment(device: Any) -> dict[str, Any]:
    import torch
    import transformers

    env = {"python": platform.python_version(), "torch": torch.__version__,
           "transformers": transformers.__version__, "device": str(device),
           "cuda": torch.version.cuda}  # fmt: skip
    if device.type == "cuda":
        env["gpu"] = torch.cuda.get_device_name(device)
    return env


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--small", action="store_true", help="tiny config on CPU (the test)")
    p.add_argument(
        "--wheels", type=Path, default=Path("gpu_wheels"), help="folder with kvpress-*.whl"
    )
    p.add_argument("--prompts", type=int, default=50)
    p.add_argument("--new-tokens", type=int, default=96, help="spec §6: Llama P2 = 96")
    p.add_argument("--batch-size", type=int, default=8, help="spec §6: P1 batches of 8")
    p.add_argument("--ratio", type=float, default=0.5, help="retained fraction r of the presses")
    p.add_argument("--attn", default="sdpa", choices=("sdpa", "eager"))
    p.add_argument(
        "--budget-s", type=float, default=420, help="seconds from start to the last phase's end"
    )
    p.add_argument("--bandwidth", type=float, default=H200_BANDWIDTH)
    a = p.parse_args(argv)
    import torch

    from compressbench.readers import synthetic
    from compressbench.tpbench import paper_grid

    report = Report(a.out)
    device = torch.device("cpu" if a.small or not torch.cuda.is_available() else "cuda")
    cfg = synthetic.SMALL if a.small else synthetic.LLAMA_31_8B
    report.put("environment", environment(device))
    report.put(
        "settings",
        {**{k: str(v) for k, v in vars(a).items()}, "prompt_lengths": "SGD P2 quantiles"},
    )
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False  # spec §6
    t = time.perf_counter()
    dtype = torch.float32 if a.small else torch.bfloat16
    model = synthetic.build_model(cfg, device, dtype, a.attn)
    sync(device)
    params = sum(p.numel() for p in model.parameters())
    built = round(time.perf_counter() - t, 2)
    report.put("model", {"config": "small" if a.small else "llama-3.1-8b", "parameters": params,
                         "dtype": str(dtype), "attn": a.attn, "build_s": built})  # fmt: skip
    eos = cfg["eos_token_id"][-1]
    tokenizer = synthetic.build_tokenizer(cfg["vocab_size"], cfg["bos_token_id"], eos)
    lengths = [synthetic.P2_LENGTHS[i % len(synthetic.P2_LENGTHS)] for i in range(a.prompts)]
    if a.small:
        lengths = [n // 2 for n in lengths]
    requests = synthetic.make_requests(
        tokenizer, lengths, a.new_tokens, min(cfg["bos_token_id"], 127000)
    )
    reader = synthetic.in_memory_reader(model, tokenizer, device)
    reader.generate(requests[:1])  # warm-up (kernels, allocator)
    end = T0 + a.budget_s
    span = max(1.0, end - time.monotonic())  # what is left for the measured phases

    def deadline(share: float) -> float:  # a phase's share of what was left, never past end
        return min(end, time.monotonic() + share * span)

    pre = phase(lambda: prefill_rates(reader, requests, a.batch_size, deadline(0.05)))
    report.put("prefill", pre)
    ptps = pre.get("one_at_a_time", {}).get("tokens_per_s") or 0.0
    btps = pre.get("batched", {}).get("tokens_per_s") or ptps
    serial = phase(lambda: generation_rates(reader, requests, ptps, deadline(0.25)))
    report.put("generate_one_at_a_time", serial)
    batched_reader = reader.with_press(None, batch_size=a.batch_size)
    batched = phase(lambda: generation_rates(batched_reader, requests, btps, deadline(0.15)))
    report.put("generate_batched", batched)
    if a.attn != "eager":  # the paper's main Llama P1/P2 reader ran eager attention (spec §6)
        report.put(
            "prefill_eager", phase(lambda: eager_prefill(reader, requests, a, deadline(0.04)))
        )
    mean_ctx = sum(lengths) / len(lengths) + a.new_tokens / 2
    bound = decode_bound(model, cfg, mean_ctx, a.batch_size, a.bandwidth)
    for key, res in (("batch1", serial), (f"batch{a.batch_size}", batched)):
        rate = res.get("decode_tokens_per_s")
        if rate:
            bound[f"measured_fraction_of_bound_{key}"] = round(
                rate / bound[f"tokens_per_s_{key}"], 4
            )
    report.put("decode_bound", bound)
    presses: dict[str, Any] = {}
    try:
        from compressbench.compress.kv.vendored import find_wheel, load_kvpress

        wheel = find_wheel(a.wheels) if a.wheels.is_dir() else None
        _, how = load_kvpress(wheel)
        presses["kvpress"] = how
    except Exception as exc:  # no kvpress here: the unpressed figures still count
        presses["kvpress_error"] = f"{type(exc).__name__}: {exc}"
    report.put("presses", presses)
    if "kvpress" in presses:
        from compressbench.compress.kv.hook import KVPressHook
        from compressbench.compress.presses import get_preset

        for i, name in enumerate(PRESETS):
            preset = get_preset(name)
            hook = KVPressHook(preset.build(a.ratio), mode=preset.default_mode, preset=name)
            left = (end - time.monotonic()) / (len(PRESETS) - i) / span
            try:
                pressed = reader.with_press(hook, hook.spec)
                res = generation_rates(pressed, requests, ptps, deadline(left))
            except Exception as exc:
                res = {"error": f"{type(exc).__name__}: {exc}"}
            presses[name] = res
            report.put("presses", presses)
    rates = {
        "prompt_tokens": mean_ctx - a.new_tokens / 2,
        "prefill_tps": ptps or 1.0,
        "decode_tps_serial": serial.get("decode_tokens_per_s") or 1.0,
        "decode_tps_batched": batched.get("decode_tokens_per_s") or 1.0,
    }
    per_press = [
        v["seconds_per_prompt"]
        for v in presses.values()
        if isinstance(v, dict) and v.get("seconds_per_prompt")
    ]
    est = {kind: {**paper_grid.describe(kind), **paper_grid.gpu_hours(
        paper_grid.grid(kind), **rates,
        press_seconds_per_prompt=max(per_press) if per_press else None)}
        for kind in ("as_run", "full_factorial")}  # fmt: skip
    est["assumptions"] = (
        f"{paper_grid.ASSUMPTIONS} Rates measured here with the Llama-3.1-8B shape apply to"
        f" Mistral-7B too; the"
        f" press rate is the slowest measured press's seconds per prompt at r={a.ratio};"
        f" 'as_run' = the paper's grid (spec §3.13/§6: 2 readers x 2 datasets x 3 seeds;"
        f" P1/P2/P3 x 8 turn methods at r=0.30, P2 at r=0.10, 5 methods at P2 r=0.50/0.70,"
        f" 4 presses P2 r=0.30 seed 42 Llama); 'full_factorial' = 3 probes x 12 methods x"
        f" 4 ratios x 3 seeds x 2 readers x 2 datasets. One GPU, HF transformers, no vLLM."
    )
    report.put("grid_estimate", est)
    done: dict[str, Any] = {"total_s": round(time.monotonic() - T0, 1)}
    if device.type == "cuda":
        done["max_memory_allocated_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    report.put("done", done)
    return 0


if __name__ == "__main__":
    sys.exit(main())
