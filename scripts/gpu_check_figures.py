"""What ``scripts/gpu_check.py`` makes of its cells: each cell's figures from its
``.stats.json``, Table 3 extrapolated per mode from them, issue 28's targets and the before
figures beside the after ones."""

from __future__ import annotations

from typing import Any

# Before (docs/gpu.md, ../shared/gpu/README.md): one H200, 2026-12-04, the project at 9bc2bca,
# 96 new tokens, through the same stage commands.
BEFORE = {
    "machine": "1 x NVIDIA H200, 2026-12-04, compressbench 9bc2bca",
    "full_context_batch1": {"s_per_prompt": 4.38, "tokens_per_s": 21.9},
    "snapkv_batch1": {"s_per_prompt": 3.85, "tokens_per_s": 25.0},
    "full_context_p1_batch8": {"s_per_prompt": 0.50, "tokens_per_s": 172.6},
    "load_and_hash_per_cell_s": 30.0,
    "weights_hash_s": 14.5,
    "static_cache_alone_batch64_tokens_per_s": 1828,
}
GOALS = {
    "fast_grid_minutes_max": 30,
    "fast_batched_tokens_per_s_min": 1500,
    "paper_grid_hours_max": 4,
}
PAPER_PASSES, FAST_PASSES = 4, 2  # reader passes of the whole grid: p1, p2, p3, kv; fast, fast_kv


def cell_figures(stats: dict[str, Any], started: float) -> dict[str, Any]:
    """What one reader cell measured, from its ``.stats.json`` and run log (timings, loads)."""
    n, gen = stats.get("requests") or 0, stats.get("generation_seconds") or 0.0
    rs = stats.get("reader_stats") or {}
    peak = rs.get("cuda_max_memory_allocated_bytes")
    begun = stats.get("compute_started_at")
    return {
        "prompts": n,
        "model_calls": stats.get("model_calls"),
        "tokens_in": stats.get("tokens_in"),
        "tokens_out": stats.get("tokens_out"),
        "generation_s": round(gen, 3),
        "s_per_prompt": round(gen / n, 4) if n else None,
        "tokens_per_s": round(stats.get("tokens_per_s") or 0.0, 1),
        "cache_hits": stats.get("hits"),
        # stage start to the first answer computed (worker start, load, hashing); None when
        # the first answer came from the answer cache (computed before this command)
        "before_first_answer_s": round(begun - started, 2) if begun and begun > started else None,
        "pid": (stats.get("process") or {}).get("pid"),
        "model_loads": (stats.get("process") or {}).get("reader_loads"),
        "weights_hash_s": rs.get("weights_hash_seconds"),
        "weight_files_hashed": rs.get("weight_files_hashed"),
        "peak_gpu_memory_gib": round(peak / 2**30, 2) if peak is not None else None,
        "decoding": {
            k: (stats.get("decoding") or {}).get(k)
            for k in ("dtype", "attn_implementation", "decode_mode", "press")
        },
    }


def by_label(cells: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Measured cells keyed ``<mode>/<pass>:<method>`` (the grid's rate labels)."""
    return {f"{c['mode']}/{c['pass']}:{c['method']}": c for c in cells if "method" in c}


def extrapolate(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """Table 3 in both modes at the measured tokens/s (labels say which cell each part uses)."""
    from compressbench.tpbench import paper_grid

    got = by_label(cells)
    rates = {k: c["tokens_per_s"] for k, c in got.items() if c.get("tokens_per_s")}

    def paper(cell: Any) -> str:
        if cell.method == "deletions":
            return "paper/kv:deletions"
        if cell.kv:
            return "paper/kv:snapkv"
        return "paper/p1:full_context" if cell.probe == "P1" else "paper/kv:full_context"

    def fast(cell: Any) -> str:
        kind = (
            "deletions" if cell.method == "deletions" else "snapkv" if cell.kv else "full_context"
        )
        return f"fast/fast:{kind}"

    def loads(prefix: str) -> float:  # a pass's first cell: worker start, load, hash
        firsts = [
            c["before_first_answer_s"]
            for k, c in got.items()
            if k.startswith(prefix) and c.get("before_first_answer_s") is not None
        ]
        return max(firsts) if firsts else 0.0

    cells3 = paper_grid.table3()
    out: dict[str, Any] = {
        "grid": "tpbench.paper_grid.table3(): Llama-3.1-8B, SGD + MultiWOZ, P1/P2/P3 x 8 turn"
        " methods at r = 0.30 over seeds 42-44, the 4 presses (P2, seed 42), the deletion"
        " experiment (5 conditions x the seed-42 P2 probes)",
        "extrapolated": "every figure here; measured: the cells' tokens/s and first-answer"
        f" delays. Answer lengths: the 1.5B study's means {paper_grid.STUDY_ANSWER_TOKENS};"
        " tokens/s measured at --new-tokens and taken as the rate at those lengths; prompts at"
        " the built-in corpus's lengths (shorter than SGD/MultiWOZ); loads: the paper mode"
        f" {PAPER_PASSES} passes (p1, p2, p3, kv), the fast mode {FAST_PASSES} (fast, fast_kv),"
        " each at the slowest measured pass start; P2/P3 paper rates = the kv pass's (sdpa).",
    }
    for mode, measured_as, n in (("paper", paper, PAPER_PASSES), ("fast", fast, FAST_PASSES)):
        try:
            out[mode] = paper_grid.extrapolate(
                cells3, rates, measured_as, loads=n, load_seconds=loads(mode + "/")
            )
        except KeyError as exc:
            out[mode] = {"error": f"no measured rate for {exc}"}
    return out


def verdict(cells: list[dict[str, Any]], grid: dict[str, Any]) -> dict[str, Any]:
    """The issue's targets against this run, and the before figures beside the after ones."""
    got = by_label(cells)
    # batched decoding through the pipeline: the fast full-context cell (recency before it
    # paid the first compiled shapes)
    fast_rate = (got.get("fast/fast:full_context") or {}).get("tokens_per_s")
    fast_h, paper_h = grid.get("fast", {}).get("hours"), grid.get("paper", {}).get("hours")
    return {
        "goals": GOALS,
        "fast_grid_minutes": round(fast_h * 60, 1) if fast_h is not None else None,
        "fast_grid_ok": fast_h is not None and fast_h * 60 <= GOALS["fast_grid_minutes_max"],
        "fast_batched_tokens_per_s": fast_rate,
        "fast_rate_ok": bool(fast_rate and fast_rate >= GOALS["fast_batched_tokens_per_s_min"]),
        "paper_grid_hours": paper_h,
        "paper_grid_ok": paper_h is not None and paper_h <= GOALS["paper_grid_hours_max"],
        "loads_per_pass": {
            p: sorted(
                {c["model_loads"] for c in cells if c.get("pass") == p and c.get("model_loads")}
            )
            for p in sorted({c["pass"] for c in cells})
        },
        "pids_per_pass": {
            p: len({c.get("pid") for c in cells if c.get("pass") == p})
            for p in sorted({c["pass"] for c in cells})
        },
        "before": BEFORE,
        "note": "targets are for one H200 at the Llama-3.1-8B shape; on CPU (--small) they"
        " are reported, not expected",
    }


def print_table(cells: list[dict[str, Any]], result: dict[str, Any]) -> None:
    print(
        "\nmode   pass  cell                      batch prompts s/prompt tok/s  loads"
        " hash_s peak_GiB"
    )
    for c in cells:
        if "method" not in c:
            print(f"{c['mode']:6} {c['pass']:5} {c['stage']:25} rc={c.get('rc')}")
            continue
        print(
            f"{c['mode']:6} {c['pass']:5} {c['stage'][:25]:25} {c['batch_size']:5} {c['prompts']:7}"
            f" {c['s_per_prompt']!s:8} {c['tokens_per_s']!s:6} {c['model_loads']!s:5}"
            f" {c['weights_hash_s'] or 0:6.2f} {c['peak_gpu_memory_gib']!s}"
        )
    b, v = BEFORE, result["verdict"]
    print(
        f"\nbefore ({b['machine']}): full_context batch 1"
        f" {b['full_context_batch1']['tokens_per_s']}"
        f" tokens/s, P1 batch 8 {b['full_context_p1_batch8']['tokens_per_s']} tokens/s,"
        f" ~{b['load_and_hash_per_cell_s']:.0f} s load + hash per cell"
    )
    print(
        f"after ({result['machine']}): fast batched {v['fast_batched_tokens_per_s']} tokens/s"
        f" (target >= {GOALS['fast_batched_tokens_per_s_min']}); Table 3 extrapolated: fast"
        f" {v['fast_grid_minutes']} min (<= {GOALS['fast_grid_minutes_max']}), paper"
        f" {v['paper_grid_hours']} h (<= {GOALS['paper_grid_hours_max']}); loads per pass"
        f" {v['loads_per_pass']}"
    )
