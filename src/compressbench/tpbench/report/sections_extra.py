"""The report's sections that do not come from the grid's answers: reader-free retention, the
paired deletion experiment, P1 semantic judging, and where every number comes from (MLflow)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from compressbench.analysis.markdown import NONE, interval, num, pvalue, rate_count, table
from compressbench.analysis.stats import cluster_bootstrap
from compressbench.compress.method import FULL_CONTEXT
from compressbench.tpbench.probe_types import PROBE_TYPES, pipeline_probe_types
from compressbench.tpbench.report.answer_kinds import KIND_LABELS, KINDS, kind_counts
from compressbench.tpbench.report.model import Findings, ReportInput


def _retention_tables(
    inp: ReportInput, dataset: str, rows: Sequence[Mapping[str, Any]]
) -> list[str]:
    ratios = sorted({float(r["ratio"]) for r in rows})
    methods = list(dict.fromkeys(r["method"] for r in rows))
    by = {(r["method"], float(r["ratio"])): r for r in rows}

    def grid(field: str) -> list[list[str]]:
        return [
            [inp.label(m), *(num(by[(m, r)][field]) if (m, r) in by else NONE for r in ratios)]
            for m in methods
        ]

    header = ["method", *(f"r = {r:g}" for r in ratios)]
    n = max((int(r["n"]) for r in rows), default=0)
    n_p3 = max((int(r["n_p3"]) for r in rows), default=0)
    lines = [
        f"### {dataset}: P2 value retained ({n} change events)",
        "",
        *table(header, grid("p2_retention")),
    ]
    lines += [
        f"### {dataset}: P3 goal and value both retained ({n_p3} late events)",
        "",
        *table(header, grid("p3_joint_retention")),
    ]
    main = inp.main_ratio if inp.main_ratio in ratios else ratios[len(ratios) // 2]
    groups = sorted({g for r in rows for g in r["by_slot_type"]})
    slot_rows = []
    for m in methods:
        row = by.get((m, main))
        if row is None:
            continue
        cells = [row["by_slot_type"].get(g) for g in groups]
        slot_rows.append(
            [
                inp.label(m),
                *(f"{num(c['p2_retention'])} ({c['n']})" if c else NONE for c in cells),
            ]
        )
    lines += [
        f"### {dataset}: P2 value retained by slot type at r = {main:g}",
        "",
        *table(["method", *groups], slot_rows),
    ]
    return lines


def reader_free_retention(inp: ReportInput) -> list[str]:
    """Answer retention without a reader (paper §6.1.3), every dialogue of each corpus."""
    lines = [
        "## Answer retention (no reader)",
        "",
        "Does the answer survive compression at all? For every eligible change event of the "
        "corpus (not only the sampled probes): the share whose current value (P2) - or "
        "initial goal and current value together (P3) - still occurs at phrase boundaries in "
        "the text a method keeps. No model answers anything here, so these numbers hold for "
        "any reader. From `metrics/retention/<dataset>.json` (the retention stage).",
        "",
    ]
    for dataset in inp.datasets:
        data = inp.retention.get(dataset)
        if not data or not data.get("rows"):
            lines += [
                f"### {dataset}",
                "",
                "Not run: no `metrics/retention/" + dataset + ".json`.",
                "",
            ]
            continue
        lines += _retention_tables(inp, dataset, data["rows"])
    return lines


CONDITION_LABELS = {
    FULL_CONTEXT: "full context",
    "cf_origin_minus_origin": "remove the update turn",
    "cf_origin_minus_control_origin": "remove one matched irrelevant turn (control)",
    "cf_origin_minus_transition_support": "remove the update turn and all answer-bearing turns",
    "cf_origin_minus_control_support": "remove as many matched irrelevant turns (control)",
}


def _deletion_kinds(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the reader answers in each deletion condition (paper Table 13; the experiment asks
    P2, so P2's kind rule)."""
    rule = PROBE_TYPES["P2"].kind_rule
    if not rows or rule is None:
        return []
    by_condition: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_condition.setdefault(str(row["condition"]), []).append(row)
    body = []
    for condition in [*CONDITION_LABELS, *sorted(set(by_condition) - set(CONDITION_LABELS))]:
        if condition in by_condition:
            k = kind_counts(by_condition[condition], rule)
            body.append(
                [
                    CONDITION_LABELS.get(condition, condition),
                    k.n,
                    *(rate_count(k.rate(kind), k.counts[kind]) for kind in KINDS),
                ]
            )
    return [
        "What the reader answers in each condition: rate (count); superseded = the value the "
        "user replaced, by P2-strict's rule.",
        "",
        *table(["condition", "n", *(KIND_LABELS[k] for k in KINDS)], body),
    ]


def _unmatched(unmatched: Mapping[str, Any]) -> str:
    """One line on the items whose matched control failed (each with its pair and reason)."""
    items = [
        f"{i.get('probe_id')} ({i.get('pair')}: {i.get('reason')})"
        for i in unmatched.get("items") or []
        if isinstance(i, Mapping)
    ]
    shown = "; ".join(items[:10]) + (f"; … {len(items) - 10} more" if len(items) > 10 else "")
    return (
        "Items without a matched control (left out of that pair only, never dropped): single "
        f"{unmatched.get('single', 0)}, all-evidence {unmatched.get('all_evidence', 0)}"
        + (f": {shown}" if items else "")
        + "."
    )


def deletions(inp: ReportInput) -> list[str]:
    """The paired deletion experiment (paper §6.3, Tables 11-12), when its stage ran."""
    lines = ["## Deleting the turn that carries the update", ""]
    if inp.deletions is None:
        return [*lines, "Not run: this pipeline has no deletion stage.", ""]
    lines += [
        "Full-context P2 probes with whole turns removed. Accuracy with 95% Wilson intervals; "
        "flips count items answered correctly in full context that turn wrong. McNemar: exact "
        "two-sided test on the discordant pairs (b = only the deletion wrong, c = only the "
        "control wrong), among items correct in full context and over all matched items.",
        "",
    ]
    for dataset in inp.datasets:
        data = inp.deletions.get(dataset)
        if not data:
            lines += [
                f"### {dataset}",
                "",
                "Not run: no `metrics/deletions/" + dataset + ".json`.",
                "",
            ]
            continue
        lines += [
            f"### {dataset} (seed {data.get('seed', NONE)}, {data.get('n_probes', NONE)} probes)",
            "",
        ]
        lines += table(
            ["condition", "n", "strict [95% CI]", "loose [95% CI]", "format errors"],
            [
                [
                    CONDITION_LABELS.get(c["condition"], c["condition"]),
                    c["n"],
                    interval(c.get("strict"), c.get("strict_ci")),
                    interval(c.get("loose"), c.get("loose_ci")),
                    num(c.get("format_error_rate")),
                ]
                for c in data.get("conditions", [])
            ],
        )
        lines += table(
            [
                "pair",
                "matched",
                "correct in full",
                "deletion flips",
                "control flips",
                "McNemar b / c, p (full-correct)",
                "McNemar b / c, p (all matched)",
            ],
            [
                [
                    p["pair"],
                    p["n_matched"],
                    p["n_correct_full"],
                    p["deletion_flips"],
                    p["control_flips"],
                    f"{p['mcnemar_b']} / {p['mcnemar_c']}, {pvalue(p['mcnemar_p'])}",
                    f"{p['mcnemar_all_b']} / {p['mcnemar_all_c']}, {pvalue(p['mcnemar_all_p'])}",
                ]
                for p in data.get("pairs", [])
            ],
        )
        lines += _deletion_kinds(inp.deletion_rows.get(dataset, []))
        lines += [_unmatched(data.get("unmatched") or {}), ""]
    return lines


SEMANTIC_TITLE = "## P1 semantic (judged)"
NOT_JUDGED = "Not judged (judge.enabled is false; see README)."


def semantic(inp: ReportInput, f: Findings) -> list[str]:
    """P1 semantic accuracy from the judge stage's verdicts (paper Table 4), beside P1-strict
    and P1-loose; "not judged" when judging is off or judged nothing."""
    lines = [SEMANTIC_TITLE, ""]
    if inp.judge is None:
        return [
            *lines,
            f"{NOT_JUDGED} Set `judge.enabled: true` and a judge server (`judge.base_url`, "
            "`judge.model`) in params.yaml, then `dvc repro`.",
            "",
        ]
    if not inp.verdicts:
        return [*lines, f"Not judged: no P1 answers in this grid for the judge {inp.judge}.", ""]
    lines += [
        f"Judge {inp.judge}. Semantic: the share of P1 answers the judge calls equivalent to "
        "the user's initial goal; null verdicts and judge errors count without credit. 95% "
        "interval: 5,000 resamples of source dialogues (seeds pooled). P1-strict / P1-loose: "
        "the lexical scores of the same answers (seed means).",
        "",
    ]
    rows = []
    for key in itertools.product(inp.datasets, inp.methods, inp.ratios):
        verdicts = inp.verdicts.get(key)
        if not verdicts:
            continue
        values = [1.0 if v.get("equivalent") is True else 0.0 for v in verdicts]
        ci = cluster_bootstrap(
            values, [str(v.get("dialogue_id")) for v in verdicts], resamples=5000
        )
        p1 = f.headline.get(key, {}).get("P1", {})
        dataset, method, ratio = key
        rows.append(
            [
                dataset,
                inp.label(method),
                f"{ratio:g}",
                len(values),
                interval(ci.estimate, (ci.low, ci.high)),
                f"{num(p1.get('strict'))} / {num(p1.get('loose'))}",
                sum(v.get("equivalent") is False for v in verdicts),
                sum(v.get("equivalent") is None and v.get("error") is None for v in verdicts),
                sum(v.get("error") is not None for v in verdicts),
            ]
        )
    header = ["dataset", "method", "r", "n", "semantic [95% CI]", "P1-strict / loose"]
    return lines + table([*header, "not equivalent", "null", "errors"], rows)


MARKS = {True: "✓", False: "scores changed since", None: ""}  # by RunRef.verified


def _run(ref: Any, ids: bool) -> str:
    if ref is None:
        return "not logged"
    mark = MARKS[ref.verified]
    return f"`{ref.run_id}` {mark}".rstrip() if ids else mark or "logged"


RUN_IDS = "runs.md"  # the report run's artifact (under report/) naming every cell's run id


def provenance(inp: ReportInput, *, ids: bool = False) -> list[str]:
    """Which MLflow run each cell's numbers come from (✓: the run's recorded sha256 of the
    scored file equals the file the report read). ``ids``: name the runs by id (the report
    run's ``runs.md`` artifact); without, the report file holds no run id, since ids differ
    on every run and the report is a DVC output that must reproduce byte for byte."""
    where = (
        [f"- {note}" for note in inp.run_notes]
        if ids
        else [
            "- Run ids are not written here: they differ on every run, and this file is a DVC "
            f"output that reproduces byte for byte. The report's MLflow run carries `report/"
            f"{RUN_IDS}`, this table with every run's id; in the MLflow UI, a cell's run is the "
            "child of the newest finished `metrics` run with its `dataset`, `method`, `ratio`, "
            "`seed` and `probe` parameters."
        ]
    )
    lines = [
        "## Where every number comes from",
        "",
        "Each (dataset, method, r, seed, probe) cell is one MLflow run of the metrics stage "
        "(`mlflow ui`); ✓ marks a run whose recorded sha256 of the scored file equals the file "
        "this report read.",
        "",
        *where,
        "",
    ]
    probes = [p.name for p in pipeline_probe_types()]  # one column per registered probe type
    rows = []
    for dataset in inp.datasets:
        for method in inp.methods:
            for ratio in inp.ratios:
                cell = inp.cell(dataset, method, ratio)
                if cell is None:
                    continue
                present = {(r["probe_type"], int(r["seed"])) for r in cell.scores}
                for seed in inp.seeds:
                    refs = [
                        _run(inp.runs.get((dataset, p, seed, ratio, method)), ids)
                        if (p, seed) in present
                        else NONE
                        for p in probes
                    ]
                    rows.append([dataset, inp.label(method), f"{ratio:g}", seed, *refs])
    header = ["dataset", "method", "r", "seed", *(f"{p} run" for p in probes)]
    return lines + table(header, rows)
