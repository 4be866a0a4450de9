"""What a TPBench probe type is: one object holding everything the pipeline, the report and the
rescorer need to know about it (its sampler, gold, question and answer schema, scorers, output
budget, the ratios it is built at, its answer-kind rule and what retention looks for)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.tpbench.candidates import Candidate, Sampler
from compressbench.tpbench.scoring.parse import ParsedAnswer
from compressbench.tpbench.transitions import Transition

Row = Mapping[str, Any]
Rule = Callable[[Row], bool]
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


@dataclass(frozen=True)
class KindRule:
    """How one probe type tells a correct answer and a superseded-value answer (the answer
    kinds of paper Table 13, :mod:`compressbench.tpbench.report.answer_kinds`)."""

    correct: Rule
    superseded: Rule


def score_is_one(metric: str) -> Rule:
    """Correct when the row's ``scores.<metric>`` is 1."""
    return lambda row: bool(row["scores"].get(metric))


def no_meta(transition: Transition) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class ProbeType:
    """One probe type, registered once in :data:`compressbench.tpbench.probe_types.PROBE_TYPES`.

    ``name`` is its id everywhere (params, records, reports; input is matched ignoring case).
    A probe type without a ``sample`` is for ``rescore`` only (answers scored elsewhere).
    The report iterates the registered pipeline probe types, so one joins its per-probe tables
    (accuracy, answer kinds, the summary, MLflow runs) by being registered.
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
    # Its answer budget (max new tokens): the paper's Llama setting (spec §6), the pipeline's
    # default; ``reader.max_new_tokens.<name>`` overrides it.
    output_tokens: int = 128
    main_ratio_only: bool = False  # built only at ``p3_ratio`` (P3, as published), else at every
    kind_rule: KindRule | None = None  # its answer kinds (report Table 13, the case viewer)
    kinds_in_report: bool = True  # the report's answer-kind table shows it (P1: the viewer only)
    retention_field: str | None = None  # the probe row's gold value retention looks for

    def output_budget(self, overrides: Mapping[str, int]) -> int:
        """Its max new tokens: ``overrides[name]`` (``reader.max_new_tokens``) or its own."""
        return overrides.get(self.name, self.output_tokens)

    def built_at(self, ratio: float, main_ratio: float) -> bool:
        """Whether the pipeline samples it at ``ratio`` (``main_ratio``: ``p3_ratio``)."""
        return ratio == main_ratio or not self.main_ratio_only

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
