"""``reports/keepbench.md``: this run in the paper's Table 3 layout, FLOPs, errors, reference.

Input: the cells of ``reports/keepbench_full.json`` (the metrics stage). Columns as Table 3
(per subset of :data:`~compressbench.keepbench.subsets.SUBSETS`: Rate, Para-Rec / Cond-Rec,
All-Rec; then EPR) plus Table 9's overall All-Rec and TFLOPs per case. Bold marks the best
and underlining the second best of each preservation column and of EPR, as in the paper. A
judge that only approximates entailment (``lexical``) is labelled as such above the table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from compressbench.analysis.markdown import table
from compressbench.keepbench.report.reference import PAPER_TABLE3, PaperRow
from compressbench.keepbench.subsets import SUBSET_NAMES, SUBSETS

# The value columns after "Method": each subset's (its metrics keys), then the cell's own.
SUBSET_COLUMNS: tuple[tuple[str, str], ...] = tuple(
    (column, key)
    for s in SUBSETS
    for column, key in zip(s.table_columns, s.table_keys, strict=True)
)
HEADER = ("Method", *(c for c, _ in SUBSET_COLUMNS), "EPR", "Overall All-Rec", "TFLOPs/case")
# How each value column prints: a rate (×), EPR (3 decimals), TFLOPs, else a percentage.
KINDS = (*(("rate" if k == "rate" else "pct") for _, k in SUBSET_COLUMNS), "epr", "pct", "tflops")
# Columns ranked best / second best (indices into HEADER): the preservation columns and EPR.
RANKED = tuple(i + 1 for i, kind in enumerate(KINDS) if kind in ("pct", "epr"))
NAMES = {
    "recomp_extractive": "RECOMP (extractive)",
    "recomp_abstractive": "RECOMP (abstractive)",
    "exit": "EXIT",
    "brief_pro": "BRIEF-Pro",
    "llm": "LLM",
}


def method_label(cell: Mapping[str, Any], several_budgets: bool) -> str:
    name = NAMES.get(cell["compressor"], cell["compressor"])
    model = (cell.get("model") or {}).get("model_id")
    if model and cell["compressor"] in ("llm", "brief_pro"):
        name = f"{name}: {str(model).rsplit('/', 1)[-1]}"
    return f"{name} (x{cell['budget_scale']:g} budget)" if several_budgets else name


def _rate(v: float | None) -> str:
    return "—" if v is None else f"{v:.1f}×"


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.1f}%"


def _num(v: float | None, digits: int) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def _row_values(cell: Mapping[str, Any]) -> list[float | None]:
    s = cell["summary"]
    sub = s["subsets"]

    def get(subset: str, key: str) -> float | None:
        value = sub.get(subset, {}).get(key)
        return None if value is None else float(value)

    return [
        *(get(subset.name, key) for subset in SUBSETS for key in subset.table_keys),
        s.get("epr"),
        s.get("overall_all_rec"),
        s.get("tflops_per_case"),
    ]


FORMATS = {
    "rate": _rate,
    "epr": lambda v: _num(v, 3),
    "tflops": lambda v: "—" if v is None else f"{v:.4g}",
    "pct": _pct,
}


def _format(values: Sequence[float | None]) -> list[str]:
    return [FORMATS[kind](v) for kind, v in zip(KINDS, values, strict=True)]


def _mark(rows: list[list[str]], values: list[list[float | None]]) -> None:
    """Bold the best and underline the second best value of each ranked column."""
    for col in RANKED:
        present = sorted({x for v in values if (x := v[col - 1]) is not None}, reverse=True)
        if len(values) < 2 or not present or present[0] <= 0:
            continue  # nothing to rank (a column of zeros marks nothing)
        for row, v in zip(rows, values, strict=True):
            if v[col - 1] == present[0]:
                row[col] = f"**{row[col]}**"
            elif len(present) > 1 and present[1] > 0 and v[col - 1] == present[1]:
                row[col] = f"<u>{row[col]}</u>"


def results_table(cells: Sequence[Mapping[str, Any]]) -> list[str]:
    several = len({c["budget_scale"] for c in cells}) > 1
    values = [_row_values(c) for c in cells]
    rows = [[method_label(c, several), *_format(v)] for c, v in zip(cells, values, strict=True)]
    _mark(rows, values)
    return table(HEADER, rows)


def _paper_row(r: PaperRow) -> list[str]:
    values: list[float | None] = [
        *(v for s in SUBSETS for v in r.subsets[s.name]),
        r.epr,
        r.overall,
        r.tflops,
    ]
    return [r.method, *_format(values)]


def reference_table() -> list[str]:
    return table(HEADER, [_paper_row(r) for r in PAPER_TABLE3])


def _flops_lines(cells: Sequence[Mapping[str, Any]]) -> list[str]:
    rows = []
    for c in cells:
        f = c["compressed_stats"]["flops"]
        coeffs = ", ".join(f"{k}={v:,}" for k, v in (f.get("coefficients") or {}).items())
        prefix = ", ".join(f"{k} {v}" for k, v in (f.get("prefix_tokens") or {}).items())
        rows.append(
            [
                method_label(c, True),
                f.get("formula") or "—",
                coeffs or "—",
                prefix or "—",
                f.get("note") or "",
            ]
        )
    return table(("Cell", "Formula", "Coefficients", "Shared prefix tokens", "Note"), rows)


def _missing_lines(cells: Sequence[Mapping[str, Any]]) -> list[str]:
    rows = []
    for c in cells:
        for subset in SUBSET_NAMES:
            sub = c["summary"]["subsets"].get(subset)
            if not sub:
                continue
            scope = ", ".join(f"{k}: {v:.0f}%" for k, v in sub["failure_scope"].items()) or "—"
            groups = sub["group_retention"]
            retained = f"none {groups['none']}, single {groups['single']}, multi {groups['multi']}"
            rows.append([method_label(c, True), subset, scope, retained])
    header = (
        "Cell",
        "Subset",
        "Failed cases by missing propositions (Table 5)",
        "Failed multi-group cases: groups with evidence kept",
    )
    return table(header, rows)


def viewer_links(cells: Sequence[Mapping[str, Any]], viewer: str) -> list[str]:
    """One line linking each compressor to its cases in the case viewer (``viewer``: the
    page's path relative to the report), filtered as the page's own compressor filter does."""
    names = list(dict.fromkeys(str(c["compressor"]) for c in cells))
    links = [f"[{NAMES.get(n, n)}]({viewer}#{urlencode({'compressor': n})})" for n in names]
    return [f"Each compressor's cases, proposition by proposition: {' · '.join(links)}."]


def keepbench_markdown(
    cells: Sequence[Mapping[str, Any]],
    *,
    cases_source: str,
    figure: str | None,
    viewer: str | None = None,
) -> str:
    """The whole report (see the module docstring); ``viewer``: the case viewer's page
    relative to the report, linked under the results table (None: no link)."""
    judge = cells[0]["judge"] if cells else "-"
    approx = any(c.get("judge_approximation") for c in cells)
    n = cells[0]["summary"]["cases"] if cells else 0
    lines = [
        "# KEEP-Bench results",
        "",
        f"Cases: `{cases_source}` ({n} evaluation cases). Judge: `{judge}`.",
    ]
    if approx:
        lines += [
            "",
            "> **Approximation.** The `lexical` judge labels a proposition preserved when enough of"
            " its normalised content tokens appear in the compressed context. It is an offline"
            " stand-in for the paper's LLM entailment judge; its recalls are not comparable with"
            " the paper's.",
        ]
    lines += [
        "",
        "## This run (Table 3 layout)",
        "",
        "Rate: mean source tokens / mean compressed tokens (o200k). Recalls in percent. EPR ="
        " 6·sqrt(overall All-Rec / TFLOPs per case), for methods with a FLOPs estimate;"
        " overall All-Rec is case-weighted over the subsets.",
        "",
        *results_table(cells),
    ]
    if viewer:
        lines += ["", *viewer_links(cells, viewer)]
    if figure:
        lines += ["", f"![Overall All-Rec vs TFLOPs per case]({figure})"]
    lines += ["", "## FLOPs accounting (App. C.4)", "", *_flops_lines(cells)]
    lines += ["", "## Missing propositions (error analysis)", "", *_missing_lines(cells)]
    lines += [
        "",
        "## Reference: the paper's Table 3",
        "",
        "Published numbers (default budget; RECOMP (abstractive) without length control). Overall"
        " All-Rec is case-weighted over 4,102 cases; TFLOPs per case back-computed from EPR.",
        "",
        *reference_table(),
    ]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).rstrip("\n") + "\n"
