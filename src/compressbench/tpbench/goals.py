"""Goal labels (spec §3.2): the P1 gold and the P3 story label.

* ``goal_text`` - the first USER turn's text.
* :func:`goal_first_sentence` - its first sentence, cut naively at the first ``.``, ``?`` or
  ``!`` (so "a 4.0 rated house" gives "... a 4"); case kept. This is the P1 gold.
* :func:`normalize_task` - the P3 story label: one leading request prefix removed, trailing
  ``?.!`` removed, lower-cased.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from compressbench.corpora.model import USER, Turn

_SENTENCE_END = re.compile(r"[.?!]")
_TRAILING_PUNCT = re.compile(r"[?.!]+\s*$")

# Removed once, at the very start, case-insensitively (data, spec §3.2).
TASK_PREFIXES: tuple[str, ...] = (
    "can you ",
    "could you ",
    "please ",
    "i'd like to ",
    "id like to ",
    "i want to ",
    "i need to ",
    "i'm looking to ",
    "im looking to ",
)


def goal_text(turns: Sequence[Turn]) -> str:
    """Text of the first USER turn ("" when there is none)."""
    return next((t.text for t in turns if t.speaker == USER), "")


def goal_first_sentence(text: str) -> str:
    """Everything before the first ``.``, ``?`` or ``!``, stripped."""
    return _SENTENCE_END.split(text, maxsplit=1)[0].strip()


def normalize_task(text: str) -> str:
    """The P3 story label of a goal sentence (spec §3.2)."""
    s = text.strip()
    lowered = s.lower()
    for prefix in TASK_PREFIXES:
        if lowered.startswith(prefix):
            s = s[len(prefix) :]
            break
    s = _TRAILING_PUNCT.sub("", s)
    return s.strip().lower()


def story_label(turns: Sequence[Turn]) -> str:
    """``normalize_task(goal_first_sentence or goal_text)`` for a dialogue."""
    text = goal_text(turns)
    return normalize_task(goal_first_sentence(text) or text)
