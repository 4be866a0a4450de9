"""The report's figures as PNG files (matplotlib, Agg backend): one panel per dataset.

* :func:`rank_figure` - rank changes of each method across probe metrics (paper Figure 2):
  rank 1 on top, ties at their average rank; solid lines for selectors that use position
  alone, dashed for those that read the dialogue's content.
* :func:`retention_figure` - answer retention against accuracy per method: P2-strict (filled)
  and accuracy on the examples whose value survived (hollow), joined by a line.
* :func:`gap_figure` - a forest plot of the P3 gap to full context with its intervals.

A panel without data says why instead of staying blank, so every figure always exists.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D

from compressbench.jsonl import atomic_writer
from compressbench.tpbench.report.findings import Gap

DPI = 150
PANEL_WIDTH = 5.2
MIN_WIDTH = 7.5  # inches: room for the title and the legend under a single panel
CHARS_PER_INCH = 13  # legend text at 8 pt
TIE_OFFSET = 0.07  # vertical offset between methods that share a rank (visibility only)
DODGE = 0.012  # horizontal offset between methods at the same retention and accuracy
LINESTYLES: dict[str, Any] = {"positional": "-", "content": "--"}


@dataclass(frozen=True)
class Look:
    """How methods are drawn: display names, colours, and which ones use position alone."""

    labels: Mapping[str, str]
    colors: Mapping[str, Any]
    styles: Mapping[str, str]  # method -> "positional" | "content" | other

    def label(self, method: str) -> str:
        return self.labels.get(method, method)


def look_for(methods: Sequence[str], labels: Mapping[str, str], styles: Mapping[str, str]) -> Look:
    """One colour per method (tab10, then tab20), stable across every figure."""
    palette = plt.get_cmap("tab10" if len(methods) <= 10 else "tab20")
    colors = {m: palette(i % palette.N) for i, m in enumerate(methods)}
    return Look(labels=labels, colors=colors, styles=styles)


def _panels(n: int, height: float, **kwargs: Any) -> tuple[Any, list[Any]]:
    width = max(MIN_WIDTH, PANEL_WIDTH * max(n, 1))
    fig, axes = plt.subplots(1, max(n, 1), figsize=(width, height), layout="constrained", **kwargs)
    return fig, list(axes) if n > 1 else [axes]


def _empty(ax: Any, title: str, reason: str) -> None:
    ax.set_title(title)
    ax.text(0.5, 0.5, reason, ha="center", va="center", wrap=True, transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])


def _columns(fig: Any, legend: list[Any]) -> int:
    """As many legend columns as the figure's width holds for its longest label."""
    longest = max((len(str(h.get_label())) for h in legend), default=1)
    fits = int(fig.get_figwidth() * CHARS_PER_INCH) // (longest + 6)
    return max(1, min(len(legend), fits))


def _save(fig: Any, path: Path, legend: list[Any], title: str) -> Path:
    fig.suptitle(title, fontsize=11)
    if legend:
        fig.legend(
            handles=legend,
            loc="outside lower center",
            ncols=_columns(fig, legend),
            frameon=False,
            fontsize=8,
        )
    try:
        with atomic_writer(path, "wb") as fh:
            fig.savefig(fh, format="png", dpi=DPI)
    finally:
        plt.close(fig)
    return path


def _offsets(column: Mapping[str, Any], step: float = TIE_OFFSET) -> dict[str, float]:
    """Small offsets (multiples of ``step``, centred) that separate methods sharing a value."""
    sizes = Counter(column.values())
    seen: Counter[Any] = Counter()
    out = {}
    for method, value in column.items():
        k = seen[value]
        seen[value] += 1
        out[method] = (k - (sizes[value] - 1) / 2) * step
    return out


def rank_figure(
    panels: Mapping[str, Mapping[str, Sequence[float]]],
    columns: Sequence[str],
    look: Look,
    path: Path,
    title: str,
) -> Path:
    """Bump chart: ``panels[dataset][method]`` = the method's rank in each of ``columns``."""
    fig, axes = _panels(len(panels), 4.6)
    shown: list[str] = []
    for ax, (dataset, table) in zip(axes, panels.items(), strict=False):
        if len(table) < 2:
            _empty(ax, dataset, "needs at least two compressed turn selectors")
            continue
        offsets = [_offsets({m: r[i] for m, r in table.items()}) for i in range(len(columns))]
        for method, row in table.items():
            ys = [r + offsets[i][method] for i, r in enumerate(row)]
            ax.plot(
                range(len(columns)),
                ys,
                marker="o",
                color=look.colors[method],
                linestyle=LINESTYLES.get(look.styles.get(method, ""), ":"),
                linewidth=2,
            )
            shown += [method] if method not in shown else []
        n = len(table)
        ax.set_ylim(n + 0.5, 0.5)
        ax.set_yticks(range(1, n + 1))
        ax.set_xticks(range(len(columns)), columns)
        ax.set_xlim(-0.25, len(columns) - 0.75)
        ax.set_ylabel("rank (1 = best)")
        ax.set_title(dataset)
        ax.grid(axis="y", alpha=0.3)
        for i in range(len(columns)):  # a column where every method ties says so
            if len({r[i] for r in table.values()}) == 1:
                ax.annotate(
                    "all tie",
                    (i, n + 0.5),
                    xytext=(0, 4),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize=8,
                    color="dimgrey",
                )
    legend = [
        Line2D(
            [],
            [],
            color=look.colors[m],
            linestyle=LINESTYLES.get(look.styles.get(m, ""), ":"),
            marker="o",
            label=look.label(m),
        )
        for m in shown
    ]
    legend += [
        Line2D([], [], color="black", linestyle="-", label="uses position alone"),
        Line2D([], [], color="black", linestyle="--", label="uses dialogue content"),
    ]
    return _save(fig, path, legend, title)


@dataclass(frozen=True)
class RetentionPoint:
    """One method on one dataset: retention rate, accuracy, accuracy on retained examples."""

    method: str
    retention: float
    accuracy: float
    accuracy_retained: float | None


def retention_figure(
    panels: Mapping[str, Sequence[RetentionPoint]], look: Look, path: Path, title: str
) -> Path:
    """Retention (x) against accuracy (y) per method, one panel per dataset."""
    fig, axes = _panels(len(panels), 5.6)
    shown: list[str] = []
    for ax, (dataset, points) in zip(axes, panels.items(), strict=False):
        if not points:
            _empty(ax, dataset, "no P2 answers with known retention")
            continue
        ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
        dodge = _offsets(
            {p.method: (round(p.retention, 3), round(p.accuracy, 3)) for p in points}, DODGE
        )
        for p in points:
            color = look.colors[p.method]
            x = p.retention + dodge[p.method]  # methods at one point drawn side by side
            if p.accuracy_retained is not None:
                ax.plot([x] * 2, [p.accuracy, p.accuracy_retained], color=color, lw=1)
                ax.scatter(
                    x,
                    p.accuracy_retained,
                    s=60,
                    facecolors="none",
                    edgecolors=[color],
                    linewidths=1.5,
                    zorder=3,
                )
            ax.scatter(x, p.accuracy, s=60, color=color, zorder=4)
            shown += [p.method] if p.method not in shown else []
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(-0.03, 1.03)
        ax.set_box_aspect(1)
        ax.set_xlabel("answer retention (value survives compression)")
        ax.set_ylabel("P2 accuracy (strict)")
        ax.set_title(dataset)
        ax.grid(alpha=0.3)
    legend = [
        Line2D([], [], color=look.colors[m], marker="o", linestyle="", label=look.label(m))
        for m in shown
    ]
    legend += [
        Line2D([], [], color="black", marker="o", linestyle="", label="P2-strict, all examples"),
        Line2D(
            [],
            [],
            color="black",
            marker="o",
            linestyle="",
            markerfacecolor="none",
            label="P2-strict on retained examples",
        ),
        Line2D([], [], color="grey", linestyle=":", label="accuracy = retention"),
    ]
    return _save(fig, path, legend, title)


METRIC_MARKERS = {"strict": ("o", -0.15), "loose": ("s", 0.15)}
MIN_GAP_SPAN = 10.0  # percentage points each side of 0, at least


def _reference(gaps: Sequence[Gap]) -> str:
    """The full-context scores every gap of a panel is measured from (and on how many pairs)."""
    ref = {g.metric: g for g in gaps}
    parts = [f"P3-{m} {ref[m].reference:.2f}" for m in METRIC_MARKERS if m in ref]
    n = max(g.n_pairs for g in gaps)
    return f"full context: {', '.join(parts)}; n = {n} paired answers per method"


def gap_figure(panels: Mapping[str, Sequence[Gap]], look: Look, path: Path, title: str) -> Path:
    """Forest plot of full context − method (percentage points) with 95% intervals."""
    n_rows = max((len({g.method for g in gaps}) for gaps in panels.values()), default=1)
    fig, axes = _panels(len(panels), 1.8 + 0.45 * n_rows, sharex=True)  # one scale to compare
    for ax, (dataset, gaps) in zip(axes, panels.items(), strict=False):
        if not gaps:
            _empty(ax, dataset, "no P3 rows paired with full context")
            continue
        methods = list(dict.fromkeys(g.method for g in gaps))
        for g in gaps:
            marker, dy = METRIC_MARKERS.get(g.metric, ("D", 0.0))
            y = methods.index(g.method) + dy
            ax.errorbar(
                100 * g.gap,
                y,
                xerr=[[100 * (g.gap - g.low)], [100 * (g.high - g.gap)]],
                fmt=marker,
                color=look.colors[g.method],
                markerfacecolor=look.colors[g.method] if g.metric == "strict" else "white",
                capsize=3,
            )
        ax.axvline(0, color="grey", linewidth=1)
        ax.set_yticks(range(len(methods)), [look.label(m) for m in methods])
        ax.set_ylim(len(methods) - 0.5, -0.5)
        ax.set_xlabel("full context − method, percentage points (> 0: the method answers less)")
        ax.set_title(f"{dataset}\n{_reference(gaps)}", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        low, high = ax.get_xlim()  # never a degenerate scale (every gap 0)
        ax.set_xlim(min(low, -MIN_GAP_SPAN), max(high, MIN_GAP_SPAN))
        if all(g.reference == 0 for g in gaps):  # say why every gap is 0
            ax.set_title(f"{dataset}\n(full context answers no P3 probe: no gap can show)")
    legend = [
        Line2D(
            [],
            [],
            color="black",
            marker=m,
            linestyle="",
            markerfacecolor=fill,
            label=f"P3-{metric}, 95% interval",
        )
        for metric, (m, _), fill in zip(
            METRIC_MARKERS, METRIC_MARKERS.values(), ("black", "white"), strict=True
        )
    ]
    return _save(fig, path, legend, title)
