"""TPBench's answer-kind rules per probe type (what :mod:`.answer_kinds` classifies by).

P2: correct by P2-strict, superseded when the prediction is the replaced value
(:data:`~compressbench.tpbench.report.answer_kinds.P2_RULE`); P3: correct by P3 value-strict,
superseded when its value segment names the replaced value by the P3 scorer's own rule; P1
(the viewer's answer kinds only; the report tabulates P2 and P3): correct by P1-strict, no
superseded value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compressbench.tpbench.report.answer_kinds import P2_RULE, KindRule, score_is_one
from compressbench.tpbench.scoring.p3 import score_p3


def p3_superseded(row: Mapping[str, Any]) -> bool:
    """The P3 answer's value segment names the replaced value by P3 value-strict's rule
    (the scorer itself, with ``old_value`` as the gold value)."""
    if row.get("abstain") or not row.get("old_value"):
        return False
    scores = score_p3(row.get("prediction"), row.get("gold_story_label"), row["old_value"])
    return bool(scores.value_strict)


KIND_RULES = {
    "P2": P2_RULE,
    "P3": KindRule(correct=score_is_one("value_strict"), superseded=p3_superseded),
}
P1_RULE = KindRule(correct=score_is_one("strict"), superseded=lambda row: False)
ALL_KIND_RULES = {"P1": P1_RULE, **KIND_RULES}
