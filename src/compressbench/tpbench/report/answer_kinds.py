"""What the reader answers (paper Table 13): every scored answer falls in exactly one kind.

Kinds, first match wins: ``reader_error`` (the reader failed: an error other than the
readers' ``no-json`` marker), ``format_error`` (no parseable JSON object, spec §2.6),
``correct``, ``superseded`` (the value the user replaced), ``abstain`` (an explicit no-answer),
``other``. Counts always sum to n, so a column of zero
accuracy always says why.

Which answers are correct and which repeat the old value is a :class:`KindRule` per probe:
P2's rule lives here (:data:`P2_RULE`: the prediction equals ``old_value`` under P2-strict's
own rule, spec §1.1: non-empty normalised old value, equal normalised strings, no abstention).
A benchmark passes its other rules in (TPBench's P3 value part comes from its scorer).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from compressbench.readers.postprocess import NO_JSON
from compressbench.text.normalize import dataset_key, normalize_value

KINDS: tuple[str, ...] = (
    "correct",
    "superseded",
    "abstain",
    "format_error",
    "reader_error",
    "other",
)
KIND_LABELS: dict[str, str] = {
    "correct": "correct",
    "superseded": "superseded (old) value",
    "abstain": "explicit abstention",
    "format_error": "format error",
    "reader_error": "reader error",
    "other": "other",
}

Row = Mapping[str, Any]
Rule = Callable[[Row], bool]


@dataclass(frozen=True)
class KindRule:
    """How one probe type tells a correct answer and a superseded-value answer."""

    correct: Rule
    superseded: Rule


def score_is_one(metric: str) -> Rule:
    """Correct when the row's ``scores.<metric>`` is 1."""
    return lambda row: bool(row["scores"].get(metric))


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


P2_RULE = KindRule(correct=score_is_one("strict"), superseded=p2_superseded)


def answer_kind(row: Row, rule: KindRule) -> str:
    """The kind of one scored answer (see the module docstring for the order)."""
    if row.get("error") and row["error"] != NO_JSON:  # "no-json" is a format error
        return "reader_error"
    if row.get("format_error"):
        return "format_error"
    if rule.correct(row):
        return "correct"
    if rule.superseded(row):
        return "superseded"
    if row.get("abstain"):
        return "abstain"
    return "other"


@dataclass(frozen=True)
class KindCounts:
    """Counts of every kind (zeros included) over ``n`` answers."""

    n: int
    counts: dict[str, int]

    def rate(self, kind: str) -> float | None:
        return self.counts[kind] / self.n if self.n else None

    def rates(self) -> dict[str, float | None]:
        return {kind: self.rate(kind) for kind in KINDS}


def kind_counts(rows: Iterable[Row], rule: KindRule) -> KindCounts:
    """How many answers of each kind; the counts sum to the number of rows."""
    found = Counter(answer_kind(row, rule) for row in rows)
    counts = {kind: found.get(kind, 0) for kind in KINDS}
    return KindCounts(n=sum(counts.values()), counts=counts)
