"""What the reader answers (paper Table 13): every scored answer falls in exactly one kind.

Kinds, first match wins: ``reader_error`` (the reader failed: an error other than the
readers' ``no-json`` marker), ``format_error`` (no parseable JSON object, spec §2.6),
``correct``, ``superseded`` (the value the user replaced), ``abstain`` (an explicit no-answer),
``other``. Counts always sum to n, so a column of zero
accuracy always says why.

Which answers are correct and which repeat the old value is each probe type's
:class:`~compressbench.tpbench.probe_types.spec.KindRule` (``ProbeType.kind_rule``: P2's by
P2-strict's own rule, P3's on its value part by P3's scorer).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from compressbench.readers.postprocess import NO_JSON
from compressbench.tpbench.probe_types.spec import KindRule

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
