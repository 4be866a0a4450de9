"""How likely a value-like mention is a *current* value: features of a mention in its dialogue,
and a logistic scorer over them.

The features read turn texts, speakers and positions only (never state annotations). The
weights come from :mod:`.train` (fitted on SGD train, the annotations as labels) and are stored
as JSON: ``models/turning_point/scorer.json`` (written by the DVC stage, shipped with the
package) is the default; a ``scorer`` path replaces it. Inference is a dot product per mention,
in plain Python.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.compress.turning_point.features import (
    ACCEPT,
    PLAIN,
    Mention,
    MentionRules,
    cues,
    mentions,
)
from compressbench.compress.turning_point.schema import Vocabulary, vocabulary_of
from compressbench.compress.turning_point.segments import Segment
from compressbench.corpora.model import USER
from compressbench.errors import InputError

MODEL_FILE = "models/turning_point/scorer.json"
"""The fitted scorer, relative to the repository root (the ``turning_point_scorer`` stage's out)."""


def packaged_scorer() -> Path:
    """The default scorer file: the source checkout's ``models/`` (an editable install, a clone,
    the image's workspace), else the copy a wheel installs under ``<prefix>/share/compressbench``
    (``[tool.setuptools.data-files]``)."""
    checkout = Path(__file__).resolve().parents[4] / MODEL_FILE
    if checkout.is_file():
        return checkout
    return Path(sysconfig.get_path("data")) / "share" / "compressbench" / MODEL_FILE


KINDS = ("time", "date", "number", "name")
OFFER = re.compile(
    r"\b(?:how about|would you like|do you want|there is|there are|i found|shall i|how does|"
    r"what about|is there|are there)\b",
    re.IGNORECASE,
)
REJECT = re.compile(
    r"\b(?:no|not|don't|won't|another|else|instead|different|rather|actually|change)\b",
    re.IGNORECASE,
)
PREV_WORDS = ("at", "for", "in", "on", "from", "to", "is", "the", "of", "and")
INFO = re.compile(
    r"\b(?:address|phone|number is|rating|rated|located|cost|price|costs|fare|street|"
    r"avenue|road|layover|departs|arrives|review)\b|\$",
    re.IGNORECASE,
)
_PREV = re.compile(r"(\w+)\W*$")
FEATURES: tuple[str, ...] = (
    *(f"kind_{k}" for k in KINDS),
    *(f"user_{k}" for k in KINDS),
    "rel_pos",
    "latest_of_kind",
    "later_other_of_kind",
    "repeated_later",
    "repeated_earlier",
    "seg_confirm",
    "seg_revision",
    "seg_question",
    "seg_offer",
    "next_accept",
    "next_reject",
    "next_same_kind",
    "user_confirm",
    "user_revision",
    "n_words",
    "goal_turn",
    "seg_mentions",
    "sys_next_accept",
    "sys_next_reject",
    "sys_offer",
    "sys_confirm",
    "user_next_reject",
    "rel_pos_latest",
    "last_turn_of_kind_user",
    "last_turn_of_kind_system",
    *(f"prev_{w}" for w in PREV_WORDS),
    "sys_info",
    "user_first_of_text",
)


@dataclass(frozen=True)
class Located:
    """A mention, the segment it is in and its feature vector."""

    seg: int
    mention: Mention
    x: tuple[float, ...]


def located_mentions(
    segs: Sequence[Segment], n_turns: int, rules: MentionRules = PLAIN
) -> list[Located]:
    """Every mention of every segment with its features (see :data:`FEATURES`); schema terms
    (``rules.vocab``) have no kind feature of their own."""
    per_seg = [mentions(s.text, rules) for s in segs]
    flat = [(i, m) for i, ms in enumerate(per_seg) for m in ms]
    # per mention: later distinct texts of its kind, later / earlier same text (one pass each way)
    later_kind: list[set[str]] = []
    later_text: list[bool] = []
    seen_kind: dict[str, set[str]] = {}
    seen_text: set[str] = set()
    last_pos_by: dict[tuple[str, str], int] = {}
    for i, m in reversed(flat):
        later_kind.append(seen_kind.get(m.kind, set()) - {m.text})
        later_text.append(m.text in seen_text)
        seen_kind.setdefault(m.kind, set()).add(m.text)
        seen_text.add(m.text)
        last_pos_by.setdefault((segs[i].speaker, m.kind), segs[i].pos)
    later_kind.reverse()
    later_text.reverse()
    earlier_text: set[str] = set()
    turn_texts: dict[int, list[str]] = {}
    for s in segs:
        turn_texts.setdefault(s.pos, []).append(s.text)
    by_pos = {pos: " ".join(texts) for pos, texts in turn_texts.items()}
    kinds_by_pos = {pos: {m.kind for m in mentions(text, rules)} for pos, text in by_pos.items()}
    seg_cues = [cues(s.text) for s in segs]
    out = []
    for n, (i, m) in enumerate(flat):
        s = segs[i]
        nxt = by_pos.get(s.pos + 1, "")
        user = s.speaker == USER
        revision, confirm, _ = seg_cues[i]
        rel = s.pos / max(1, n_turns - 1)
        latest = not later_kind[n] and not later_text[n]
        accept = ACCEPT.search(nxt) is not None
        reject = REJECT.search(nxt) is not None
        offer = OFFER.search(s.text) is not None
        last_of_speaker = last_pos_by.get((s.speaker, m.kind)) == s.pos
        prev = _prev_word(s.text, m.text)
        x = (
            *(float(m.kind == k) for k in KINDS),
            *(float(user and m.kind == k) for k in KINDS),
            rel,
            float(latest),
            min(3, len(later_kind[n])) / 3,
            float(later_text[n]),
            float(m.text in earlier_text),
            float(confirm),
            float(revision),
            float(s.text.rstrip().endswith("?")),
            float(offer),
            float(accept),
            float(reject),
            float(m.kind in kinds_by_pos.get(s.pos + 1, set())),
            float(user and confirm),
            float(user and revision),
            min(4, len(m.text.split())) / 4,
            float(s.goal),
            min(5, len(per_seg[i])) / 5,
            float(not user and accept),
            float(not user and reject),
            float(not user and offer),
            float(not user and confirm),
            float(user and reject),
            rel * latest,
            float(user and last_of_speaker),
            float(not user and last_of_speaker),
            *(float(prev == w) for w in PREV_WORDS),
            float(not user and INFO.search(s.text) is not None),
            float(user and m.text not in earlier_text),
        )
        earlier_text.add(m.text)
        out.append(Located(i, m, x))
    return out


def _prev_word(text: str, mention: str) -> str:
    """The lower-cased word just before ``mention`` in ``text`` ("" at the start)."""
    at = text.lower().find(mention)
    m = _PREV.search(text[:at].lower()) if at > 0 else None
    return m.group(1) if m else ""


@dataclass(frozen=True)
class Scorer:
    """Logistic scorer: ``p = sigmoid(intercept + sum(w * x))``."""

    coef: tuple[float, ...]
    intercept: float
    meta: dict[str, Any]

    @functools.cached_property
    def vocabulary(self) -> Vocabulary | None:
        """The terms learned with the weights (``vocabulary`` pairs), or None."""
        pairs = self.meta.get("vocabulary") or []
        return vocabulary_of({str(t): str(s) for t, s in pairs}) if pairs else None

    def p(self, x: Sequence[float]) -> float:
        z = self.intercept + sum(w * v for w, v in zip(self.coef, x, strict=True))
        return 1.0 / (1.0 + math.exp(-z))


def scorer_from_dict(data: dict[str, Any], source: str = "scorer") -> Scorer:
    """A :class:`Scorer` from its JSON form; its feature list must be this module's."""
    if not isinstance(data, dict) or tuple(data.get("features", ())) != FEATURES:
        raise InputError("its features differ from this version's; retrain it", file=source)
    try:
        return Scorer(tuple(float(c) for c in data["coef"]), float(data["intercept"]), data)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"malformed scorer ({exc})", file=source) from None


@functools.lru_cache(maxsize=4)
def load_scorer(path: str | None = None) -> Scorer:
    """The scorer stored at ``path`` (default: :func:`packaged_scorer`)."""
    file = Path(path) if path else packaged_scorer()
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"unreadable scorer ({exc})", file=str(file)) from None
    return scorer_from_dict(data, str(file))
