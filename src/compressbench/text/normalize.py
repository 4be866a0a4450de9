"""Text normalisers of TPBench (spec §1). There are several; each has one job.

* :func:`normalize_value` - slot values and turn text (P2, evidence, aliases), spec §1.1.
* :func:`phrase_occurs` - the phrase-boundary matcher, spec §1.2.
* :func:`norm_text` - the P3 value normaliser (case and whitespace only), spec §1.5.
* :func:`humanize_slot` - ``origin_city`` -> ``origin city``.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# MultiWOZ alias table, applied in this order as whole-word literal replacements (data, spec §1.1).
MULTIWOZ_ALIASES: tuple[tuple[str, str], ...] = (
    ("centre", "center"),
    ("color", "colour"),
    ("1 person", "1"),
    ("one person", "1"),
    ("2 people", "2"),
    ("two people", "2"),
    ("3 people", "3"),
    ("three people", "3"),
    ("4 people", "4"),
    ("five people", "5"),
    ("5 people", "5"),
    ("moderate price", "moderate"),
    ("moderately priced", "moderate"),
    ("expensive priced", "expensive"),
    ("cheap priced", "cheap"),
    ("guesthouse", "guest house"),
    ("asian oriental", "asian"),
    ("north american", "american"),
    ("panasian", "asian"),
)
_ALIAS_PATTERNS = tuple(
    (re.compile(r"\b" + re.escape(src) + r"\b"), dst) for src, dst in MULTIWOZ_ALIASES
)

_AMPM = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)\b", re.IGNORECASE)
HMM_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_BARE_TIME = re.compile(r"\b(\d{3,4})\b")
PUNCT = re.compile(r"[^\w\s:/\-]+")
SPACES = re.compile(r"\s+")
_SLOT_SEP = re.compile(r"[_\-]+")


def ampm_to_24h(m: re.Match[str]) -> str:
    """Groups (hour, minutes?, suffix starting with a/p) -> ``HH:MM``."""
    hour = int(m.group(1))
    minute = int(m.group(2) or 0)
    pm = m.group(3).lower().startswith("p")
    if pm and hour != 12:
        hour += 12
    elif not pm and hour == 12:
        hour = 0
    return f"{hour:02d}:{minute:02d}"


def pad_hour(m: re.Match[str]) -> str:
    """``H:MM`` -> ``HH:MM``."""
    return f"{int(m.group(1)):02d}:{m.group(2)}"


def _bare_time(m: re.Match[str]) -> str:
    digits = m.group(1)
    hour, minute = int(digits[:-2]), int(digits[-2:])
    if 0 <= hour <= 23 and 0 <= minute <= 59:
        return f"{hour:02d}:{minute:02d}"
    return digits


def normalize_times(s: str) -> str:
    """The three time passes of spec §1.1 step 3 (am/pm, H:MM padding, bare 3-4 digits)."""
    s = _AMPM.sub(ampm_to_24h, s)
    s = HMM_TIME.sub(pad_hour, s)
    return _BARE_TIME.sub(_bare_time, s)


def dataset_key(dataset: str | None) -> str:
    """Scorer dataset string: ``multiwoz`` if it contains "multi" or starts with "mw"."""
    d = (dataset or "").lower()
    if "multi" in d or d.startswith("mw"):
        return "multiwoz"
    return d


def normalize_value(s: object, dataset: str = "") -> str:
    """Slot-value / turn-text normaliser (spec §1.1). ``None`` -> ``""``.

    ``dataset`` must already be a scorer key (see :func:`dataset_key`): only ``"multiwoz"``
    applies the alias table.
    """
    if s is None:
        return ""
    return _normalize_str(str(s), dataset)


@lru_cache(maxsize=200_000)
def _normalize_str(s: str, dataset: str) -> str:
    text = unicodedata.normalize("NFKC", s).lower().strip()
    if dataset == "multiwoz":
        for pattern, dst in _ALIAS_PATTERNS:
            text = pattern.sub(dst, text)
    text = normalize_times(text)
    text = PUNCT.sub(" ", text)
    return SPACES.sub(" ", text).strip()


@lru_cache(maxsize=50_000)
def _phrase_pattern(needle: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(needle) + r"(?!\w)")


def phrase_occurs(needle: str, haystack: str) -> bool:
    """True iff ``needle`` occurs in ``haystack`` with no word character on either side (§1.2)."""
    if not needle:
        return False
    if needle not in haystack:
        return False
    return _phrase_pattern(needle).search(haystack) is not None


def value_occurs_in_text(value: object, text: str, dataset: str = "") -> bool:
    """Phrase-bounded occurrence of a normalised value in normalised text."""
    return phrase_occurs(normalize_value(value, dataset), normalize_value(text, dataset))


def norm_text(s: object) -> str:
    """P3 value normaliser (§1.5): strip, lower-case, collapse whitespace. Nothing else."""
    if s is None:
        return ""
    return SPACES.sub(" ", str(s).strip().lower())


def humanize_slot(slot: str) -> str:
    """``origin_city`` -> ``origin city``; ``restaurant-food`` -> ``restaurant food``."""
    return _SLOT_SEP.sub(" ", slot).strip().lower()
