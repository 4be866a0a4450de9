"""Schema vocabulary: the values a service schema lists for its categorical slots.

The only input besides the dialogue text the turning-point compressor may read: a schema file
in the SGD / MultiWOZ 2.2 layout (a JSON list of services, each with ``slots`` carrying
``possible_values`` and ``is_categorical``; ``.json`` or ``.json.gz``). Every listed value of a
categorical slot (three characters or more, not a number, not yes/no/true/false/dontcare)
becomes a term; a term found in a turn is a mention of kind ``schema:<slot>``, so that a later
value of the same slot supersedes an earlier one ("cheap" -> "expensive"), which lower-case
categorical values ("west", "guesthouse") need: the name pattern only sees capitals.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
from dataclasses import dataclass
from pathlib import Path

from compressbench.errors import InputError

_GENERIC = frozenset({"yes", "no", "true", "false", "dontcare", "none", "free"})
KIND_PREFIX = "schema:"  # a schema term's mention kind: this prefix, then its slot


@dataclass(frozen=True)
class Vocabulary:
    """Terms (lower-case) -> the slot that lists them, and one pattern finding them all."""

    slots: tuple[tuple[str, str], ...]
    pattern: re.Pattern[str]

    def kind(self, term: str) -> str:
        return f"{KIND_PREFIX}{dict(self.slots)[term.lower()]}"


def vocabulary_from(services: object, source: str = "schema") -> Vocabulary:
    """The :class:`Vocabulary` of parsed schema ``services``."""
    if not isinstance(services, list):
        raise InputError("expected a JSON list of services", file=source)
    slots: dict[str, str] = {}
    for i, service in enumerate(services):
        try:
            for slot in service["slots"]:
                if not slot.get("is_categorical"):
                    continue
                for value in slot.get("possible_values", []):
                    term = usable_term(value)
                    if term is not None:
                        slots.setdefault(term, str(slot["name"]))
        except (KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"malformed service ({exc})", file=source, record=f"[{i}]") from None
    return vocabulary_of(slots)


def usable_term(value: object) -> str | None:
    """``value`` lower-cased if it can be a term (three characters or more, not a number, not
    yes/no/true/false/dontcare), else None."""
    term = str(value).strip().lower()
    return term if len(term) >= 3 and not term.isdigit() and term not in _GENERIC else None


def vocabulary_of(slots: dict[str, str]) -> Vocabulary:
    """The :class:`Vocabulary` of ``term -> slot`` pairs (terms lower-case)."""
    terms = sorted(slots, key=lambda t: (-len(t), t))  # longest first
    body = "|".join(re.escape(t) for t in terms) or r"(?!x)x"
    return Vocabulary(tuple(sorted(slots.items())), re.compile(rf"\b(?:{body})\b", re.IGNORECASE))


def merged(*vocabs: Vocabulary | None) -> Vocabulary | None:
    """One vocabulary holding every term of ``vocabs`` (the first slot named for a term wins);
    None when none is given."""
    given = [v for v in vocabs if v is not None]
    if len(given) <= 1:
        return given[0] if given else None
    slots: dict[str, str] = {}
    for v in given:
        for term, slot in v.slots:
            slots.setdefault(term, slot)
    return vocabulary_of(slots)


@functools.lru_cache(maxsize=4)
def load_vocabulary(paths: str) -> Vocabulary:
    """The vocabulary of the schema files at ``paths`` (comma-separated; ``.json`` or
    ``.json.gz``; e.g. SGD's test and dev schemas)."""
    services: list[object] = []
    for path in (p.strip() for p in paths.split(",") if p.strip()):
        file = Path(path)
        try:
            opener = gzip.open if file.suffix == ".gz" else open
            with opener(file, "rt", encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError) as exc:
            raise InputError(f"unreadable schema ({exc})", file=str(file)) from None
        if not isinstance(data, list):
            raise InputError("expected a JSON list of services", file=str(file))
        services += data
    return vocabulary_from(services, paths)
