"""Stage declarations: what each DVC stage reads and writes, stated once next to its function.

::

    @stage("scores", over=("dataset", "method", "ratio"), params=("scoring",),
           code=("tpbench/scoring", "text"), deps=(paths.ANSWERS,), outs=(paths.SCORES,))
    def stage_scores(params, dataset, method, ratio): ...

``params`` are top-level ``params.yaml`` keys; the decorated function receives a
:class:`~compressbench.pipeline.params_view.ParamsView` that refuses every other key. ``code``
are paths under ``src/compressbench`` (packages or modules) the stage's imports must stay inside
(checked against the static import graph); the stage's own module and :data:`BASE_CODE` are
always added. ``deps`` / ``outs`` / ``metrics`` / ``plots`` (outputs DVC shows as plots,
e.g. PNG figures) are :mod:`~compressbench.pipeline.paths` templates. ``dvc.yaml`` is
generated from these declarations (``compressbench dvc-yaml``).
"""

from __future__ import annotations

import functools
import inspect
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.config import param_blocks
from compressbench.errors import InputError
from compressbench.pipeline.params_view import PARAM_FIELDS, ParamsView

StageFn = Callable[..., Path]

# Loop keys of a stage -> the params.yaml list (or mapping: its keys) each one runs over, and
# the stage's CLI option. A stage over a mapping runs over that one key (a DVC ``foreach``).
LOOP_KEYS: dict[str, str] = {
    "dataset": "datasets",
    "method": "methods",
    "ratio": "ratios",
    "compressor": "keepbench.compressors",
}
MAPPING_LOOPS = frozenset({"compressor"})


def loop_values(params: Any, key: str) -> list[Any]:
    """The values loop key ``key`` runs over in ``params`` (a mapping's keys, in order)."""
    return list(params.lookup(LOOP_KEYS[key]))


def check_cell(params: Any, cell: Mapping[str, Any]) -> None:
    """Raise InputError unless each loop key's value in ``cell`` is one ``params`` runs over;
    the message names the parameter (``keepbench.compressors``) and its allowed values."""
    for key, value in cell.items():
        allowed = loop_values(params, key)
        if value is not None and value not in allowed:
            raise InputError(
                f"{value!r} is not in {LOOP_KEYS[key]}; allowed: {', '.join(map(str, allowed))}",
                file=params.source,
                field=LOOP_KEYS[key],
            )


def cells_of(over: tuple[str, ...], params: Any) -> list[tuple[Any, ...]]:
    """Every cell of a stage over ``over``: the product of its loop keys' values."""
    return list(itertools.product(*(loop_values(params, k) for k in over)))


def param_head(key: str) -> str:
    """The top-level ``params.yaml`` key of a declared param: ``keepbench.budgets`` -> keepbench."""
    return key.split(".", 1)[0]


# Code every stage runs: the parameter model, errors, JSONL I/O, paths, this runner and the
# stage registry. config.py checks names against the corpus, reader and method registries, so
# those packages (and the text helpers they use) are code of every stage too, and it parses the
# benchmarks' parameter blocks, so their modules are (each block names its own code).
BASE_CODE: tuple[str, ...] = (
    "config.py",
    "params_check.py",
    "registry.py",
    "errors.py",
    "jsonl.py",
    "corpora",
    "readers",
    "compress",
    "text",
    "pipeline/paths.py",
    "pipeline/run_log.py",
    "pipeline/declare.py",
    "pipeline/params_view.py",
    "stages.py",
    *dict.fromkeys(c for block in param_blocks() for c in block.code),
)

# Trained artefacts every stage may load (the method registry builds turning_point, whose default
# scorer this is), relative to the repository root: read through the base code fingerprint. The
# stage that writes them (turning_point_scorer) lists its code itself, so it never reads its out.
BASE_MODELS: tuple[str, ...] = ("models/turning_point/scorer.json",)


@dataclass(frozen=True)
class Out:
    """A stage output. Outputs are DVC-cached, so ``dvc push`` / ``dvc pull`` carry them;
    ``cache=False`` (kept out of the cache) is for a frozen stage's git-tracked artefact only:
    the generator refuses it in the root ``dvc.yaml``, where a pull could not restore it."""

    path: str
    cache: bool = True


@dataclass(frozen=True)
class StageDecl:
    """One stage: its name, loop keys, parameters, code, data dependencies and outputs."""

    name: str
    run: StageFn
    over: tuple[str, ...]
    params: tuple[str, ...]
    code: tuple[str, ...]
    deps: tuple[str, ...] = ()
    outs: tuple[Out, ...] = ()
    metrics: tuple[Out, ...] = ()
    plots: tuple[Out, ...] = ()
    always_changed: bool = False
    frozen: bool = False
    worker: bool = False  # may run in the shared reader worker (``reader.worker``)
    doc: str = ""

    @property
    def module(self) -> str:
        return self.run.__module__


REGISTRY: dict[str, StageDecl] = {}
SRC_PREFIX = "src/compressbench/"


def _module_path(module: str) -> str:
    """``compressbench.tpbench.stages.scores`` -> ``tpbench/stages/scores.py``."""
    return "/".join(module.split(".")[1:]) + ".py"


def _outs(items: tuple[str | Out, ...]) -> tuple[Out, ...]:
    return tuple(o if isinstance(o, Out) else Out(o) for o in items)


def stage(
    name: str,
    *,
    params: tuple[str, ...],
    code: tuple[str, ...],
    over: tuple[str, ...] = (),
    deps: tuple[str, ...] = (),
    outs: tuple[str | Out, ...] = (),
    metrics: tuple[str | Out, ...] = (),
    plots: tuple[str | Out, ...] = (),
    always_changed: bool = False,
    frozen: bool = False,
    worker: bool = False,
) -> Callable[[StageFn], StageFn]:
    """Declare and register a stage; the function then sees only its declared params.
    ``frozen``: ``dvc repro`` skips it (``dvc unfreeze`` first to rerun it). ``worker``: a
    stage that asks the reader; with ``reader.worker: true`` it runs in the long-lived reader
    worker (:mod:`compressbench.commands.worker`), which loads the weights once. Declare ``metrics``
    cached (a plain path): they sit in git-ignored folders, so ``dvc exp show`` and
    ``dvc metrics diff`` find another revision's metrics only in the DVC cache."""
    bad = [k for k in over if k not in LOOP_KEYS]
    bad += [p for p in params if param_head(p) not in PARAM_FIELDS]
    if len(over) > 1 and MAPPING_LOOPS & set(over):
        bad += [f"{'/'.join(over)} (a mapping loop runs alone)"]
    if bad:
        raise ValueError(f"stage {name!r}: unknown loop keys or params: {', '.join(bad)}")
    heads = tuple(dict.fromkeys(param_head(p) for p in params))

    def deco(fn: StageFn) -> StageFn:
        @functools.wraps(fn)
        def run(p: Any, *args: Any, **kwargs: Any) -> Path:
            return fn(ParamsView(p, heads, name), *args, **kwargs)

        own = _module_path(fn.__module__)
        decl = StageDecl(
            name=name,
            run=run,
            over=over,
            params=params,
            code=tuple(dict.fromkeys((*BASE_CODE, own, *code))),
            deps=deps,
            outs=_outs(outs),
            metrics=_outs(metrics),
            plots=_outs(plots),
            always_changed=always_changed,
            frozen=frozen,
            worker=worker,
            doc=" ".join((inspect.getdoc(fn) or "").split("\n\n")[0].split()),
        )
        previous = REGISTRY.get(name)
        if previous is not None and previous.module != fn.__module__:
            raise ValueError(f"stage {name!r} declared twice ({previous.module}, {fn.__module__})")
        REGISTRY[name] = decl
        run.declaration = decl  # type: ignore[attr-defined]
        return run

    return deco
