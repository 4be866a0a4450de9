"""The report's sections on reader answers: main results, what one average hides, the P3 gap,
what the reader answers, retention versus reading, slot types, KV presses and wider budgets.

Each function returns markdown lines for every dataset of the grid.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from compressbench.analysis.markdown import NONE, mean_sd, num, points, rate_count, table
from compressbench.tpbench.probe_types import pipeline_probe_types
from compressbench.tpbench.report.answer_kinds import KIND_LABELS, KINDS
from compressbench.tpbench.report.findings import Gap
from compressbench.tpbench.report.model import (
    RANK_COLUMNS,
    Findings,
    ReportInput,
    column_name,
    kind_table_probes,
)
from compressbench.tpbench.report.retention_reading import Reading, by_group, by_seed, seed_mean
from compressbench.tpbench.viewer.summary import cell_link

Table = tuple[Sequence[str], Sequence[Sequence[Any]]]  # header, rows
VIEWER_NOTE = " Each score links to its cases in the case viewer (`viewer/index.html`)."


def _r(ratio: float) -> str:
    return f"r = {ratio:g}"


def per_dataset(inp: ReportInput, build: Callable[[str], Table]) -> list[str]:
    """One ``### <dataset>`` table per dataset of the grid, ``build(dataset)`` -> (header, rows)."""
    lines = []
    for dataset in inp.datasets:
        header, rows = build(dataset)
        lines += [f"### {dataset}", "", *table(header, rows)]
    return lines


def main_results(inp: ReportInput, f: Findings) -> list[str]:
    """Strict / loose per probe (mean ± SD over seeds) and format-error rates (Table 3)."""
    lines = [
        "## Main results",
        "",
        f"Accuracy per probe at {_r(inp.main_ratio)}: mean ± sample SD over seeds "
        f"{list(inp.seeds)} (no SD with one seed). P3 is the segment-local joint score. "
        '"fmt err" is the share of answers with no parseable JSON object (scored 0); '
        "n = answers per seed." + VIEWER_NOTE * bool(inp.viewer),
        "",
    ]
    probes = [p.name for p in pipeline_probe_types()]  # the registered ones, in order
    header = ["method"]
    for p in probes:
        header += [f"{p} strict", f"{p} loose"]
    header += ["fmt err " + " / ".join(probes), "n " + " / ".join(probes)]

    def build(dataset: str) -> Table:
        rows = []
        for method in inp.methods:
            head = f.headline.get((dataset, method, inp.main_ratio), {})
            row = [inp.label(method)]
            for p in probes:
                h = head.get(p, {})
                cells = [mean_sd(h.get(m), h.get(f"{m}_sd")) for m in ("strict", "loose")]
                if inp.viewer and p in head:
                    href = inp.viewer + cell_link(
                        dataset=dataset, method=method, probe=p, ratio=repr(inp.main_ratio)
                    )
                    cells = [f"[{c}]({href})" for c in cells]
                row += cells
            row.append(" / ".join(num(head.get(p, {}).get("format_error_rate")) for p in probes))
            row.append(" / ".join(f"{head[p]['n']:.0f}" if p in head else NONE for p in probes))
            rows.append(row)
        return header, rows

    return lines + per_dataset(inp, build)


def _rho(rho: float | None) -> str:
    if rho is None:
        return "needs three selectors"
    if math.isnan(rho):
        return "undefined (one probe's scores are all equal)"
    return f"{rho:+.2f}"


def single_average(inp: ReportInput, f: Findings) -> list[str]:
    """Ranks of the compressed turn selectors, Spearman ρ and probe-mix crossovers (§6.1)."""
    lines = [
        "## What a single average hides",
        "",
        f"Compressed turn selectors at {_r(inp.main_ratio)} (seed means); rank 1 is best, ties "
        "share the average rank. ρ is Spearman's rank correlation between P1-strict and "
        "P2-strict. A crossover α is the probe-mix weight on P1 at which "
        "α·P1 + (1 − α)·P2 ranks two methods equally (paper §6.1.2).",
        "",
    ]
    columns = [column_name(p, m) for p, m in RANK_COLUMNS]
    for dataset in inp.datasets:
        scores, ranks = f.rank_scores.get(dataset, {}), f.ranks.get(dataset, {})
        lines += [f"### {dataset}", ""]
        if len(scores) < 2:
            lines += ["Needs at least two compressed turn selectors in `methods`.", ""]
            continue
        rows = [
            [inp.label(m)]
            + [f"{num(scores[m][c])} ({ranks[m][i]:g})" for i, c in enumerate(columns)]
            for m in scores
        ]
        lines += table(["method", *(f"{c} (rank)" for c in columns)], rows)
        rho = f.spearman.get(dataset)
        lines += [f"Spearman ρ(P1-strict, P2-strict) over {len(scores)} selectors: {_rho(rho)}", ""]
        cross = sorted(f.crossovers.get(dataset, []), key=lambda c: c.alpha)
        if cross:
            lines += table(
                ["method a", "method b", "P1-strict a / b", "P2-strict a / b", "crossover α"],
                [
                    [
                        inp.label(c.a),
                        inp.label(c.b),
                        f"{num(c.p1[0])} / {num(c.p1[1])}",
                        f"{num(c.p2[0])} / {num(c.p2[1])}",
                        f"{c.alpha:.3f}",
                    ]
                    for c in cross
                ],
            )
        else:
            lines += ["No two selectors order differently on P1-strict and P2-strict.", ""]
    return lines


def p3_gap(inp: ReportInput, f: Findings) -> list[str]:
    """Full context − method on P3 with paired dialogue-clustered intervals (§6.2)."""
    lines = [
        "## P3 gap to full context",
        "",
        f"Full context − method on P3 at {_r(inp.main_ratio)}, in percentage points, over "
        "answers paired by (seed, probe) and pooled over seeds; 95% percentile intervals from "
        "5,000 paired bootstrap resamples of source dialogues (seed 20260928). Positive: full "
        "context answers more.",
        "",
    ]
    for dataset in inp.datasets:
        gaps = f.gaps.get(dataset, [])
        lines += [f"### {dataset}", ""]
        if not gaps:
            lines += ["Not available: needs `full_context` and P3 rows in the grid.", ""]
            continue
        by_method: dict[str, dict[str, Gap]] = {}
        for g in gaps:
            by_method.setdefault(g.method, {})[g.metric] = g
        rows = []
        for method, metrics in by_method.items():
            pair = [metrics.get("strict"), metrics.get("loose")]
            first = next(g for g in pair if g is not None)
            rows.append(
                [
                    inp.label(method),
                    f"{first.n_pairs} ({first.n_clusters})",
                    *(f"{num(g.reference)} / {num(g.score)}" if g else NONE for g in pair),
                    *(points(g.gap, g.low, g.high) if g else NONE for g in pair),
                ]
            )
        lines += table(
            [
                "method",
                "pairs (dialogues)",
                "P3-strict full / method",
                "P3-loose full / method",
                "gap strict [95% CI]",
                "gap loose [95% CI]",
            ],
            rows,
        )
    return lines


def answer_kinds(inp: ReportInput, f: Findings) -> list[str]:
    """What the reader answers per cell (Table 13), P2 and P3's value part."""
    lines = [
        "## What the reader answers",
        "",
        "Every answer in exactly one kind, first match wins: reader error, format error (no "
        "parseable JSON), correct (strict), superseded value (names the value the user "
        "replaced, by P2-strict's rule), explicit abstention, other. Each cell reads "
        "rate (count); the counts sum to n over all seeds. P3 is judged on its value part.",
        "",
    ]
    header = ["method", "probe", "r", "n", *(KIND_LABELS[k] for k in KINDS)]
    probes = [p.name for p in kind_table_probes()]

    def build(dataset: str) -> Table:
        return header, [
            [
                inp.label(method),
                probe,
                f"{ratio:g}",
                k.n,
                *(rate_count(k.rate(kind), k.counts[kind]) for kind in KINDS),
            ]
            for method in inp.methods
            for probe in probes
            for ratio in inp.ratios
            if (k := f.kinds.get((dataset, method, ratio, probe))) is not None
        ]

    return lines + per_dataset(inp, build)


def _mean(readings: list[Reading], rate: str) -> str:
    return num(seed_mean(readings, rate))


def retention_reading(inp: ReportInput, f: Findings) -> list[str]:
    """P2 retention rate, accuracy, accuracy on retained / lost examples (Table 6)."""
    lines = [
        "## Retention versus reading",
        "",
        "P2 per example: does the current value occur at phrase boundaries in what the reader "
        "was given (the compressed dialogue; for a KV press the text of the cache positions it "
        'kept), and is the answer strictly right? Rates are means over seeds. "read | kept" '
        'scores only the retained examples, so it is not a method ranking. "unknown": a KV '
        "answer without a kept-token record.",
        "",
    ]
    header = ["method", "r", "n", "P2-strict", "retention", "read | kept", "read | lost", "unknown"]

    def build(dataset: str) -> Table:
        rows = []
        for method in inp.methods:
            for ratio in inp.ratios:
                items = f.reading.get((dataset, method, ratio))
                if not items:
                    continue
                seeds = list(by_seed(items).values())
                rows.append(
                    [
                        inp.label(method),
                        f"{ratio:g}",
                        len(items),
                        _mean(seeds, "accuracy"),
                        _mean(seeds, "retention"),
                        _mean(seeds, "accuracy_retained"),
                        _mean(seeds, "accuracy_lost"),
                        sum(e.retained is None for e in items),
                    ]
                )
        return header, rows

    return lines + per_dataset(inp, build)


def slot_types(inp: ReportInput, f: Findings) -> list[str]:
    """P2-strict / retention by slot type at the main ratio (Table 7)."""
    lines = [
        "## By slot type",
        "",
        f"P2-strict / retention (n) by what the revised slot holds, at {_r(inp.main_ratio)}, "
        "means over seeds; the groups together cover every example.",
        "",
    ]

    def build(dataset: str) -> Table:
        per_method = {
            m: by_group(items, inp.slot_type)
            for m in inp.methods
            if (items := f.reading.get((dataset, m, inp.main_ratio)))
        }
        groups = sorted({g for groups in per_method.values() for g in groups})
        rows = []
        for method, grouped in per_method.items():
            cells = []
            for g in groups:
                seeds = list(by_seed(grouped.get(g, [])).values())
                n = len(grouped.get(g, []))
                cells.append(
                    f"{_mean(seeds, 'accuracy')} / {_mean(seeds, 'retention')} ({n})" if n else NONE
                )
            rows.append([inp.label(method), *cells])
        return ["method", *groups], rows

    return lines + per_dataset(inp, build)


def kv_methods(inp: ReportInput, f: Findings) -> list[str]:
    """KV presses: accuracy with the measured kept fraction, modes and fallbacks (§6.4)."""
    lines = ["## KV-cache methods", ""]
    methods = inp.kv_methods()
    if not methods:
        return [
            *lines,
            "No KV-cache press in this grid. Add one to `methods` in params.yaml (snapkv, "
            "pyramidkv, streamingllm, chunkkv; they run in the `hf` reader).",
            "",
        ]
    lines += [
        "Measured on every answer: the fraction of context cache entries the press kept "
        "(mean over answers), the mode that ran, and prompts that fell back from "
        "`context_only` to `full_prompt` (with why).",
        "",
    ]
    header = [
        "method",
        "r",
        "P2 strict",
        "P2 loose",
        "kept fraction",
        "modes",
        "fallbacks",
        "answers without record",
    ]

    def build(dataset: str) -> Table:
        rows = []
        for method in methods:
            for ratio in inp.ratios:
                cell = inp.cell(dataset, method, ratio)
                if cell is None:
                    continue
                kv = cell.stats.get("kv") or {}
                head = f.headline.get((dataset, method, ratio), {}).get("P2", {})
                fallbacks = kv.get("fallbacks") or {}
                reasons = "; ".join(
                    f"{r['count']}× {r['reason']}" for r in fallbacks.get("reasons", [])
                )
                rows.append(
                    [
                        inp.label(method),
                        f"{ratio:g}",
                        mean_sd(head.get("strict"), head.get("strict_sd")),
                        mean_sd(head.get("loose"), head.get("loose_sd")),
                        num(kv.get("kept_fraction_mean")),
                        ", ".join(f"{k}: {v}" for k, v in (kv.get("modes") or {}).items()) or NONE,
                        f"{fallbacks.get('count', 0)}" + (f" ({reasons})" if reasons else ""),
                        kv.get("rows_without_record", NONE),
                    ]
                )
        return header, rows

    return lines + per_dataset(inp, build)


def wider_budgets(inp: ReportInput, f: Findings) -> list[str]:
    """P1 and P2 at every ratio of the grid (mean ± SD over seeds)."""
    lines = [
        "## Wider budgets",
        "",
        "Strict accuracy at every retained fraction r of the grid (mean ± SD over seeds; "
        "loose in parentheses).",
        "",
    ]
    header = ["method", *(_r(r) for r in inp.ratios)]
    for dataset in inp.datasets:
        for probe in ("P2", "P1"):
            rows = []
            for method in inp.methods:
                cells = []
                for ratio in inp.ratios:
                    h = f.headline.get((dataset, method, ratio), {}).get(probe)
                    cells.append(
                        f"{mean_sd(h['strict'], h.get('strict_sd'))} ({num(h['loose'])})"
                        if h
                        else NONE
                    )
                rows.append([inp.label(method), *cells])
            lines += [f"### {dataset}, {probe}", "", *table(header, rows)]
    return lines
