"""P2 on LongMemEval-KU (spec §2.5): rescore only (its answers come from elsewhere), strict and
loose against every gold variant."""

from __future__ import annotations

from typing import Any

from compressbench.tpbench.probe_types.spec import ProbeType, RescoreAnswer, pick
from compressbench.tpbench.scoring.lme import score_lme


def _rescore(a: RescoreAnswer) -> dict[str, Any]:
    s = score_lme(a.prediction, a.references["reference"], abstain=a.abstain, error=a.error)
    return pick(s, ("strict", "loose"))


P2_LME = ProbeType(
    name="P2_LME",
    title="current value, LongMemEval-KU",
    rescore_references=("reference",),
    rescore=_rescore,
)
