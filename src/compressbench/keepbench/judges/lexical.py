"""``lexical``: an offline **approximation** of the entailment judge (no model, no server).

A proposition counts as preserved when enough of its normalised content tokens occur in the
compressed context: coverage = |tokens(p) ∩ tokens(c̃)| / |tokens(p)| >= ``threshold``. Tokens
are the lower-cased ``[a-z0-9]`` runs longer than one character minus a stopword list
(:func:`compressbench.text.tokens.overlap_tokens`). The per-template rules follow the LLM
prompts as far as tokens can: a policy perspective also needs every token of its
jurisdiction; a parallel proposition's qualifier words are in its text; the condition call's
``overall_judgement`` is "no" unless the condition is covered too. Paraphrase defeats it and
word salad fools it, so every row and record says ``approximation: true`` and the judge
model reads ``lexical-coverage (approximation)``: it lets the default pipeline run offline, it
does not reproduce the paper's numbers.

Parameters
----------
threshold:
    minimum coverage in (0, 1]. Default 0.75 (our choice: one content word in four may be
    phrased differently).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.keepbench.judges.calls import (
    CONDITION_JUDGEMENT,
    JUDGEMENT,
    NO,
    OVERALL_JUDGEMENT,
    YES,
    JudgeCall,
)
from compressbench.keepbench.judges.judge import CallResult
from compressbench.text.tokens import overlap_tokens

MODEL_LABEL = "lexical-coverage (approximation)"
VERSION = "lexical-1"


def coverage(target: str, context_tokens: frozenset[str]) -> float:
    """Share of ``target``'s content tokens found in ``context_tokens`` (1.0 if it has none)."""
    wanted = overlap_tokens(target)
    if not wanted:
        return 1.0
    return len(wanted & context_tokens) / len(wanted)


@dataclass
class LexicalBackend:
    threshold: float = 0.75

    approximation = True

    def __post_init__(self) -> None:
        if not 0 < self.threshold <= 1:
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold}")

    def info(self) -> dict[str, Any]:
        return {
            "judge_backend": "lexical",
            "judge_model": MODEL_LABEL,
            "judge_revision": VERSION,
            "judge_threshold": self.threshold,
            "prompt_kind": "judge",
            "prompt_version": VERSION,
            "prompt_sha256": None,
        }

    def _yes(self, text: str, tokens: frozenset[str]) -> str:
        return YES if coverage(text, tokens) >= self.threshold else NO

    def verdict(self, call: JudgeCall) -> dict[str, str]:
        values = call.values
        tokens = overlap_tokens(values["COMPRESSED_CONTEXT"])
        if call.template == "condition":
            cond = self._yes(values["CONDITION"], tokens)
            general = self._yes(values["GENERAL_PROPOSITION"], tokens)
            overall = YES if cond == YES and general == YES else NO
            return {CONDITION_JUDGEMENT: cond, OVERALL_JUDGEMENT: overall}
        verdict = self._yes(values.get("PROPOSITION") or values["PERSPECTIVE"], tokens)
        if call.template == "policy" and coverage(values.get("JURISDICTION", ""), tokens) < 1:
            verdict = NO  # the jurisdiction must be identified: all of its tokens
        return {JUDGEMENT: verdict}

    def run(
        self, calls: Sequence[JudgeCall], cache: Any, *, progress: bool
    ) -> tuple[list[CallResult], dict[str, int]]:
        """Verdicts computed on the spot (microseconds each; nothing to cache)."""
        return [CallResult(self.verdict(c), attempts=1) for c in calls], {"model_calls": 0}
