"""What a TPBench probe type is: one object holding everything the pipeline and the rescorer
need to know about it (its sampler, gold, question and answer schema, scorers, output budget)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.tpbench.candidates import Candidate, Sampler
from compressbench.tpbench.scoring.parse import ParsedAnswer
from compressbench.tpbench.transitions import Transition

Scored = dict[str, Any]
"""A scored answer: ``prediction``, ``abstain``, ``format_error`` (0/1) and ``scores``."""


@dataclass(frozen=True)
class Gold:
    """A probe's reference: ``gold`` (what the scorer compares), and for joint probes its parts."""

    gold: str
    value: str = ""
    story_label: str = ""


@dataclass(frozen=True)
class RescoreAnswer:
    """A validated ``rescore`` input row: what every probe's rescorer needs."""

    dataset: str
    prediction: Any
    abstain: bool
    error: bool
    references: dict[str, Any]


AnswerScorer = Callable[[str, bool, Mapping[str, Any], bool], Scored]
"""``(reader text, reader error, probe row, corrected abstain) -> scored answer``."""


VALUE_ANSWER_SCHEMA = (
    '{"value": <string>, "support": <verbatim span from context, <= 30 words>, '
    '"abstain": <true if you cannot tell, else false>}'
)
"""The answer schema the reader prompt shows for a one-value answer (spec §3.8)."""


def no_meta(transition: Transition) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class ProbeType:
    """One probe type, registered once in :data:`compressbench.tpbench.probe_types.PROBE_TYPES`.

    ``name`` is its id everywhere (params, records, reports; input is matched ignoring case).
    A probe type without a ``sample`` is for ``rescore`` only (answers scored elsewhere).
    """

    name: str
    title: str
    rescore_references: tuple[str, ...]
    rescore: Callable[[RescoreAnswer], dict[str, Any]]
    artifact_name: str = ""  # the released artifact's ``probe_type``
    sample: Sampler | None = None
    gold: Callable[[Candidate, str], Gold] | None = None  # (candidate, slot_human) -> gold
    meta: Callable[[Transition], dict[str, Any]] = no_meta  # extra record meta
    question: str = ""  # ``{slot_human}`` is substituted
    answer_schema: str = ""  # as the reader prompt shows it
    value_pattern: str | None = None  # the structured variant's JSON Schema ``pattern``
    score_answer: AnswerScorer | None = None
    paper_output_tokens: int = 128  # Llama's max new tokens in the paper (spec §6)

    @property
    def in_pipeline(self) -> bool:
        return self.sample is not None

    def answer_json_schema(self) -> dict[str, object]:
        """The answer object as JSON Schema (value, support, abstain; declared in that order),
        for the structured-output variant."""
        value: dict[str, object] = {"type": "string"}
        if self.value_pattern is not None:
            value["pattern"] = self.value_pattern
        return {
            "type": "object",
            "properties": {
                "value": value,
                "support": {"type": "string"},
                "abstain": {"type": "boolean"},
            },
            "required": ["value", "support", "abstain"],
            "additionalProperties": False,
        }


def scored(answer: ParsedAnswer, scores: Mapping[str, Any]) -> Scored:
    """The scored-answer dict of a parsed answer and its scores."""
    return {
        "prediction": answer.value,
        "abstain": int(answer.abstain),
        "format_error": int(answer.format_error),
        "scores": dict(scores),
    }


def pick(scores: Any, fields: Sequence[str]) -> dict[str, Any]:
    """``{field: scores.field}`` for the named fields of a scorer's result."""
    return {f: getattr(scores, f) for f in fields}
