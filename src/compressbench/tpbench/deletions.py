"""Paired deletion experiment (spec §4, paper §6.3): matched controls and deletion conditions.

For a full-context P2 probe with update turn ``origin`` and answer-bearing turns ``support``
(``s_transition_support``, which contains ``origin``):

* **clean pool** - turns outside ``support`` whose normalised text contains neither the
  normalised old nor the normalised new value at phrase boundaries (§1.1, §1.2);
* **matched control** of target turns - for each target, the clean turn not yet picked with
  the *same speaker* (no fallback) minimising (|word-count difference|, |index difference|,
  index); one target without a candidate fails the whole control (``None``);
* **single control** = the matched control of ``[origin]``; **all-evidence control** = that
  same turn plus matched controls of the other support turns in ascending order (the paper:
  "the all-evidence control reuses that turn and adds distinct non-answer turns"; the release
  stores this split as ``control_transition_origin_component`` / ``..._evidence_component``).

Conditions: ``full_context``; ``cf_origin_minus_origin``; ``cf_origin_minus_control_origin``
(only when the single control matched); and, only when the all-evidence control matched,
``cf_origin_minus_transition_support`` and ``cf_origin_minus_control_support``. A deletion
drops whole turn blocks and re-renders the rest with their original ``[Tn]`` labels
(:mod:`compressbench.tpbench.deletion_contexts`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.compress.method import FULL_CONTEXT
from compressbench.corpora.model import Turn
from compressbench.errors import InputError
from compressbench.text.normalize import dataset_key, normalize_value, phrase_occurs

FULL = FULL_CONTEXT  # the condition: the full-context method's context
MINUS_ORIGIN = "cf_origin_minus_origin"
MINUS_CONTROL_ORIGIN = "cf_origin_minus_control_origin"
MINUS_SUPPORT = "cf_origin_minus_transition_support"
MINUS_CONTROL_SUPPORT = "cf_origin_minus_control_support"
CONDITIONS: tuple[str, ...] = (
    FULL,
    MINUS_ORIGIN,
    MINUS_CONTROL_ORIGIN,
    MINUS_SUPPORT,
    MINUS_CONTROL_SUPPORT,
)
# Paired comparisons: name -> (deletion condition, its matched-control condition).
PAIRS: dict[str, tuple[str, str]] = {
    "single": (MINUS_ORIGIN, MINUS_CONTROL_ORIGIN),
    "all_evidence": (MINUS_SUPPORT, MINUS_CONTROL_SUPPORT),
}
MATCHED = "matched"
UNMATCHED = "unmatched"
ROLE_MATCHED = "origin_plus_evidence_role_matched"


def word_count(text: str) -> int:
    """Whitespace-split token count of a raw turn text."""
    return len(text.split())


def clean_turns(
    turns: Sequence[Turn], forbidden: Collection[int], old: str, new: str, dataset: str
) -> tuple[int, ...]:
    """Indices of turns outside ``forbidden`` that mention neither value (phrase-bounded, on
    normalised text; an empty value is not checked)."""
    ds = dataset_key(dataset)
    values = [v for v in (normalize_value(old, ds), normalize_value(new, ds)) if v]
    return tuple(
        t.index
        for t in turns
        if t.index not in forbidden
        and not any(phrase_occurs(v, normalize_value(t.text, ds)) for v in values)
    )


def _pick(
    turns: Sequence[Turn], targets: Sequence[int], clean: Collection[int], taken: Collection[int]
) -> tuple[list[int], int | None]:
    """Picks for ``targets`` in ascending order, and the first target left without one."""
    by_index = {t.index: t for t in turns}
    picked: list[int] = []
    for target in sorted(targets):
        goal = by_index[target]
        words = word_count(goal.text)
        candidates = [
            by_index[i]
            for i in clean
            if i not in picked and i not in taken and by_index[i].speaker == goal.speaker
        ]
        if not candidates:
            return picked, target
        best = min(
            candidates,
            key=lambda t: (abs(word_count(t.text) - words), abs(t.index - target), t.index),
        )
        picked.append(best.index)
    return picked, None


def matched_control(
    turns: Sequence[Turn],
    targets: Sequence[int],
    clean: Collection[int],
    taken: Collection[int] = (),
) -> tuple[int, ...] | None:
    """The matched control of ``targets`` from the ``clean`` pool (excluding ``taken``): one
    same-speaker turn per target, sorted; ``None`` when any target has no candidate."""
    picked, failed = _pick(turns, targets, clean, taken)
    return None if failed is not None else tuple(sorted(picked))


@dataclass(frozen=True)
class ControlPlan:
    """The controls of one probe, with the reason for each control that failed."""

    origin: int
    support: tuple[int, ...]
    control_origin: tuple[int, ...] | None
    origin_component: tuple[int, ...] | None
    evidence_component: tuple[int, ...] | None
    single_reason: str = ""
    all_evidence_reason: str = ""

    @property
    def control_support(self) -> tuple[int, ...] | None:
        if self.origin_component is None or self.evidence_component is None:
            return None
        return tuple(sorted((*self.origin_component, *self.evidence_component)))

    def conditions(self) -> list[tuple[str, tuple[int, ...]]]:
        """(condition, removed turn ids) of every condition this probe runs under."""
        out: list[tuple[str, tuple[int, ...]]] = [(FULL, ()), (MINUS_ORIGIN, (self.origin,))]
        if self.control_origin is not None:
            out.append((MINUS_CONTROL_ORIGIN, self.control_origin))
        if self.control_support is not None:
            out += [(MINUS_SUPPORT, self.support), (MINUS_CONTROL_SUPPORT, self.control_support)]
        return out

    def meta(self) -> dict[str, Any]:
        """The picks and statuses, in the release's field names (lists or null)."""

        def ids(value: tuple[int, ...] | None) -> list[int] | None:
            return None if value is None else list(value)

        support_ok = self.control_support is not None
        return {
            "control_origin": ids(self.control_origin),
            "control_origin_status": MATCHED if self.control_origin is not None else UNMATCHED,
            "control_origin_reason": self.single_reason,
            "control_transition_support": ids(self.control_support),
            "transition_support_control_status": MATCHED if support_ok else UNMATCHED,
            "transition_support_control_reason": self.all_evidence_reason,
            "control_transition_origin_component": ids(self.origin_component),
            "control_transition_evidence_component": ids(self.evidence_component),
            "transition_support_control_role_status": ROLE_MATCHED if support_ok else UNMATCHED,
        }


def _failure(turns: Sequence[Turn], target: int) -> str:
    return f"no clean {turns[target].speaker} turn left to match T{target}"


def plan_controls(
    turns: Sequence[Turn], origin: int, support: Sequence[int], old: str, new: str, dataset: str
) -> ControlPlan:
    """Both matched controls of one probe (turn ``i`` of ``turns`` has index ``i``)."""
    support_ids = tuple(sorted(set(support)))
    clean = clean_turns(turns, set(support_ids), old, new, dataset)
    origin_pick, origin_failed = _pick(turns, [origin], clean, ())
    if origin_failed is not None:
        reason = _failure(turns, origin_failed)
        return ControlPlan(
            origin, support_ids, None, None, None, reason, f"update-turn control failed: {reason}"
        )
    control_origin = tuple(origin_pick)
    evidence = [i for i in support_ids if i != origin]
    evidence_pick, evidence_failed = _pick(turns, evidence, clean, control_origin)
    if evidence_failed is not None:
        return ControlPlan(
            origin,
            support_ids,
            control_origin,
            control_origin,
            None,
            all_evidence_reason=_failure(turns, evidence_failed),
        )
    return ControlPlan(
        origin, support_ids, control_origin, control_origin, tuple(sorted(evidence_pick))
    )


def probe_plan(
    turns: Sequence[Turn],
    meta: dict[str, Any],
    old: str,
    new: str,
    dataset: str,
    *,
    file: str = "",
    record: str = "",
) -> ControlPlan:
    """:func:`plan_controls` from a P2 probe's ``meta`` (``origin_turn_id`` and
    ``s_transition_support``, which must hold the origin and index existing turns)."""

    def fail(name: str, message: str) -> InputError:
        return InputError(message, file=file or None, record=record or None, field=f"meta.{name}")

    origin = meta.get("origin_turn_id")
    if isinstance(origin, bool) or not isinstance(origin, int):
        raise fail("origin_turn_id", f"expected a turn index, got {origin!r}")
    support = meta.get("s_transition_support")
    if not isinstance(support, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in support
    ):
        raise fail("s_transition_support", f"expected a list of turn indices, got {support!r}")
    bad = [i for i in (origin, *support) if not 0 <= i < len(turns)]
    if bad:
        raise fail("s_transition_support", f"turn index {bad[0]} outside 0..{len(turns) - 1}")
    if origin not in support:
        raise fail("s_transition_support", f"does not contain the update turn {origin}")
    return plan_controls(turns, origin, support, old, new, dataset)
