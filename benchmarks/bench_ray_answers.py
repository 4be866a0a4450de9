"""Speed-up of the answers stage on a Ray pool: 2 workers against 1, in the same run.

Builds the built-in corpus's contexts for a few cells in a temporary folder, then answers them
with the default reader (SmolLM2-135M-Instruct on CPU, one Ray CPU and so one torch thread per
worker) on a local Ray instance, once with 1 worker and once with 2, each from an empty answer
cache; checks that both wrote the same answers files and prints the ratio of the answering
times (first shard handed out to last result stored; reader start-up is reported apart).

    python benchmarks/bench_ray_answers.py [--n-per-cell 4] [--max-new-tokens 16]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from compressbench import stages
from compressbench.config import parse_params
from compressbench.scale.ray_answers import run_answers
from compressbench.tpbench.stages import paths

RATIO = 0.3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-per-cell", type=int, default=4)
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--methods", default="recency,first_n,uniform_stride")
    args = ap.parse_args()
    methods = args.methods.split(",")
    new = args.max_new_tokens
    params = parse_params(
        {
            "corpora": {"builtin": {"source": "builtin"}},
            "datasets": ["builtin"],
            "ratios": [RATIO],
            "p3_ratio": RATIO,
            "n_per_cell": args.n_per_cell,
            "methods": methods,
            "reader": {
                "backend": "hf",
                "model": "smollm2",
                "batch_size": 1,
                "max_new_tokens": {"p1": new, "p2": new, "p3": new},
            },
            "tracking": {"uri": None, "experiment": "bench"},
        },
        "bench-params.yaml",
    )
    import ray

    os.environ.setdefault("RAY_worker_niceness", "0")
    with tempfile.TemporaryDirectory(prefix="cb-ray-bench-") as tmp:
        os.chdir(tmp)
        stages.stage_corpora(params, "builtin")
        stages.stage_probes(params, "builtin", RATIO)
        cells = [("builtin", m, RATIO) for m in methods]
        for cell in cells:
            stages.stage_contexts(params, *cell)
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        timings: dict[int, dict[str, float]] = {}
        outputs: dict[int, list[bytes]] = {}
        for workers in (1, 2):
            os.environ["COMPRESSBENCH_ANSWER_CACHE"] = str(Path(tmp) / f"w{workers}.sqlite")
            start = time.perf_counter()
            run = run_answers(params, cells, workers=workers)
            total = time.perf_counter() - start
            timings[workers] = {
                "requests": run.generated,
                "answer_seconds": round(run.answer_seconds, 2),
                "total_seconds": round(total, 2),
                "startup_seconds": round(total - run.answer_seconds, 2),
                "workers_used": run.workers_used,
            }
            outputs[workers] = [paths.CellFiles(*c).answers.read_bytes() for c in cells]
        ray.shutdown()
    if outputs[1] != outputs[2]:
        raise SystemExit("1 and 2 workers wrote different answers files")
    speedup = timings[1]["answer_seconds"] / timings[2]["answer_seconds"]
    print(
        json.dumps(
            {
                "cells": len(cells),
                "cpus": os.cpu_count(),
                "load_avg_1min": round(os.getloadavg()[0], 1),
                "1_worker": timings[1],
                "2_workers": timings[2],
                "speedup_2_over_1": round(speedup, 2),
                "answers_identical": True,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
