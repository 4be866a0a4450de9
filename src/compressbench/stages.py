"""Every DVC stage of every benchmark, by name: one module per stage in its benchmark's
``stages`` package (``tpbench/stages/``, ``keepbench/stages/``), each declaring what it reads
next to its function (``@stage``, :mod:`compressbench.pipeline.declare`).

:data:`STAGES` lists them in ``dvc.yaml`` order. Stage modules load lazily, so running one
stage never imports another's dependencies: ``stages.stage_scores`` imports only
``tpbench/stages/scores.py``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compressbench.pipeline.declare import StageDecl

# Stage name == module name, in pipeline order (the order of dvc.yaml); the benchmark package
# each one lives in.
_TPBENCH: tuple[str, ...] = (
    "turning_point_scorer",
    "corpus_source",
    "corpora",
    "transitions",
    "retention",
    "probes",
    "method_files",
    "contexts",
    "answers",
    "scores",
    "judge",
    "deletions",
    "deletion_answers",
    "deletion_scores",
    "viewer",
    "metrics",
    "report",
)
_KEEPBENCH: tuple[str, ...] = (
    "keep_cases",
    "keep_method_files",
    "keep_compressed",
    "keep_verdicts",
    "keep_metrics",
    "keep_viewer",
    "keep_report",  # carries the viewer's page to MLflow
)
PACKAGES: dict[str, str] = {
    **dict.fromkeys(_TPBENCH, "compressbench.tpbench.stages"),
    **dict.fromkeys(_KEEPBENCH, "compressbench.keepbench.stages"),
}
STAGES: tuple[str, ...] = tuple(PACKAGES)


def declaration(name: str) -> StageDecl:
    """The :class:`~compressbench.pipeline.declare.StageDecl` of stage ``name``."""
    if name not in STAGES:
        raise KeyError(f"unknown stage {name!r}; known: {', '.join(STAGES)}")
    module = importlib.import_module(f"{PACKAGES[name]}.{name}")
    decl: StageDecl = getattr(module, f"stage_{name}").declaration
    return decl


def declarations() -> list[StageDecl]:
    """Every stage's declaration, in pipeline order."""
    return [declaration(name) for name in STAGES]


def __getattr__(attr: str) -> Any:
    """``stages.stage_<name>``: the declared stage function (imports its module on first use)."""
    name = attr.removeprefix("stage_")
    if attr.startswith("stage_") and name in STAGES:
        return declaration(name).run
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
