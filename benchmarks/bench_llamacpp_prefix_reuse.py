"""llamacpp reader: shared-prefix chunks reused vs every prompt evaluated whole, in one run.

Builds the full-context P1 / P2 / P3 prompts of the first dialogues of the built-in corpus
(several questions on each dialogue, the TPBench prompts verbatim), answers them once with
prefix reuse and once without (``reuse_prefix=False``), asserts the answers are identical and
prints prompt tokens evaluated / sent and the wall-time ratio.

    python benchmarks/bench_llamacpp_prefix_reuse.py [--model qwen2.5-coder-0.5b-instruct] [--n 12]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from compressbench import stages
from compressbench.config import parse_params
from compressbench.jsonl import read_jsonl
from compressbench.readers.base import ChatRequest
from compressbench.readers.llamacpp import LlamaCppReader
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.answers import cell_requests


def requests(n: int) -> list[ChatRequest]:
    """The full-context requests of the built-in corpus, ``n`` sampled questions per probe."""
    raw = {
        "corpora": {"builtin": {"source": "builtin"}},
        "datasets": ["builtin"],
        "n_per_cell": n,
        "methods": ["full_context"],
        "ratios": [0.3],
        "p3_ratio": 0.3,
        "reader": {"backend": "llamacpp", "model": "smollm2"},
    }
    params = parse_params(raw, "bench-params.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path.cwd()
        os.chdir(tmp)
        try:
            stages.stage_corpora(params, "builtin")
            stages.stage_probes(params, "builtin", 0.3)
            stages.stage_contexts(params, "builtin", "full_context", 0.3)
            rows = list(read_jsonl(paths.CellFiles("builtin", "full_context", 0.3).contexts))
        finally:
            os.chdir(cwd)
    return cell_requests(params.reader, rows)


def run(model: str, reqs: list[ChatRequest], reuse: bool, threads: int) -> tuple[float, list, dict]:
    reader = LlamaCppReader(model, n_threads=threads, reuse_prefix=reuse)
    ordered = sorted(reqs, key=reader.request_order)
    start = time.perf_counter()
    gens = reader.generate(ordered)
    seconds = time.perf_counter() - start
    reader.close()
    return seconds, [(g.id, g.raw) for g in gens], dict(reader.stats)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    ap.add_argument("--n", type=int, default=12, help="n_per_cell of the probes")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    reqs = requests(args.n)
    base_s, base, base_stats = run(args.model, reqs, False, args.threads)
    reuse_s, reused, reuse_stats = run(args.model, reqs, True, args.threads)
    assert reused == base, "prefix reuse changed an answer"
    print(f"{len(reqs)} prompts, {args.model}, {args.threads} threads; answers identical")
    for name, sec, st in (("whole", base_s, base_stats), ("reuse", reuse_s, reuse_stats)):
        print(
            f"  {name}: {sec:7.1f} s  prompt tokens evaluated / sent "
            f"{st['prompt_tokens_evaluated']} / {st['prompt_tokens_sent']}"
        )
    print(f"  speed-up (whole / reuse): {base_s / reuse_s:.2f}x")


if __name__ == "__main__":
    main()
