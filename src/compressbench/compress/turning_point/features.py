"""What a segment holds, from its text alone: value-like spans, and revision / confirmation cues.

Value-like spans are found by patterns written for task-oriented dialogue (no library tags
times such as "half past 11" or "7 p.m." together with dates, counts and venue names in
one pass at this cost): times, dates, numbers (digits; number words with a unit or after
"for"), and names (capitalised word runs minus leading function words).
Cues are word patterns: a *revision* cue ("actually", "instead", "change it to", "make it"...),
a *confirmation* cue ("please confirm", "you want", "booked"...), an *acceptance* cue ("yes,
that works").
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compressbench.compress.turning_point.schema import Vocabulary

_NUM_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty"
_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
UNITS = (
    r"(?:dollars|bucks|people|persons?|tickets?|rooms?|nights?|days?|seats?|stars?|"
    r"bedrooms?|baths?|adults?|passengers?)\b"
)
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_DATE = (
    rf"\b(?:(?:{_MONTHS})\.? \d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)"
    rf"(?: of (?:{_MONTHS}|this month|next month))?|(?:next |this )?(?:{_DAYS})"
    r"|today|tonight|tomorrow|day after tomorrow|this weekend|next week(?:end)?)"
)

VALUE_PATTERNS: dict[str, re.Pattern[str]] = {
    "time": re.compile(
        r"\b(?:\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|o'?clock)"
        r"|\d{1,2}:\d{2}|half past \w+|quarter (?:past|to) \w+|noon|midnight"
        rf"|(?:{_NUM_WORDS}|\d{{1,2}}) in the (?:morning|afternoon|evening|night)"
        r"|(?:morning|afternoon|evening|night) \d{1,2}(?::\d{2})?)"
        r"(?: in the (?:morning|afternoon|evening|night))?",
        re.IGNORECASE,
    ),
    "date": re.compile(_DATE + r"\b", re.IGNORECASE),
    "number": re.compile(
        rf"(?:\$\s?)?\b\d+(?:[.,]\d+)*\b(?:\s?{UNITS})?"
        rf"|\b(?:{_NUM_WORDS})\s?{UNITS}|(?<=\bfor )(?:{_NUM_WORDS})\b",
        re.IGNORECASE,
    ),
}
_NAME = re.compile(
    r"(?<![\w'])[A-Z](?:[\w'&\-]|\.(?=\w))*"
    r"(?:\s+(?:(?:of|the|and|de|on|at|&)\s+)?[A-Z](?:[\w'&\-]|\.(?=\w))*)*"
)
_NOT_NAMES = frozenset(
    str.split(
        "I I'm I'd I'll I've Yes No Ok OK Okay Sure Thanks Thank Please Hi Hello Hey Great Perfect "
        "Sorry Alright Alrighty What When Where Which Who How Is Are Do Does Can Could Would Will "
        "Should Shall That This There The A An It My Your You We They He She And But Or So Also "
        "Just Let Find Book Get Make Any Anything Nothing Have Has Is Be Not Id Im"
    )
)

# the ``dates`` rules, each -> (its date pattern, whether a name run is cut where a date or a
# time starts): ``in_names`` (the first rules, the default: a capitalised run reads on through
# "on", "at", "of" into a month, "Seattle on March 7th" -> the name "Seattle on March" and no
# date; a date stops before its year) and ``whole`` (a name stops where a date or a time starts
# and resumes after it, "Seattle" and "March 7th"; a date keeps its year, "March 7th 2019")
DATE_RULES: dict[str, tuple[re.Pattern[str], bool]] = {
    "in_names": (VALUE_PATTERNS["date"], False),
    "whole": (re.compile(_DATE + r"(?:,? (?:19|20)\d\d)?\b", re.IGNORECASE), True),
}
_CONNECTOR_TAIL = re.compile(r"(?:\s+(?:of|the|and|de|on|at|&))*[\s,.]*$")

REVISION = re.compile(
    r"\b(?:actually|instead|rather|change|changed|changing|switch|make it|make that|"
    r"how about|what about|prefer|not|no|wrong|mistake|correction|update|modify|"
    r"different|another|earlier|later|reschedule|cancel|rather than)\b",
    re.IGNORECASE,
)
CONFIRM = re.compile(
    r"\b(?:confirm\w*|to clarify|just to be clear|you want|you would like|you'd like|"
    r"booked|reserved|reservation (?:is|was|has)|booking (?:is|was|has)|is that (?:right|"
    r"correct)|scheduled|successful\w*|all set|i have (?:booked|made))\b",
    re.IGNORECASE,
)
ACCEPT = re.compile(
    r"\b(?:yes|yeah|yep|correct|that works|sounds good|that's right|perfect)\b", re.IGNORECASE
)


@dataclass(frozen=True)
class MentionRules:
    """What finds mentions besides the text patterns: a schema ``vocab`` (its terms are
    mentions too; None: the patterns alone) and the ``dates`` rule (:data:`DATE_RULES`)."""

    vocab: Vocabulary | None = None
    dates: str = "in_names"


PLAIN = MentionRules()  # the patterns alone, by the first rules


@dataclass(frozen=True)
class Mention:
    """A value-like span: its type and its lower-cased text."""

    kind: str
    text: str


def name_span(run: str) -> tuple[int, int] | None:
    """Where the name is in a capitalised word run: without its leading function words
    ("Please", "The"...) and trailing ``.``/``,``; None when nothing is left."""
    for word in re.finditer(r"\S+", run):
        w = word.group().strip(".,'")
        if w[:1].isupper() and w.split("'")[0] not in _NOT_NAMES:
            end = len(run.rstrip().rstrip(".,"))
            return (word.start(), end) if end > word.start() else None
    return None


_SENTENCE_START = re.compile(r"(?:^|[.?!:]\s+)$")


def _outside(runs: list[tuple[int, int]], cuts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of each run that no ``cuts`` span covers."""
    out = []
    for a, b in runs:
        at = a
        for x, y in sorted(c for c in cuts if c[0] < b and c[1] > a):
            if x > at:
                out.append((at, x))
            at = max(at, y)
        if at < b:
            out.append((at, b))
    return out


@functools.lru_cache(maxsize=4096)
def mention_spans(text: str, rules: MentionRules = PLAIN) -> tuple[tuple[int, int, str], ...]:
    """``(start, end, kind)`` of every value-like span of ``text``, in order; a number inside
    a time or a date is not a mention of its own, nor is a lone capitalised word that opens a
    sentence ("Reservation is made"). With a schema vocabulary, its terms are mentions too;
    ``rules.dates`` says how dates are read (:data:`DATE_RULES`)."""
    spans: list[tuple[int, int, str]] = []
    vocab = rules.vocab
    if vocab is not None:
        spans += [(m.start(), m.end(), vocab.kind(m.group())) for m in vocab.pattern.finditer(text)]
    date_pattern, cut_names = DATE_RULES[rules.dates]
    for kind, pattern in {**VALUE_PATTERNS, "date": date_pattern}.items():
        spans += [(m.start(), m.end(), kind) for m in pattern.finditer(text)]
    runs = [(m.start(), m.end()) for m in _NAME.finditer(text)]
    if cut_names:
        runs = _outside(runs, [(a, b) for a, b, k in spans if k in ("date", "time")])
    for run_start, run_end in runs:
        found = name_span(text[run_start:run_end])
        if found is None:
            continue
        start, end = run_start + found[0], run_start + found[1]
        if cut_names:  # a cut run may end in its connector ("Seattle on")
            end = start + len(_CONNECTOR_TAIL.sub("", text[start:end]))
            if end <= start:
                continue
        if " " not in text[start:end] and _SENTENCE_START.search(text[:start]):
            continue
        spans.append((start, end, "name"))
    kept: list[tuple[int, int, str]] = []
    for a, b, kind in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
        if kept and a < kept[-1][1]:  # inside (or overlapping) an earlier, longer span
            continue
        kept.append((a, b, kind))
    return tuple(kept)


def mentions(text: str, rules: MentionRules = PLAIN) -> list[Mention]:
    """Every value-like span of ``text`` as a :class:`Mention` (see :func:`mention_spans`)."""
    return [Mention(kind, text[a:b].lower()) for a, b, kind in mention_spans(text, rules)]


def cues(text: str) -> tuple[bool, bool, bool]:
    """``(revision, confirmation, acceptance)`` cue present in ``text``."""
    return (
        REVISION.search(text) is not None,
        CONFIRM.search(text) is not None,
        ACCEPT.search(text) is not None,
    )
