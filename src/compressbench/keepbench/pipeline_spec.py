"""The ``keepbench:`` block of ``params.yaml``: what the KEEP-Bench stages run.

::

    keepbench:
      cases: builtin            # builtin | a local JSON/JSONL/parquet file or folder |
                                # uclanlp/KEEP-Bench | hf:<dataset id or folder>
      max_per_subset: null      # evaluate only the first N cases of each subset (null: all)
      compressors:              # KEEP method name -> its parameters ({} = defaults)
        llm: {max_new_tokens: 96}
        recomp_extractive: {}
      budgets: [1.0]            # sentence-budget scales (paper: 0.5, 1, 2)
      judge: lexical            # openai | hf | lexical
      judge_params: {}
      flops_configs: {}         # compressor -> config.json for its FLOPs when the model's own
                                # config is not local (an API-served llm, a Hub checkpoint)
      experiment: compressbench-keepbench   # MLflow experiment of the KEEP runs

Validation names ``params.yaml`` and the dotted field. KEEP-Bench registers the block as
:data:`KEEPBENCH` (the ``compressbench.param_blocks`` entry point in ``pyproject.toml``);
stages read it as ``KEEPBENCH.of(params)``. This module is part of every stage's code
(``config.py`` loads it), so it checks structure only and imports no KEEP registry;
the KEEP stages check compressor and judge names and their parameters against the
registries (``keepbench/stages/keep_common.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compressbench.config import ParamBlock
from compressbench.errors import InputError

KEYS = (
    "cases",
    "max_per_subset",
    "compressors",
    "budgets",
    "judge",
    "judge_params",
    "flops_configs",
    "experiment",
)


@dataclass(frozen=True)
class KeepSpec:
    cases: str = "builtin"
    max_per_subset: int | None = None
    compressors: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {"llm": {}, "recomp_extractive": {}}
    )
    budgets: tuple[float, ...] = (1.0,)
    judge: str = "lexical"
    judge_params: dict[str, Any] = field(default_factory=dict)
    flops_configs: dict[str, str] = field(default_factory=dict)
    experiment: str = "compressbench-keepbench"

    def cells(self) -> list[tuple[str, float]]:
        """Every (compressor, budget scale), in params order."""
        return [(name, scale) for name in self.compressors for scale in self.budgets]


def _fail(source: str, fieldname: str, message: str) -> InputError:
    return InputError(message, file=source, field=f"keepbench.{fieldname}")


def _mapping(value: Any, source: str, fieldname: str) -> dict[str, Any]:
    value = {} if value is None else value
    if not isinstance(value, dict):
        raise _fail(source, fieldname, f"expected a mapping, got {type(value).__name__}")
    return dict(value)


def _budgets(value: Any, source: str) -> tuple[float, ...]:
    if not isinstance(value, list) or not value:
        raise _fail(source, "budgets", "expected a non-empty list of budget scales (e.g. [1.0])")
    out = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0:
            raise _fail(source, f"budgets[{i}]", f"must be a number > 0 (0.5, 1, 2), got {v!r}")
        out.append(float(v))
    if len(set(out)) != len(out):
        raise _fail(source, "budgets", "lists a scale twice")
    return tuple(out)


def parse_keepbench(raw: Any, source: str = "params.yaml") -> KeepSpec:
    """Validate the ``keepbench`` mapping (None: every default)."""
    raw = {} if raw is None else raw
    if not isinstance(raw, dict):
        raise InputError("expected a mapping", file=source, field="keepbench")
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        raise _fail(source, unknown[0], f"unknown key; allowed: {', '.join(KEYS)}")
    d = KeepSpec()
    cases = raw.get("cases", d.cases)
    if not isinstance(cases, str) or not cases.strip():
        raise _fail(source, "cases", f"expected a source name or path, got {cases!r}")
    limit = raw.get("max_per_subset")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise _fail(source, "max_per_subset", f"must be an integer >= 1 or null, got {limit!r}")
    compressors_raw = raw.get("compressors", d.compressors)
    if isinstance(compressors_raw, list):  # a plain list of names: default parameters
        compressors_raw = dict.fromkeys(compressors_raw)
    compressors = _mapping(compressors_raw, source, "compressors")
    if not compressors:
        raise _fail(source, "compressors", "must name at least one compressor")
    for name, params in list(compressors.items()):
        compressors[str(name)] = _mapping(params, source, f"compressors.{name}")
    judge = raw.get("judge", d.judge)
    if not isinstance(judge, str):
        raise _fail(source, "judge", f"expected a judge name, got {judge!r}")
    judge_params = _mapping(raw.get("judge_params"), source, "judge_params")
    flops_configs = _mapping(raw.get("flops_configs"), source, "flops_configs")
    for name, path in flops_configs.items():
        if name not in compressors:
            raise _fail(source, f"flops_configs.{name}", "is not one of keepbench.compressors")
        if not isinstance(path, str):
            raise _fail(source, f"flops_configs.{name}", "expected a config.json path")
    experiment = raw.get("experiment", d.experiment)
    if not isinstance(experiment, str) or not experiment.strip():
        raise _fail(source, "experiment", "must be a non-empty string")
    return KeepSpec(
        cases=cases,
        max_per_subset=limit,
        compressors=compressors,
        budgets=_budgets(raw.get("budgets", list(d.budgets)), source),
        judge=judge,
        judge_params=judge_params,
        flops_configs=flops_configs,
        experiment=experiment,
    )


KEEPBENCH: ParamBlock[KeepSpec] = ParamBlock(
    "keepbench",
    lambda c, raw, _: parse_keepbench(raw, c.source),
    code=("keepbench/pipeline_spec.py",),
)
BLOCKS = (KEEPBENCH,)
