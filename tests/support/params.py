"""The one factory for the params.yaml mappings the in-process pipeline tests pass to
``parse_params`` (or write as a params file): the built-in corpus, a one-cell grid, overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

RATIO = 0.3
"""The grid's one compression ratio (P3 is built there too)."""


def pipeline_params(*, grid: bool = True, **overrides: Any) -> dict[str, Any]:
    """A fresh raw params mapping on the built-in corpus, methods ``["full_context"]``.

    With ``grid`` (the default) it spells out the one-cell grid: probes p1-p3, seed 42, ratios
    ``[RATIO]``, ``p3_ratio`` ``RATIO``. ``grid=False`` leaves those four keys out, so
    ``parse_params``' own defaults apply to the ones ``overrides`` does not give. Every other key
    (``n_per_cell``, ``reader``, ``tracking``, ...) comes from ``overrides``, which replace
    top-level keys as given (no deep merge)."""
    raw: dict[str, Any] = {
        "corpora": {"builtin": {"source": "builtin"}},
        "datasets": ["builtin"],
    }
    if grid:
        raw.update(probes=["P1", "P2", "P3"], seeds=[42], ratios=[RATIO], p3_ratio=RATIO)
    raw["methods"] = ["full_context"]
    raw.update(overrides)
    return raw


def sqlite_tracking(folder: Path, experiment: str) -> dict[str, Any]:
    """A ``tracking`` block: an MLflow sqlite store ``mlflow.db`` in ``folder``."""
    return {"uri": f"sqlite:///{folder / 'mlflow.db'}", "experiment": experiment}


def chain_params(reader: dict[str, Any], folder: Path, experiment: str) -> dict[str, Any]:
    """Four probes per cell of full_context and recency at ``RATIO``, no deletions, read by the
    ``reader`` block given, tracked in ``folder``/mlflow.db."""
    return pipeline_params(
        grid=False,
        ratios=[RATIO],
        p3_ratio=RATIO,
        n_per_cell=4,
        methods=["full_context", "recency"],
        deletions={"enabled": False},
        reader=reader,
        tracking=sqlite_tracking(folder, experiment),
    )
