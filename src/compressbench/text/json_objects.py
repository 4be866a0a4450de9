"""Finding JSON objects in model text without ever raising (shared by readers and scorers).

* :func:`extract_flat_json` - the last *flat* ``{...}`` (no inner braces) that parses.
* :func:`whole_then_braces` - the whole stripped text, else last ``{`` .. last ``}``.
* :func:`last_braces` - last ``{`` .. last ``}``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_FLAT_OBJECT = re.compile(r"\{[^{}]*\}")


@dataclass(frozen=True)
class FlatJSON:
    """Result of :func:`extract_flat_json`: the object, the text to store, ``no-json`` flag."""

    obj: dict[str, Any] | None
    text: str
    format_error: bool


def as_text(text: object) -> str:
    if text is None:
        return ""
    return text if isinstance(text, str) else str(text)


def loads(text: str) -> tuple[bool, Any]:
    """``json.loads`` that reports failure instead of raising."""
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def last_braces(text: str) -> tuple[bool, Any]:
    """Parse the substring from the last ``{`` to the last ``}`` (which must come after it)."""
    start, end = text.rfind("{"), text.rfind("}")
    if start == -1 or end < start:
        return False, None
    return loads(text[start : end + 1])


def whole_then_braces(text: str) -> tuple[bool, Any]:
    stripped = text.strip()
    ok, obj = loads(stripped)
    return (ok, obj) if ok else last_braces(stripped)


def extract_flat_json(text: object) -> FlatJSON:
    """Reader-worker post-processing (§2.1, §6): try every flat ``{...}`` from last to first,
    keep the first that parses; else keep the stripped raw text and flag ``no-json``."""
    raw = as_text(text)
    for match in reversed(list(_FLAT_OBJECT.finditer(raw))):
        ok, obj = loads(match.group(0))
        if ok and isinstance(obj, dict):
            return FlatJSON(obj=obj, text=match.group(0), format_error=False)
    return FlatJSON(obj=None, text=raw.strip(), format_error=True)
