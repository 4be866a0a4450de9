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

``counted`` is ``latest`` with counts too: a number written with its unit ("4 people", "2
tickets", "$850", "3 nights") is a kind of its own per unit, so the line lists the last count
of each unit that changed; a bare number ("for 2") still spans many slots and is left out.

    LATEST: time 9:40 am; 4 people; amount $850

``named`` is ``counted`` with names too, by another rule, since a name's kind spans many slots:
when the user says two or more distinct names over the dialogue (a name changed), the line ends
with the names of the user's last turn that says any ("Actually, make it Isushi in Castro
Valley" -> ``names Isushi, Castro Valley``). The user's last naming turn is where a revised
name stands (SGD dev 400: it holds the current value of 27 of the 36 P2 events whose current
value is a name the ``counted`` line misses, the superseded one of 1; SGD train 1,500: 39 of
65, none superseded).

    LATEST: time 9:40 am; names Isushi, Castro Valley

``unpaired`` is ``counted`` without the kinds a single turn names with two distinct texts: such a
kind stands for two slots (a pick-up and a drop-off date, "pick up on March 8th and drop off
March 12th"; check-in and check-out), so its last mention is the later slot's value, not the
changed one's. On all of SGD dev's P2 events (``python benchmarks/tp_state_line.py --splits dev
--dialogues 5000``), the ``counted`` line shows another text of the current value's kind for
226 (a date most often: a pick-up or leaving date question, the line the drop-off or return
date) and ``unpaired`` for 123; it names the current value for 960 instead of 1,018. Read on
four SGD dev samples it scores below ``counted`` with the same schema (docs/results.md).

``ranged`` is ``counted`` whose date entry, when the dialogue's last turn that names a date names
two or more, lists that turn's dates in their order ("date March 8th to March 12th"): the turn
of a pick-up and a drop-off date (check-in and check-out, leaving and return) says the earlier
slot's date first. On all of SGD dev's P2 events (as above), the ``ranged`` line names the
current value for 1,054 and another text only for 190 (``counted``: 1,018 and 226); of the 59
events whose current value is one of such a turn's two dates, it is the first of them for 36
of 37 pick-up dates and the second for all 22 drop-off dates. Read on eight SGD dev samples it
scores above ``counted`` (244 against 241 of 350), and on the pooled test samples too.

``spanned`` is ``ranged`` with those two dates as two entries, a start and an end date, so that
the reader reads one date, not the range ("date March 6th to March 9th" was answered whole for
3 pick-up questions of the eight SGD dev samples). There the reader answers pick-up questions
with the end date, and it scores ``counted``'s 241 (docs/results.md).

    LATEST: start date March 8th; end date March 12th; time 10 am

Tuned on SGD train and dev only (``python benchmarks/tp_state_line.py``): on SGD dev 400's
253 P2 events the ``counted`` line names the current value for 139 (``latest``: 122) and
another text of its kind for 13 (13); on SGD train 1,500's 927 events 693 (443) and 21 (21).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

from compressbench.compress.turning_point.features import UNITS, MentionRules, mention_spans
from compressbench.compress.turning_point.schema import KIND_PREFIX
from compressbench.corpora.model import USER, Turn

HEAD = "LATEST:"
COUNT_PREFIX = "count:"  # a number with its unit: ``count:people``, ``count:amount``
DATE_PART = "date:"  # one of two dates a turn names: ``date:start``, ``date:end``
_AMOUNT = f"{COUNT_PREFIX}amount"  # money, in any of its units
_UNIT = re.compile(rf"{UNITS}$", re.IGNORECASE)
# a unit's kind: money is one ``amount``, persons are ``people``, a plural its singular
_UNIT_KINDS = {"dollars": "amount", "bucks": "amount", "persons": "people", "person": "people"}


def _tracked(kind: str) -> bool:
    """Whether a mention kind names one slot (times, dates, a schema slot, a unit's count)."""
    return kind in ("time", "date") or kind.startswith((KIND_PREFIX, COUNT_PREFIX))


def _label(kind: str, text: str) -> str:
    """``time``, ``date``, a schema kind's slot name in words (``origin city``), ``amount`` for
    money; none for another count (its text says its unit: ``4 people``); ``start date`` and
    ``end date`` for a date part; ``name`` or ``names`` for the user's names."""
    if kind == "name":
        return "names" if ", " in text else "name"
    if kind.startswith(COUNT_PREFIX):
        return "amount" if kind == _AMOUNT else ""
    if kind.startswith(DATE_PART):
        return f"{kind.removeprefix(DATE_PART)} date"
    return kind.rsplit(":", 1)[-1].replace("_", " ")


def count_kind(kind: str, text: str) -> str:
    """A number mention's kind by its unit (``$850`` -> ``count:amount``, ``2 tickets`` ->
    ``count:ticket``); any other mention (a bare number too) keeps ``kind``."""
    if kind != "number":
        return kind
    if text.startswith("$"):
        return _AMOUNT
    unit = _UNIT.search(text)
    if unit is None:
        return kind
    word = unit.group().lower()
    return COUNT_PREFIX + _UNIT_KINDS.get(word, word.rstrip("s"))


def last_mentions(
    turns: Sequence[Turn], rules: MentionRules, counts: bool = False
) -> dict[str, tuple[str, int]]:
    """Each mention kind of ``turns`` -> its last mention's text (as written) and the number of
    distinct texts (lower-cased) the kind has, in the order of the kinds' last mentions. With
    ``counts``, a number with its unit is of its unit's kind (:func:`count_kind`)."""
    last: dict[str, str] = {}
    texts: dict[str, set[str]] = {}
    for t in turns:
        for a, b, found in mention_spans(t.text, rules):
            kind = count_kind(found, t.text[a:b]) if counts else found
            texts.setdefault(kind, set()).add(t.text[a:b].lower())
            last.pop(kind, None)  # re-inserted: the order is that of the last mentions
            last[kind] = t.text[a:b]
    return {k: (v, len(texts[k])) for k, v in last.items()}


def user_names(turns: Sequence[Turn], rules: MentionRules) -> list[str]:
    """The names (as written) of the user's last turn that says any, when the user says two or
    more distinct names over ``turns``; none otherwise."""
    said = [
        [t.text[a:b] for a, b, kind in mention_spans(t.text, rules) if kind == "name"]
        for t in turns
        if t.speaker == USER
    ]
    said = [names for names in said if names]
    distinct = {name.lower() for names in said for name in names}
    return said[-1] if len(distinct) > 1 else []


def turn_texts(turn: Turn, rules: MentionRules, counts: bool) -> dict[str, list[str]]:
    """Each mention kind of ``turn`` -> its distinct texts (as first written, distinct lower-
    cased), in the turn's order."""
    texts: dict[str, dict[str, str]] = {}
    for a, b, found in mention_spans(turn.text, rules):
        kind = count_kind(found, turn.text[a:b]) if counts else found
        texts.setdefault(kind, {}).setdefault(turn.text[a:b].lower(), turn.text[a:b])
    return {k: list(said.values()) for k, said in texts.items()}


def paired_kinds(turns: Sequence[Turn], rules: MentionRules, counts: bool) -> set[str]:
    """The kinds some single turn of ``turns`` names with two or more distinct texts: kinds of
    two slots ("pick up on March 8th, drop off March 12th")."""
    return {k for t in turns for k, said in turn_texts(t, rules, counts).items() if len(said) > 1}


def last_dates(turns: Sequence[Turn], rules: MentionRules) -> list[str]:
    """The dates of the last turn of ``turns`` that names a date, in order, when it names two or
    more distinct ones; none otherwise."""
    for t in reversed(turns):
        dates = turn_texts(t, rules, counts=False).get("date")
        if dates:
            return dates if len(dates) > 1 else []
    return []


def _range(dates: list[str]) -> dict[str, str]:
    """One date entry: two dates "March 8th to March 12th", three or more joined by ", "."""
    return {"date": (" to " if len(dates) == 2 else ", ").join(dates)}


def _span(dates: list[str]) -> dict[str, str]:
    """Two dates as a start and an end date entry (``date:start``, ``date:end``); three or more
    as :func:`_range`."""
    return {"date:start": dates[0], "date:end": dates[1]} if len(dates) == 2 else _range(dates)


# how the date entry shows the :func:`last_dates` of a date turn naming two or more: ``last``
# (its last mention, as every other kind), ``range`` (:func:`_range`), ``span`` (:func:`_span`)
DATE_ENTRIES: dict[str, Callable[[list[str]], dict[str, str]] | None] = {
    "last": None,
    "range": _range,
    "span": _span,
}


def line_entries(
    turns: Sequence[Turn],
    rules: MentionRules,
    counts: bool,
    names: bool,
    unpaired: bool = False,
    dates: str = "last",
) -> dict[str, str]:
    """The state line's entries, kind -> its text: every tracked kind with two or more distinct
    texts, its last mention, in the order of the kinds' last mentions (with ``unpaired``, not
    the :func:`paired_kinds`; the date entry as ``dates`` says: :data:`DATE_ENTRIES`); with
    ``names``, then ``name`` -> the names of :func:`user_names` no other entry holds, joined
    by ", "."""
    left_out = paired_kinds(turns, rules, counts) if unpaired else set()
    entries = {
        k: text
        for k, (text, distinct) in last_mentions(turns, rules, counts).items()
        if _tracked(k) and distinct > 1 and k not in left_out
    }
    shown = DATE_ENTRIES[dates]
    if shown is not None and "date" in entries and (pair := last_dates(turns, rules)):
        # the date entry's place in the line, its new entries
        entries = {
            kind: text
            for k, v in entries.items()
            for kind, text in (shown(pair) if k == "date" else {k: v}).items()
        }
    listed = {text.lower() for text in entries.values()}
    named = [n for n in user_names(turns, rules) if n.lower() not in listed] if names else []
    return {**entries, "name": ", ".join(dict.fromkeys(named))} if named else entries


class LineRule(NamedTuple):
    """A line rule's settings, the keyword arguments of :func:`line_entries` after ``rules``."""

    counts: bool
    names: bool = False
    unpaired: bool = False
    dates: str = "last"


def _latest(turns: Sequence[Turn], rules: MentionRules, rule: LineRule) -> str:
    """The state line of ``turns`` ("" when no tracked kind changed)."""
    items = [
        f"{_label(k, text)} {text}".lstrip()
        for k, text in line_entries(turns, rules, *rule).items()
    ]
    return f"{HEAD} {'; '.join(items)}" if items else ""


# the line rules: ``latest`` (times, dates, schema slots), ``counted`` (those and each unit's
# count), ``named`` (those and the user's last names), ``unpaired`` (``counted`` without the
# kinds a turn names twice), ``ranged`` (``counted`` with the last date turn's dates in order),
# ``spanned`` (``counted`` with them as a start and an end date)
LINE_RULES: dict[str, LineRule] = {
    "latest": LineRule(counts=False),
    "counted": LineRule(counts=True),
    "named": LineRule(counts=True, names=True),
    "unpaired": LineRule(counts=True, unpaired=True),
    "ranged": LineRule(counts=True, dates="range"),
    "spanned": LineRule(counts=True, dates="span"),
}
# ``state`` settings: ``none`` (default, no line) or a line rule
STATES: dict[str, Callable[[Sequence[Turn], MentionRules], str]] = {
    "none": lambda turns, rules: "",
    **{name: functools.partial(_latest, rule=rule) for name, rule in LINE_RULES.items()},
}
