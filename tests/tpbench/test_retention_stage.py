"""The retention stage's DVC metrics file is reproducible: two runs from scratch (fresh
outcome logs, so every outcome is measured again) write the same bytes; the wall time of each
row is logged to MLflow as the metric ``seconds`` instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from compressbench import stages
from compressbench.config import parse_params
from compressbench.tpbench.stages import paths
from compressbench.tracking import read_cells
from support.params import pipeline_params, sqlite_tracking


def _run(root: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    root.mkdir()
    monkeypatch.chdir(root)
    raw = pipeline_params(
        grid=False,
        methods=["recency", "first_n"],
        retention={"ratios": [0.1, 0.3]},
        tracking=sqlite_tracking(root, "retention"),
    )
    params = parse_params(raw, "retention-params.yaml")
    stages.stage_corpora(params, "builtin")
    out = stages.stage_retention(params, "builtin")
    assert out == paths.retention_file("builtin")
    cells = read_cells(f"sqlite:///{root / 'mlflow.db'}", "retention")
    assert len(cells) == 4 and all(c.metrics["seconds"] >= 0 for c in cells)
    return (root / out).read_bytes()


def test_two_runs_write_the_same_metrics_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _run(tmp_path / "a", monkeypatch)
    assert b'"seconds"' not in first and b'"p2_retention"' in first
    assert _run(tmp_path / "b", monkeypatch) == first
