"""Reader post-processing (spec §6, §2.1): keep the last flat JSON object that parses."""

from __future__ import annotations

from typing import Any

from compressbench.readers.base import Generation
from compressbench.text.json_objects import extract_flat_json

NO_JSON = "no-json"


def last_flat_json(text: str) -> str | None:
    """The last flat ``{...}`` substring of ``text`` that ``json.loads`` accepts, else None."""
    found = extract_flat_json(text)
    return None if found.format_error else found.text


def exception_error(exc: BaseException) -> str:
    """The error string stored when generation raised: ``exception:<Type>:<msg>``."""
    return f"exception:{type(exc).__name__}:{exc}"


def from_text(
    request_id: str,
    raw: str,
    *,
    tokens_in: int = 0,
    tokens_out: int = 0,
    seconds: float = 0.0,
    provenance: dict[str, Any] | None = None,
) -> Generation:
    """Build a Generation from decoded text, extracting the JSON answer."""
    found = last_flat_json(raw)
    return Generation(
        id=request_id,
        raw=raw,
        json_text=found,
        error=None if found is not None else NO_JSON,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        seconds=seconds,
        provenance=dict(provenance or {}),
    )


def from_exception(
    request_id: str,
    exc: BaseException,
    *,
    seconds: float = 0.0,
    provenance: dict[str, Any] | None = None,
) -> Generation:
    """The row stored when generation failed: empty text and ``exception:...`` error."""
    return Generation(
        id=request_id,
        raw="",
        json_text=None,
        error=exception_error(exc),
        seconds=seconds,
        provenance=dict(provenance or {}),
    )
