"""The one reader protocol: chat requests in, one generation per request out.

A reader turns :class:`ChatRequest` rows into :class:`Generation` rows, in input order, one
for one. It never drops a row (a failure becomes a row with ``error`` set), never caches and
never retries generically: caching lives in :mod:`compressbench.readers.cache`. Transport-level
retries of a remote API (HTTP 429/5xx) belong to that backend.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from compressbench.jsonl import canonical_json


@dataclass(frozen=True)
class ChatRequest:
    """One question for the reader.

    ``id`` is the stable probe id carried from the probes stage; ``max_new_tokens`` is the
    output budget (96 for P1/P2, 128 for P3 in the reference runs). ``response_schema``: a
    JSON Schema the answer must follow (structured output; None: free decoding, as published).
    """

    id: str
    system: str
    user: str
    max_new_tokens: int = 96
    response_schema: Mapping[str, Any] | None = None


@dataclass
class Generation:
    """What a reader produced for one request.

    ``raw`` is the decoded new text; ``json_text`` the last flat JSON object in it that parses
    (None if none); ``error`` is None, ``"no-json"`` or ``"exception:<Type>:<msg>"``.
    ``provenance`` names backend, model id, revision and decoding parameters. ``record`` is
    what a method hook (a KV press) reported for this generation, JSON-ready (see
    :func:`json_record`); None when no hook ran.
    """

    id: str
    raw: str
    json_text: str | None
    error: str | None
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    provenance: dict[str, Any] = field(default_factory=dict)
    record: dict[str, Any] | None = None

    @property
    def output_text(self) -> str:
        """The stored reader output (§6): the JSON object if found, else the stripped raw text."""
        if self.json_text is not None:
            return self.json_text
        return self.raw.strip()

    @property
    def is_exception(self) -> bool:
        """True when generation itself failed (transient; never cached)."""
        return self.error is not None and self.error.startswith("exception:")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> Generation:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in row.items() if k in names})


def json_record(record: Any) -> dict[str, Any] | None:
    """A hook's record (an object with ``to_dict()`` or a mapping) as plain JSON data with
    sorted keys, so a fresh record and one read back from the cache are equal byte for byte."""
    if record is None:
        return None
    raw = record.to_dict() if hasattr(record, "to_dict") else dict(record)
    out: dict[str, Any] = json.loads(canonical_json(raw))
    return out


@runtime_checkable
class Reader(Protocol):
    """A reader LLM behind one backend (``hf``, ``openai``, ``vllm``)."""

    name: str  # backend name as registered
    model_id: str
    revision: str

    def decoding(self) -> dict[str, Any]:
        """Every parameter that can change the output (part of the cache key)."""
        ...

    def generate(self, requests: Sequence[ChatRequest]) -> list[Generation]:
        """One generation per request, same order; per-row failures go in ``error``."""
        ...


def provenance(reader: Reader, **extra: Any) -> dict[str, Any]:
    """The provenance dict every generation of ``reader`` carries."""
    out: dict[str, Any] = {
        "backend": reader.name,
        "model_id": reader.model_id,
        "revision": reader.revision,
        "decoding": reader.decoding(),
    }
    out.update(extra)
    return out


class ReaderUnavailableError(RuntimeError):
    """A backend cannot be built here (missing package, no GPU, ...)."""
