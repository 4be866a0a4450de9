"""What the query-aware variant of ``turning_point`` reads from the question (labelled: it reads
the question the reader will be asked, which the paper's methods and the default never do).

The question names a slot ("... CURRENT value for pickup time?"); its words say which kind of
value-like mention can answer it (:data:`KIND_WORDS`, first match wins; a slot naming none of
them is a name or place: ``name``). Mentions of the other kinds are worth :data:`OFF` times their
probability, so the budget goes to the mentions the question can use. A question that names no
slot (P1's initial goal) leaves every mention as it is.
"""

from __future__ import annotations

import re

QUERY_MODES = ("none", "question")
"""``none``: the question is not read (default); ``question``: the kind filter below."""

OFF = 0.2  # the weight of a mention of another kind than the question's

# question words -> the mention kind that answers them, tried in this order
KIND_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("number", ("number", "amount", "rating", "length", "count", "size", "stars", "price")),
    ("time", ("time",)),
    ("date", ("date", "day")),
)
_WORD = re.compile(r"[a-z]+")
# the slot follows "for" in P2's question and "for" ... "." in P3's (tpbench/probe_types)
_SLOT = re.compile(r"\bfor ([^?.:]+)", re.IGNORECASE)


def question_kind(query: str | None) -> str | None:
    """The mention kind that answers ``query``'s slot, or None (no slot named, or no query)."""
    if not query:
        return None
    slot = _SLOT.search(query)
    if slot is None:
        return None
    words = set(_WORD.findall(slot.group(1).lower()))
    for kind, cue_words in KIND_WORDS:
        if words & set(cue_words):
            return kind
    return "name"


def kind_weight(kind: str, wanted: str | None) -> float:
    """A mention's weight: 1 for the wanted kind (or when none is wanted), else :data:`OFF`."""
    return 1.0 if wanted is None or kind == wanted else OFF
