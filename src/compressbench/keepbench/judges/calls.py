"""Which judge calls a compressed context needs, and the verdict schemas (KEEP-Bench D.2).

Per setting (templates in ``keepbench/prompts/judge/<version>/``):

* parallel - each proposition alone; one that involves an ambiguous entity gets the
  ``parallel`` prompt with ``{{CONSTRAINTS_JSON}}`` (each ambiguous entity with its
  unambiguous alternatives), the others the ordinary ``entailment`` prompt;
* conditional - the condition proposition p_cond and the hop it governs share one
  ``condition`` call: ``condition_judgement`` labels p_cond (Cond-Rec), ``overall_judgement``
  the governed hop; the other hops get ``entailment``; the disambiguation text is judge
  metadata only;
* imbalanced - each perspective with the question: ``science``, or ``policy`` (which also
  names the jurisdiction).

Shortcuts without a call (labelled "no"): an empty compression, and in the imbalanced setting
the placeholder "This passage doesn't contain relevant information to the question."
(whitespace, case and curly apostrophes ignored).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compressbench.keepbench.cases import CONDITIONAL, IMBALANCED, PARALLEL, KeepCase

YES, NO = "yes", "no"
JUDGEMENT = "judgement"
CONDITION_JUDGEMENT, OVERALL_JUDGEMENT = "condition_judgement", "overall_judgement"
PLACEHOLDER = "This passage doesn't contain relevant information to the question."
PLACEHOLDER_SETTINGS = (IMBALANCED,)
EMPTY, PLACEHOLDER_SHORTCUT = "empty", "placeholder"


def _verdict_schema(*fields: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {f: {"type": "string", "enum": [YES, NO]} for f in fields},
        "required": list(fields),
        "additionalProperties": False,
    }


# Plain JSON Schemas (OpenAI strict structured outputs accept them; llama.cpp makes grammars).
ORDINARY_SCHEMA = _verdict_schema(JUDGEMENT)
CONDITION_SCHEMA = _verdict_schema(CONDITION_JUDGEMENT, OVERALL_JUDGEMENT)
SCHEMAS: dict[str, dict[str, Any]] = {
    "keep_judgement": ORDINARY_SCHEMA,
    "keep_condition_judgement": CONDITION_SCHEMA,
}
TEMPLATE_SCHEMA = {
    "entailment": "keep_judgement",
    "parallel": "keep_judgement",
    "science": "keep_judgement",
    "policy": "keep_judgement",
    "condition": "keep_condition_judgement",
}


@dataclass(frozen=True)
class JudgeInput:
    """One compressed context of one case, with the fields its verdict rows carry."""

    case: KeepCase
    compressed: str
    carry: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class JudgeCall:
    """One judge request: a template, its values, and the propositions its fields label
    (``targets``: ``(proposition id, verdict field)``)."""

    template: str
    values: Mapping[str, str]
    targets: tuple[tuple[str, str], ...]

    @property
    def schema_name(self) -> str:
        return TEMPLATE_SCHEMA[self.template]


_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.replace("\u2019", "'")).strip().casefold()


def shortcut(case: KeepCase, compressed: str) -> str | None:
    """``empty`` / ``placeholder`` when the compression is labelled "no" without a call."""
    if not compressed.strip():
        return EMPTY
    if case.setting in PLACEHOLDER_SETTINGS and _norm(compressed) == _norm(PLACEHOLDER):
        return PLACEHOLDER_SHORTCUT
    return None


def constraints_json(case: KeepCase) -> str:
    """The parallel prompt's constraints block: each ambiguous entity and its alternatives."""
    data = [
        {"ambiguous_entity": m.mention, "unambiguous_alternatives": list(m.referents)}
        for m in case.ambiguous_mentions
    ]
    return json.dumps(data, ensure_ascii=False, indent=2)


def _parallel(case: KeepCase, text: str) -> list[JudgeCall]:
    calls = []
    for p in case.propositions:
        values = {"COMPRESSED_CONTEXT": text, "PROPOSITION": p.text, "QUESTION": case.query}
        if p.involves_ambiguous_entity and case.ambiguous_mentions:
            values["CONSTRAINTS_JSON"] = constraints_json(case)
            calls.append(JudgeCall("parallel", values, ((p.id, JUDGEMENT),)))
        else:
            calls.append(JudgeCall("entailment", values, ((p.id, JUDGEMENT),)))
    return calls


def _conditional(case: KeepCase, text: str) -> list[JudgeCall]:
    cond = case.condition
    assert cond is not None  # checked by the case model
    calls = [
        JudgeCall(
            "condition",
            {
                "COMPRESSED_CONTEXT": text,
                "QUESTION": case.query,
                "CONDITION": case.proposition(cond.proposition_id).text,
                "GENERAL_PROPOSITION": case.proposition(cond.conditioned_hop_id).text,
                "CONDITION_KEY": cond.key,
                "DISAMBIGUATION": cond.disambiguation or "(none given)",
            },
            (
                (cond.proposition_id, CONDITION_JUDGEMENT),
                (cond.conditioned_hop_id, OVERALL_JUDGEMENT),
            ),
        )
    ]
    for p in case.propositions:
        if p.id not in (cond.proposition_id, cond.conditioned_hop_id):
            values = {"COMPRESSED_CONTEXT": text, "PROPOSITION": p.text, "QUESTION": case.query}
            calls.append(JudgeCall("entailment", values, ((p.id, JUDGEMENT),)))
    return calls


def _imbalanced(case: KeepCase, text: str) -> list[JudgeCall]:
    template = "policy" if case.domain == "policy" else "science"
    return [
        JudgeCall(
            template,
            {
                "QUESTION": case.query,
                "COMPRESSED_CONTEXT": text,
                "PERSPECTIVE": p.text,
                "JURISDICTION": p.jurisdiction,
            },
            ((p.id, JUDGEMENT),),
        )
        for p in case.propositions
    ]


_BUILDERS = {PARALLEL: _parallel, CONDITIONAL: _conditional, IMBALANCED: _imbalanced}


def judge_calls(case: KeepCase, compressed: str) -> list[JudgeCall]:
    """The calls that label every proposition of ``case`` once, in proposition order of the
    first target of each call."""
    return _BUILDERS[case.setting](case, compressed)
