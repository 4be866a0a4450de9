"""The per-method summary at the top of the TPBench page: for each (dataset, ratio) a table
of methods by probe type, each cell linking into its cases (all, wrong, lost against full
context). Counted from the same cases the page shows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from compressbench.compress.method import FULL_CONTEXT

FULL = FULL_CONTEXT


def cell_link(**filters: Any) -> str:
    """The page's hash for a filtered view: ``#dataset=sgd&method=recency&probe=P2``."""
    return "#" + urlencode({k: str(v) for k, v in filters.items() if v not in (None, "")})


def _right(answer: Mapping[str, Any] | None) -> bool:
    return bool(answer) and answer is not None and answer.get("strict") == 1


def summary_tables(
    cases: Sequence[Mapping[str, Any]], methods: Sequence[str], probe_types: Sequence[str]
) -> list[dict[str, Any]]:
    """One table per (dataset, ratio): rows of methods, cells per probe type with n, strict
    mean, wrong and lost-against-full-context counts and their links."""
    groups: dict[tuple[str, float], list[Mapping[str, Any]]] = {}
    for case in cases:
        groups.setdefault((case["dataset"], case["ratio"]), []).append(case)
    tables = []
    for (dataset, ratio), group in groups.items():
        shown = [p for p in probe_types if any(c["probe_type"] == p for c in group)]
        rows = []
        for method in methods:
            cells: list[dict[str, Any] | None] = []
            for probe in shown:
                answered = [c for c in group if c["probe_type"] == probe and method in c["answers"]]
                if not answered:
                    cells.append(None)
                    continue
                right = sum(_right(c["answers"][method]) for c in answered)
                lost = sum(
                    _right(c["answers"].get(FULL)) and not _right(c["answers"][method])
                    for c in answered
                )
                base = {"dataset": dataset, "ratio": repr(ratio), "method": method, "probe": probe}
                cells.append(
                    {
                        "n": len(answered),
                        "right": right,
                        "strict": right / len(answered),
                        "wrong": len(answered) - right,
                        "lost": None if method == FULL else lost,
                        "href": cell_link(**base),
                        "href_wrong": cell_link(**base, outcome="wrong"),
                        "href_lost": cell_link(**base, outcome="full_right_method_wrong"),
                    }
                )
            rows.append({"method": method, "cells": cells})
        tables.append(
            {"dataset": dataset, "ratio": repr(ratio), "probe_types": shown, "rows": rows}
        )
    return tables
