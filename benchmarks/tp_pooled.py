"""Pooled gaps to full context (issue #31's targets): per sample and pooled over samples.

A sample is one dataset's probes of one seed; the pooled row joins every sample's answers,
paired with full context's by (seed, probe id) and resampled by source dialogue
(:func:`compressbench.tpbench.report.findings.paired_gap`, the report's own interval: 95%
percentile, 5,000 resamples). Per method and probe type: full context's and the method's
strict score, the gap (full context - method) with its interval, and for P2 "read | kept": the
share of the probes whose context holds the current value (the retention matcher) that the
reader answers right. Reader-free: it reads a run's contexts and scores files only.

Run it in a project where the cells exist (the carried answers serve every prompt), e.g.::

    compressbench answers import benchmarks/results/tp31_answers.jsonl.gz
    compressbench use-config configs/studies/tp31_pooled.yaml && dvc repro scores
    python benchmarks/tp_pooled.py --datasets sgd,multiwoz \\
        --methods turning_point,turning_point_framed,turning_point_query [--json out.json]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from compressbench.compress.method import FULL_CONTEXT
from compressbench.text.normalize import value_occurs_in_text
from compressbench.tpbench.report.findings import paired_gap
from compressbench.tpbench.stages import paths

Row = Mapping[str, Any]


def _rows(root: Path, template: str, dataset: str, method: str, ratio: float) -> list[Row]:
    path = root / paths.fill(template, dataset=dataset, method=method, ratio=ratio)
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_kept(contexts: Sequence[Row], scores: Sequence[Row], dataset: str) -> tuple[int, int]:
    """``(right, kept)`` over P2 probes whose context holds the gold value."""
    text = {r["probe_id"]: str(r["compressed_text_used"]) for r in contexts}
    kept = [
        s
        for s in scores
        if s["probe_type"] == "P2" and value_occurs_in_text(s["gold"], text[s["probe_id"]], dataset)
    ]
    return sum(bool(s["scores"]["strict"]) for s in kept), len(kept)


def table(
    root: Path,
    datasets: Sequence[str],
    methods: Sequence[str],
    ratio: float,
    probe_types: Sequence[str],
    metric: str = "strict",
    pool: Sequence[tuple[str, int]] | None = None,
) -> list[dict[str, Any]]:
    """One row per (sample, method, probe type): each sample, then ``pooled`` over ``pool``
    (default: every sample)."""
    cells = {
        (ds, m): (
            _rows(root, paths.CONTEXTS, ds, m, ratio),
            _rows(root, paths.SCORES, ds, m, ratio),
        )
        for ds in datasets
        for m in (FULL_CONTEXT, *methods)
    }
    seeds = sorted({int(r["seed"]) for (_, _), (_, s) in cells.items() for r in s})
    samples = [(ds, seed) for ds in datasets for seed in seeds]
    out: list[dict[str, Any]] = []
    pooled = list(pool or samples)
    pooled_label = "pooled: " + " + ".join(f"{ds} {seed}" for ds, seed in pooled)
    for label, members in [(f"{ds} seed {seed}", [(ds, seed)]) for ds, seed in samples] + [
        (pooled_label, pooled)
    ]:
        for method in methods:

            def pick(m: str, i: int, members: list[tuple[str, int]] = members) -> list[Row]:
                return [
                    r
                    for ds, seed in members
                    for r in cells[(ds, m)][i]
                    if r.get("seed", seed) == seed
                ]

            ref, own = pick(FULL_CONTEXT, 1), pick(method, 1)
            for probe_type in probe_types:
                gap = paired_gap(ref, own, method_name=method, metric=metric, probe_type=probe_type)
                if gap is None:
                    continue
                row: dict[str, Any] = {
                    "sample": label,
                    "method": method,
                    "probe_type": probe_type,
                    "n": gap.n_pairs,
                    "dialogues": gap.n_clusters,
                    "full_context": gap.reference,
                    "score": gap.score,
                    "gap": gap.gap,
                    "low": gap.low,
                    "high": gap.high,
                }
                if probe_type == "P2":
                    right, kept = 0, 0
                    for ds, seed in members:
                        ctx = [r for r in cells[(ds, method)][0] if r.get("seed", seed) == seed]
                        sc = [r for r in cells[(ds, method)][1] if int(r["seed"]) == seed]
                        a, b = read_kept(ctx, sc, ds)
                        right, kept = right + a, kept + b
                    row["kept"], row["read_kept"] = kept, (right / kept if kept else None)
                out.append(row)
    return out


def markdown(rows: Sequence[Mapping[str, Any]], metric: str) -> str:
    lines = [
        f"| sample | method | probe | n (dialogues) | full context {metric} | method {metric} "
        "| gap (95% CI) | value kept | read \\| kept |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        kept = r.get("kept")
        rk = r.get("read_kept")
        lines.append(
            f"| {r['sample']} | {r['method']} | {r['probe_type']} | {r['n']} ({r['dialogues']}) "
            f"| {r['full_context']:.3f} | {r['score']:.3f} | {100 * r['gap']:+.1f} "
            f"[{100 * r['low']:+.1f}, {100 * r['high']:+.1f}] "
            f"| {'' if kept is None else kept} | {'' if rk is None else f'{rk:.3f}'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path("."))
    ap.add_argument("--datasets", default="sgd")
    ap.add_argument("--methods", default="turning_point")
    ap.add_argument("--ratio", type=float, default=0.3)
    ap.add_argument("--probes", default="P2")
    ap.add_argument("--metric", default="strict", choices=("strict", "loose"))
    ap.add_argument(
        "--pool", default=None, help="the pooled samples, e.g. sgd:42,sgd:43 (default: all)"
    )
    ap.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = ap.parse_args(argv)
    rows = table(
        args.root,
        args.datasets.split(","),
        args.methods.split(","),
        args.ratio,
        args.probes.split(","),
        args.metric,
        [(p.split(":")[0], int(p.split(":")[1])) for p in args.pool.split(",")]
        if args.pool
        else None,
    )
    print(markdown(rows, args.metric))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
