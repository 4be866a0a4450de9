"""What TPBench's stage declarations share: the code every stage reads, the probe-type code,
the params its runs record.

Not a stage itself (``STAGES`` does not list it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compressbench.config import shared_keys
from compressbench.pipeline import declare
from compressbench.pipeline.declare import StageFn
from compressbench.tpbench.pipeline_spec import BLOCKS, JUDGE

# TPBench's probe types (samplers, golds, prompts' questions, scorers) and the modules they read:
# code of every stage that samples, asks or scores probes.
PROBE_TYPE_CODE: tuple[str, ...] = (
    "tpbench/probe_types",
    "tpbench/candidates.py",
    "tpbench/transitions.py",
    "tpbench/goals.py",
    "tpbench/scoring",
)

# Every params.yaml key TPBench reads (KEEP-Bench's block and the P1 judge's have their own stages).
TPBENCH_PARAMS: tuple[str, ...] = (*shared_keys(), *(b.key for b in BLOCKS if b is not JUDGE))

# Code every TPBench stage reads besides the engine's base code: its path templates, this module.
STAGE_CODE: tuple[str, ...] = ("tpbench/stages/paths.py", "tpbench/stages/shared.py")


def stage(name: str, *, code: tuple[str, ...] = (), **kwargs: Any) -> Callable[[StageFn], StageFn]:
    """Declare a TPBench stage: the engine's :func:`~compressbench.pipeline.declare.stage` with
    :data:`STAGE_CODE` added to its ``code``."""
    return declare.stage(name, code=(*STAGE_CODE, *code), **kwargs)
