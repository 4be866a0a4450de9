"""Sub-turn segments of a dialogue: the units the turning-point compressor keeps or drops.

A turn is cut into sentences (after ``.``, ``?`` or ``!`` followed by a space and a capital,
digit or quote, so "7 p.m. tomorrow" stays whole); ``units="clause"`` cuts each sentence
further at ``, `` / ``; `` when both sides hold at least ``min_words`` words, ``"phrase"`` also
before a preposition ("at", "for", "on", "in", "from", "to", "with", "and") leaving two words
or more on each side. No cut falls inside a value-like span ("half past 11 in the morning").
``units="mention"`` (for tight budgets) cuts each phrase once more around its value-like spans:
every mention becomes a segment of its own, with the preposition just before it ("to Joseph",
"at 5:45 pm"), and the words around it become segments too, so a value can be kept without
the rest of its phrase. ``units="value"`` (for the tightest budgets, r = 0.1) cuts the same way
without the preposition and the punctuation after the value: "at 5:45 pm," gives "at",
"5:45 pm" and "," (the value costs only its own tokens).
The first USER turn's first segment is cut by the naive goal rule (everything up to and
including the first ``.``, ``?`` or ``!``), so that the user's initial request survives exactly
as stated. Each segment is a character span of its turn: kept segments are verbatim text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from compressbench.compress.turning_point.features import PLAIN, MentionRules, mention_spans
from compressbench.corpora.model import USER, Turn

_SENTENCE_END = re.compile(r"(?<=[.?!])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9])")
_CLAUSE_END = re.compile(r"(?<=[,;])\s+")
# phrase cuts: before a preposition that usually opens a value ("at 7 pm", "for 2 people")
_PHRASE_START = re.compile(r"\s+(?=(?:at|for|on|in|from|to|with|and)\s)")
_GOAL_END = re.compile(r"[.?!]")


@dataclass(frozen=True)
class Segment:
    """Characters ``[start, end)`` of turn ``turn`` (position ``pos`` in the dialogue)."""

    pos: int  # position of the turn in the dialogue's turn list
    turn: int  # the turn's own index
    speaker: str
    start: int
    end: int
    text: str
    goal: bool = False  # the first user request (always kept)


def _split(text: str, pattern: re.Pattern[str], base: int) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in pattern.finditer(text):
        if m.start() > start:
            spans.append((base + start, base + m.start()))
        start = m.end()
    if start < len(text):
        spans.append((base + start, base + len(text)))
    return spans


def _clauses(
    text: str,
    span: tuple[int, int],
    min_words: int,
    pattern: re.Pattern[str] = _CLAUSE_END,
    rules: MentionRules = PLAIN,
) -> list[tuple[int, int]]:
    """``span`` cut by ``pattern`` where both sides have ``min_words`` words and no cut falls
    inside a value-like span."""
    a, b = span
    inside = [(x + a, y + a) for x, y, _ in mention_spans(text[a:b], rules)]
    parts = _join_inside(_split(text[a:b], pattern, a), inside)
    merged: list[tuple[int, int]] = []
    for part in parts:
        short = len(text[part[0] : part[1]].split()) < min_words
        if merged and (short or len(text[merged[-1][0] : merged[-1][1]].split()) < min_words):
            merged[-1] = (merged[-1][0], part[1])
        else:
            merged.append(part)
    return merged


def _join_inside(
    parts: list[tuple[int, int]], inside: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Parts re-joined where the cut between two falls inside one of the ``inside`` spans."""
    out: list[tuple[int, int]] = []
    for part in parts:
        if out and any(x < part[0] and out[-1][1] < y for x, y in inside):
            out[-1] = (out[-1][0], part[1])
        else:
            out.append(part)
    return out


UNITS = ("sentence", "clause", "phrase", "mention", "value")  # each cuts what the one before cuts
FINE_UNITS = UNITS[3:]  # a value-like span is a segment of its own
_PUNCT = re.compile(r"[.,;:?!\"')\]]+(?:\s|$)")  # punctuation that ends a word
_LEAD_WORD = re.compile(r"(?:^|\s)(at|for|on|in|from|to|with|and|of)(?:\s+the)?\s+$", re.IGNORECASE)


def _mention_cuts(
    text: str, span: tuple[int, int], rules: MentionRules, bare: bool = False
) -> list[tuple[int, int]]:
    """``span`` cut around each value-like span in it (the mention with the preposition just
    before it; the text between mentions as segments of their own). Cuts fall between words
    only: a mention inside a word ("408-555-0182") widens to the whole word, and trailing
    punctuation stays with it. ``bare``: the mention alone, without the preposition, and the
    punctuation after it opens the next segment ("5:45 pm" | ", please")."""
    a, b = span
    pieces: list[tuple[int, int]] = []
    cursor = a
    for x, y, _ in mention_spans(text[a:b], rules):
        start, end = max(a + x, cursor), a + y
        while start > cursor and not text[start - 1].isspace():  # cut between words only
            start -= 1
        while end < b and not text[end].isspace() and not (bare and _PUNCT.match(text, end)):
            end += 1  # to the word's end (and, unless bare, its trailing punctuation)
        if start < cursor or end <= start:
            continue
        lead = None if bare else _LEAD_WORD.search(text[cursor:start])
        if lead is not None:
            start = cursor + lead.start(1)
        if text[cursor:start].strip():
            pieces.append(_strip(text, cursor, start))
        pieces.append((start, end))
        cursor = end
    if text[cursor:b].strip():
        pieces.append(_strip(text, cursor, b))
    return pieces


def _strip(text: str, a: int, b: int) -> tuple[int, int]:
    """``[a, b)`` without its leading and trailing whitespace."""
    piece = text[a:b]
    return a + len(piece) - len(piece.lstrip()), b - (len(piece) - len(piece.rstrip()))


def turn_spans(
    text: str,
    *,
    goal: bool,
    units: str = "clause",
    min_words: int = 3,
    rules: MentionRules = PLAIN,
) -> list[tuple[int, int]]:
    """Character spans of one turn's segments (whitespace between them excluded)."""
    stripped = text.rstrip()
    head: list[tuple[int, int]] = []
    start = len(text) - len(text.lstrip())
    if goal:
        m = _GOAL_END.search(stripped, start)
        cut = m.end() if m else len(stripped)
        head = [(start, cut)]
        rest = stripped[cut:]
        start = cut + len(rest) - len(rest.lstrip())
    spans = _split(stripped[start:], _SENTENCE_END, start) if start < len(stripped) else []
    level = UNITS.index(units)
    if level >= UNITS.index("clause"):
        spans = [c for s in spans for c in _clauses(stripped, s, min_words, rules=rules)]
    if level >= UNITS.index("phrase"):
        spans = [c for s in spans for c in _clauses(stripped, s, 2, _PHRASE_START, rules)]
    if units in FINE_UNITS:
        bare = units == "value"
        spans = [c for s in spans for c in _mention_cuts(stripped, s, rules, bare)]
    return head + spans


def segment_dialogue(
    turns: Sequence[Turn], *, units: str = "clause", rules: MentionRules = PLAIN
) -> list[Segment]:
    """Every segment of every turn, in dialogue order. Reads turn texts and speakers only."""
    first_user = next((p for p, t in enumerate(turns) if t.speaker == USER), -1)
    out: list[Segment] = []
    for pos, t in enumerate(turns):
        goal = pos == first_user
        for i, (a, b) in enumerate(turn_spans(t.text, goal=goal, units=units, rules=rules)):
            out.append(Segment(pos, t.index, t.speaker, a, b, t.text[a:b], goal and i == 0))
    return out
