"""The state line: the latest value of each revised kind, one line after the kept pieces.

A labelled rendering variant of ``turning_point`` (issue #31: "a compact state line of current
values within the same token budget"). It is read from the turn texts alone, like the rest of
the method: for every kind of value-like mention whose kind names one slot (a time, a date, a
schema slot of the lexicon learned from SGD train: :func:`_tracked`), the dialogue's last
mention of that kind, listed when the dialogue holds two or more distinct texts of the kind (a
value that changed). Names and bare numbers are left out: their kinds span many slots (a
restaurant, a city, a person; a count, a price), so the last of them is seldom the one a
question asks for (SGD dev 400, P2 events: the last mention of the gold value's kind is the
gold value for 72 of 78 times, 31 of 37 dates, 41 of 42 schema slots, 16 of 38 names, 14 of
25 numbers).

    LATEST: time 9:40 am; date March 5th; city San Diego

Kinds are listed in the order of their last mention, each value in its own words (the last
mention's text as written). The line is not verbatim dialogue text, so a method using it is a
rendering variant, reported apart from pure selection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from compressbench.compress.turning_point.features import mention_spans
from compressbench.compress.turning_point.schema import KIND_PREFIX, Vocabulary
from compressbench.corpora.model import Turn

HEAD = "LATEST:"


def _tracked(kind: str) -> bool:
    """Whether a mention kind names one slot (times, dates, a schema slot)."""
    return kind in ("time", "date") or kind.startswith(KIND_PREFIX)


def _label(kind: str) -> str:
    """``time``, ``date`` or a schema kind's slot name in words (``origin city``)."""
    return kind.rsplit(":", 1)[-1].replace("_", " ")


def last_mentions(turns: Sequence[Turn], vocab: Vocabulary | None) -> dict[str, tuple[str, int]]:
    """Each mention kind of ``turns`` -> its last mention's text (as written) and the number of
    distinct texts (lower-cased) the kind has, in the order of the kinds' last mentions."""
    last: dict[str, str] = {}
    texts: dict[str, set[str]] = {}
    for t in turns:
        for a, b, kind in mention_spans(t.text, vocab):
            texts.setdefault(kind, set()).add(t.text[a:b].lower())
            last.pop(kind, None)  # re-inserted: the order is that of the last mentions
            last[kind] = t.text[a:b]
    return {k: (v, len(texts[k])) for k, v in last.items()}


def _latest(turns: Sequence[Turn], vocab: Vocabulary | None) -> str:
    """The ``latest`` state line of ``turns`` ("" when no tracked kind changed)."""
    items = [
        f"{_label(k)} {text}"
        for k, (text, distinct) in last_mentions(turns, vocab).items()
        if _tracked(k) and distinct > 1
    ]
    return f"{HEAD} {'; '.join(items)}" if items else ""


# ``state`` settings: ``none`` (default, no line) or ``latest`` (the line above)
STATES: dict[str, Callable[[Sequence[Turn], Vocabulary | None], str]] = {
    "none": lambda turns, vocab: "",
    "latest": _latest,
}
