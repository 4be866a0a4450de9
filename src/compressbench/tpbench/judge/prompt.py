"""The TPBench P1 semantic judge's contract: the released prompt (data, verbatim), the verdict
schema, and the input message.

The prompt is the release's ``p1_judge_prompt.txt`` byte for byte (2,138 characters), sent as
the system message; its sha256 identifies the judge in every record. The user message is one
JSON object of quoted task data (the prompt says so): ``id``, ``question``, ``context`` (only
when the item has one), ``reference``, ``candidate``. The verdict is a flat JSON object:
``id``, ``equivalent`` (true / false / null), ``core_goal``, ``reference_type``, ``reason``.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.jsonl import canonical_json

PROMPT_FILE = Path(__file__).with_name("p1_judge_prompt.txt")
SCHEMA_NAME = "tpbench_semantic_verdict"
CORE_GOALS = ("correct", "partial", "wrong", "uncertain")
REFERENCE_TYPES = ("explicit_goal", "implicit_need", "not_goal", "uncertain")
VERDICT_FIELDS = ("id", "equivalent", "core_goal", "reference_type", "reason")

# Plain JSON Schema that OpenAI's strict structured outputs accept (every field required, no
# extra fields) and llama.cpp turns into a grammar. Part of the cache key: change it and every
# verdict is asked again.
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "equivalent": {"type": ["boolean", "null"]},
        "core_goal": {"type": "string", "enum": list(CORE_GOALS)},
        "reference_type": {"type": "string", "enum": list(REFERENCE_TYPES)},
        "reason": {"type": "string"},
    },
    "required": list(VERDICT_FIELDS),
    "additionalProperties": False,
}


@functools.lru_cache(maxsize=1)
def _prompt_bytes() -> bytes:
    return PROMPT_FILE.read_bytes()


def judge_prompt() -> str:
    """The released judge prompt, verbatim (the system message)."""
    return _prompt_bytes().decode("utf-8")


def prompt_sha256() -> str:
    return hashlib.sha256(_prompt_bytes()).hexdigest()


def schema_sha256() -> str:
    return hashlib.sha256(canonical_json(VERDICT_SCHEMA).encode()).hexdigest()


@dataclass(frozen=True)
class JudgeItem:
    """One answer to judge: the question, the reference answer, the candidate answer and,
    optionally, the context (a passage for factual QA; P1 items have none)."""

    id: str
    question: str
    reference: str
    candidate: str
    context: str | None = None

    def message(self) -> str:
        """The user message: the item as one JSON object (fixed key order, stable bytes)."""
        data: dict[str, Any] = {"id": self.id, "question": self.question}
        if self.context is not None:
            data["context"] = self.context
        data["reference"] = self.reference
        data["candidate"] = self.candidate
        return json.dumps(data, ensure_ascii=False)
