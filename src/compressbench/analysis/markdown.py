"""Markdown building blocks of the reports: tables and number formats ("–" for no value)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

NONE = "–"


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """A GitHub markdown table (cells converted with ``str``; ``|`` escaped)."""

    def line(cells: Sequence[Any]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return [line(header), "|" + "---|" * len(header), *(line(r) for r in rows), ""]


def missing(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def num(value: float | None, digits: int = 3) -> str:
    """``0.491``; "–" for None or NaN."""
    return NONE if missing(value) else f"{value:.{digits}f}"


def mean_sd(mean: float | None, sd: float | None, digits: int = 3) -> str:
    """``0.491 ± 0.012``, or the mean alone without an SD (one seed)."""
    if missing(mean):
        return NONE
    return num(mean, digits) if missing(sd) else f"{num(mean, digits)} ± {num(sd, digits)}"


def rate_count(rate: float | None, count: int) -> str:
    """``0.250 (5)``."""
    return f"{num(rate)} ({count})"


def points(value: float, low: float, high: float) -> str:
    """A difference of proportions in percentage points with its interval: ``29.7 [23.5, 35.9]``."""
    return f"{100 * value:.1f} [{100 * low:.1f}, {100 * high:.1f}]"


def interval(value: float | None, ci: Sequence[float] | None, digits: int = 3) -> str:
    """``0.801 [0.733, 0.854]``."""
    if missing(value):
        return NONE
    if not ci or any(missing(c) for c in ci):
        return num(value, digits)
    return f"{num(value, digits)} [{num(ci[0], digits)}, {num(ci[1], digits)}]"


def pvalue(p: float | None) -> str:
    """``2.38e-07``; "–" for None."""
    return NONE if missing(p) else f"{p:.3g}"
