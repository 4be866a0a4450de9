"""Getting ``value`` / ``support`` / ``abstain`` out of reader text (spec §2.1, §2.2-§2.5).

TPBench has several published parsers and they differ on purpose; each one here reproduces
one of them. None of them ever raises, whatever the input (non-strings are read as text,
``None`` as ``""``).

* :func:`extract_flat_json` (from :mod:`compressbench.text.json_objects`) - reader-worker
  post-processing and first-user-plus-recent scoring:
  the last *flat* ``{...}`` (no inner braces) that parses.
* :func:`parse_p1` / :func:`parse_p3` - whole text, else last ``{`` .. last ``}``.
* :func:`parse_p2` - directly last ``{`` .. last ``}``; must be a dict.
* :func:`parse_lme` - whole text, else last ``{`` .. last ``}``; must be a dict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from compressbench.text.json_objects import (
    as_text,
    extract_flat_json,
    last_braces,
    whole_then_braces,
)

#: Value strings that count as abstaining in P2 and LME-KU (after strip + lower), §2.3 / §2.5.
ABSTAIN_STRINGS: frozenset[str] = frozenset({"", "unknown", "n/a", "none"})


@dataclass(frozen=True)
class ParsedAnswer:
    """What a parser got out of one reader text.

    ``value`` is what the probe's scorer compares (its type follows the probe's rule),
    ``format_error`` is true when the parser found no usable JSON object (§2.6).
    """

    value: Any
    support: Any
    abstain: bool
    format_error: bool
    obj: dict[str, Any] | None = None


def p1_object(text: object) -> dict[str, Any] | None:
    """The P1/P3 parser (§2.1): whole stripped text, else last ``{`` .. last ``}``.

    Non-dict results are ``None`` (scorer_paper_p3's guard; scorer_p1 would crash on them).
    """
    ok, obj = whole_then_braces(as_text(text))
    return obj if ok and isinstance(obj, dict) else None


def _p1_p3_answer(text: object) -> tuple[dict[str, Any] | None, str, bool]:
    parsed = p1_object(text)
    abstain = parsed is None or parsed.get("abstain") is True
    pred = "" if abstain or parsed is None else str(parsed.get("value") or "")
    return parsed, pred, abstain


def parse_p3(text: object) -> ParsedAnswer:
    """P3 front end (§2.4): ``abstain`` iff no object or ``"abstain"`` is JSON ``true``;
    ``value`` is ``""`` when abstaining, else ``str(value or "")``."""
    parsed, pred, abstain = _p1_p3_answer(text)
    support = parsed.get("support") if parsed is not None else None
    return ParsedAnswer(pred, support, abstain, parsed is None, parsed)


def parse_p1(text: object) -> ParsedAnswer:
    """P1 front end (§2.2): as :func:`parse_p3`, and an empty prediction also abstains."""
    answer = parse_p3(text)
    return ParsedAnswer(
        answer.value,
        answer.support,
        answer.abstain or answer.value == "",
        answer.format_error,
        answer.obj,
    )


def _value_abstains(value: object) -> bool:
    return isinstance(value, str) and value.strip().lower() in ABSTAIN_STRINGS


def parse_p2(text: object, *, json_bool_abstain: bool = False) -> ParsedAnswer:
    """The P2 parser (§2.1, §2.3): last ``{`` .. last ``}`` only; non-dict -> ``{}``.

    ``value`` is the raw JSON value (only strings can score); ``abstain`` is ``bool()`` of the
    ``abstain`` field (so the string ``"false"`` abstains: the published quirk) or an
    abstaining value string. ``json_bool_abstain=True`` is the corrected variant: only the
    JSON literal ``true`` abstains (as in the P1/P3 parser).
    """
    ok, obj = last_braces(as_text(text))
    found = ok and isinstance(obj, dict)
    d: dict[str, Any] = obj if found else {}
    value = d.get("value")
    flag = d.get("abstain", False)
    abstain = (flag is True if json_bool_abstain else bool(flag)) or _value_abstains(value)
    return ParsedAnswer(value, d.get("support"), abstain, not found, d if found else None)


def lme_prediction(value: object) -> object:
    """LME-KU prediction (§2.5): booleans -> ``""``, numbers -> ``str()``, else unchanged."""
    if isinstance(value, bool):
        return ""
    if isinstance(value, int | float):
        return str(value)
    return value


def lme_abstains(prediction: object, flag: object = False) -> bool:
    """LME-KU abstention (§2.5): the flag, a missing prediction or an abstaining string."""
    return bool(flag) or prediction is None or _value_abstains(prediction)


def parse_lme(text: object) -> ParsedAnswer:
    """The LME-KU parser (§2.1, §2.5): whole text, else last ``{`` .. last ``}``; non-dict ->
    ``{}``."""
    ok, obj = whole_then_braces(as_text(text))
    found = ok and isinstance(obj, dict)
    d: dict[str, Any] = obj if found else {}
    pred = lme_prediction(d.get("value"))
    abstain = lme_abstains(pred, d.get("abstain", False))
    return ParsedAnswer(pred, d.get("support"), abstain, not found, d if found else None)


def parse_first_user_recent(text: object) -> ParsedAnswer:
    """First-user-plus-recent scoring front end (§2.1): last flat ``{...}`` that parses to a
    dict, ``format_error`` iff none; the object is re-serialised and read by the P2 parser."""
    flat = extract_flat_json(text)
    if flat.obj is None:
        return ParsedAnswer(None, None, False, True, None)
    answer = parse_p2(json.dumps(flat.obj))
    return ParsedAnswer(answer.value, answer.support, answer.abstain, False, flat.obj)
