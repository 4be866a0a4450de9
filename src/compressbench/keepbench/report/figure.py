"""The preservation-vs-compute figure (the paper's Figure 3): overall All-Rec against TFLOPs per
case on a log axis, this run's cells with their Pareto frontier (dashed), the paper's
open-weight and dedicated methods in grey with theirs (dotted) for scale."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.keepbench.report.reference import PAPER_TABLE3


@dataclass(frozen=True)
class Point:
    label: str
    tflops: float
    all_rec: float


def pareto_frontier(points: Sequence[Point]) -> list[Point]:
    """Points no other point beats (at most the compute and at least the All-Rec, one of them
    strictly), by increasing compute."""
    ordered = sorted(points, key=lambda p: (p.tflops, -p.all_rec))
    frontier: list[Point] = []
    for p in ordered:
        if not frontier or p.all_rec > frontier[-1].all_rec:
            if frontier and frontier[-1].tflops == p.tflops:
                frontier.pop()
            frontier.append(p)
    return frontier


def paper_points() -> list[Point]:
    return [Point(r.method, r.tflops, r.overall) for r in PAPER_TABLE3 if r.tflops is not None]


def _label_offsets(points: Sequence[Point]) -> list[tuple[int, int]]:
    """Label offsets (points): below instead of above when a label would sit on an earlier one
    (close on the log-compute axis and in All-Rec)."""
    placed: list[tuple[float, float]] = []
    out = []
    for p in points:
        x, y = math.log10(max(p.tflops, 1e-12)), p.all_rec
        clash = any(abs(x - px) < 0.6 and abs(y - py) < 3.0 for px, py in placed)
        dy = -9 if clash else 3
        placed.append((x, y + (-3 if clash else 0)))
        out.append((4, dy))
    return out


def _draw(
    ax: Any,
    points: Sequence[Point],
    *,
    color: str,
    line: str,
    size: float,
    font: float,
    name: str,
) -> None:
    ordered = sorted(points, key=lambda p: (p.tflops, p.all_rec))
    ax.scatter(
        [p.tflops for p in ordered],
        [p.all_rec for p in ordered],
        s=size,
        color=color,
        zorder=3,
        label=name,
    )
    for p, offset in zip(ordered, _label_offsets(ordered), strict=True):
        ax.annotate(
            p.label,
            (p.tflops, p.all_rec),
            textcoords="offset points",
            xytext=offset,
            fontsize=font,
            color=color,
        )
    front = pareto_frontier(ordered)
    if len(front) > 1:
        ax.plot(
            [p.tflops for p in front],
            [p.all_rec for p in front],
            line,
            color=color,
            linewidth=1.2,
            zorder=2,
            label=f"{name}: Pareto frontier",
        )


def preservation_figure(
    points: Sequence[Point], path: str | Path, *, judge_note: str = "", with_paper: bool = True
) -> Path:
    """Write the PNG; cells without a FLOPs estimate are left out by the caller."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(8.0, 5.2), dpi=150)
    if with_paper:
        _draw(
            ax, paper_points(), color="#9a9a9a", line=":", size=18, font=6, name="paper (Table 3)"
        )
    if points:
        _draw(ax, points, color="#c0392b", line="--", size=40, font=8, name="this run")
    ax.set_xscale("log")
    ax.set_xlabel("TFLOPs per case (log scale)")
    ax.set_ylabel("Overall All-Rec (%)")
    ax.set_ylim(bottom=-2, top=max([70.0, *(p.all_rec + 5 for p in points)]))
    title = "Evidence preservation vs. compute"
    ax.set_title(f"{title}\n{judge_note}" if judge_note else title, fontsize=10)
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    tmp = out.with_suffix(".tmp.png")
    fig.savefig(tmp)
    plt.close(fig)
    tmp.replace(out)
    return out
