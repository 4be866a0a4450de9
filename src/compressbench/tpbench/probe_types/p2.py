"""P2, the current value of a revised slot (spec §2.3, §3.4, §3.6): the sampled questions that
pass the §3.4 filters, gold the new value; the published abstain reading by default."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compressbench.text.normalize import dataset_key, normalize_value
from compressbench.tpbench.candidates import Candidate, sample_questions
from compressbench.tpbench.probe_types.spec import (
    VALUE_ANSWER_SCHEMA,
    Gold,
    KindRule,
    ProbeType,
    RescoreAnswer,
    Row,
    Scored,
    pick,
    score_is_one,
    scored,
)
from compressbench.tpbench.scoring.p2 import score_p2
from compressbench.tpbench.scoring.parse import parse_p2
from compressbench.tpbench.transitions import Transition

RESCORE_FIELDS = ("strict", "loose", "overlap_strict", "overlap_loose", "norm_pred", "norm_gold")


def _sample(pool: Sequence[Candidate], seed: int, n: int) -> list[Candidate]:
    """Survivors of the §3.4 filters among the P1/P2 sample, in sampled order."""
    return [c for c in sample_questions(pool, seed, n) if c.transition.p2_eligible]


def _gold(c: Candidate, slot_human: str) -> Gold:
    return Gold(c.transition.new_value, value=c.transition.new_value)


def _meta(t: Transition) -> dict[str, Any]:
    return {
        "s_origin": list(t.s_origin),
        "s_evidence": list(t.s_evidence),
        "s_transition_support": list(t.s_transition_support),
    }


def _score_answer(text: str, error: bool, row: Mapping[str, Any], corrected: bool) -> Scored:
    answer = parse_p2(text, json_bool_abstain=corrected)
    s = score_p2(
        answer.value, row["gold"], dataset_key(row["dataset"]), abstain=answer.abstain, error=error
    )
    return scored(answer, pick(s, ("strict", "loose")))


def p2_superseded(row: Row) -> bool:
    """The P2 prediction names the replaced value by P2-strict's rule, with ``old_value`` as
    the gold: a string prediction, no abstention, a non-empty normalised old value and equal
    normalised strings (:func:`~compressbench.text.normalize.normalize_value`)."""
    prediction = row.get("prediction")
    if not isinstance(prediction, str) or row.get("abstain"):
        return False
    ds = dataset_key(row.get("dataset"))
    old = normalize_value(row.get("old_value"), ds)
    return old != "" and normalize_value(prediction, ds) == old


def _rescore(a: RescoreAnswer) -> dict[str, Any]:
    s = score_p2(
        a.prediction, a.references["reference"], a.dataset, abstain=a.abstain, error=a.error
    )
    return pick(s, RESCORE_FIELDS)


P2 = ProbeType(
    name="P2",
    title="current value",
    artifact_name="P3",
    sample=_sample,
    gold=_gold,
    meta=_meta,
    question=(
        "After the most recent change visible in the context, what is the user's CURRENT value "
        "for {slot_human}? Reply with one short value."
    ),
    answer_schema=VALUE_ANSWER_SCHEMA,
    score_answer=_score_answer,
    rescore_references=("reference",),
    rescore=_rescore,
    output_tokens=96,
    kind_rule=KindRule(correct=score_is_one("strict"), superseded=p2_superseded),
    retention_field="gold",
)
