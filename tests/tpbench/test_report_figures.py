"""Figure details a reader relies on: methods at one point drawn apart, the P3 panel naming the
full-context scores its gaps are measured from, and every figure a readable PNG."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from compressbench.tpbench.report.figures import (
    RetentionPoint,
    _offsets,
    _reference,
    gap_figure,
    look_for,
    retention_figure,
)
from compressbench.tpbench.report.findings import Gap


def test_methods_sharing_a_point_are_drawn_apart_and_centred() -> None:
    points = {"a": (0.7, 0.7), "b": (0.7, 0.7), "c": (0.2, 0.2), "d": (0.7, 0.7)}
    assert _offsets(points, 0.01) == pytest.approx({"a": -0.01, "b": 0.0, "c": 0.0, "d": 0.01})
    assert _offsets({"a": 1.5, "b": 1.5}) == pytest.approx({"a": -0.035, "b": 0.035})


def _gap(method: str, metric: str, reference: float, n: int = 52) -> Gap:
    return Gap(method, metric, n, 26, 0, reference, reference - 0.2, 0.2, 0.1, 0.3)


def test_the_gap_panel_names_the_full_context_scores() -> None:
    gaps = [_gap("recency", "strict", 0.96), _gap("recency", "loose", 0.981)]
    assert _reference(gaps) == (
        "full context: P3-strict 0.96, P3-loose 0.98; n = 52 paired answers per method"
    )


def test_figures_are_pngs_even_with_coincident_points(tmp_path: Path) -> None:
    look = look_for(["recency", "first_n"], {}, {"recency": "positional"})
    same = [RetentionPoint(m, 0.7, 0.7, 1.0) for m in ("recency", "first_n")]
    files = [
        retention_figure({"builtin": same}, look, tmp_path / "r.png", "t"),
        gap_figure({"builtin": [_gap("recency", "strict", 0.9)]}, look, tmp_path / "g.png", "t"),
    ]
    for file in files:
        with Image.open(file) as image:
            assert image.format == "PNG" and image.width >= 600
