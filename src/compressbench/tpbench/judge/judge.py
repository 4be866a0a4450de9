"""The semantic-equivalence judge: items in, one verdict row per item out, through any
OpenAI-compatible server and the answer cache.

Decoding follows the paper (temperature 0, 512 output tokens). The verdict schema is requested
with the server's structured-output option (``response_format`` style ``json_schema`` for
OpenAI / vLLM, ``json_object`` for llama-cpp-python's server, ``none`` for neither). Verdicts
are cached like answers (key: backend, judge model and revision, the prompt itself, the item,
the decoding including the schema) and never asked again; an unparseable verdict is asked
again up to ``retries`` times and then kept as a row with ``error`` set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compressbench.readers.base import ChatRequest, Reader
from compressbench.readers.cache import AnswerCache
from compressbench.readers.structured import response_format
from compressbench.readers.structured_run import generate_structured
from compressbench.tpbench.judge.prompt import (
    SCHEMA_NAME,
    VERDICT_FIELDS,
    VERDICT_SCHEMA,
    JudgeItem,
    judge_prompt,
    prompt_sha256,
    schema_sha256,
)
from compressbench.tpbench.judge.spec import PAPER_JUDGE_MODEL

MAX_TOKENS = 512  # the paper's judge setting (with temperature 0)
DEFAULT_RETRIES = 2


@dataclass
class Judge:
    """A reader asked for verdicts: ``style`` names how its ``response_format`` was built."""

    reader: Reader
    style: str
    retries: int = DEFAULT_RETRIES
    max_tokens: int = MAX_TOKENS

    def info(self) -> dict[str, Any]:
        """What identifies the judge in a record (and in MLflow)."""
        return {
            "judge_backend": self.reader.name,
            "judge_model": self.reader.model_id,
            "judge_revision": self.reader.revision,
            "judge_base_url": self.reader.base_url,
            "judge_prompt_sha256": prompt_sha256(),
            "judge_schema_sha256": schema_sha256(),
            "judge_response_format": self.style,
            "judge_max_tokens": self.max_tokens,
            "judge_retries": self.retries,
            "judge_temperature": self.reader.decoding().get("temperature"),
        }

    def request(self, item: JudgeItem) -> ChatRequest:
        return ChatRequest(item.id, judge_prompt(), item.message(), self.max_tokens)

    def judge(
        self, items: Sequence[JudgeItem], cache: AnswerCache, *, progress: bool = True
    ) -> JudgeRun:
        """One verdict row per item, in order (``error`` set where no valid verdict came)."""
        requests = [self.request(item) for item in items]
        run = generate_structured(
            self.reader,
            requests,
            cache,
            VERDICT_SCHEMA,
            retries=self.retries,
            progress=progress,
        )
        rows = []
        for result in run.results:
            verdict = result.value or {}
            row: dict[str, Any] = {"judge_id": result.id, "verdict_id": verdict.get("id")}
            row.update({k: verdict.get(k) for k in VERDICT_FIELDS if k != "id"})
            row.update(
                {
                    "error": result.error,
                    "attempts": result.attempts,
                    "raw": result.raw if result.error is not None else None,
                    "cache_key": result.cache_key,
                }
            )
            rows.append(row)
        return JudgeRun(rows, dict(run.stats), self.info())


@dataclass
class JudgeRun:
    """Verdict rows (``judge_id``; ``verdict_id``, the id the judge wrote back - one item per
    request, so a garbled echo is kept, not rejected; the verdict fields; ``error``;
    ``attempts``; ``raw`` when in error; ``cache_key``), call counts and the judge's identity."""

    rows: list[dict[str, Any]]
    stats: dict[str, int] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)


def build_judge(
    model: str = PAPER_JUDGE_MODEL,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    style: str = "json_schema",
    retries: int = DEFAULT_RETRIES,
    max_tokens: int = MAX_TOKENS,
    concurrency: int = 4,
    revision: str | None = None,
) -> Judge:
    """A judge on an OpenAI-compatible server (``base_url`` default ``$OPENAI_BASE_URL``)."""
    from compressbench.readers.registry import get_reader

    fmt = response_format(style, SCHEMA_NAME, VERDICT_SCHEMA)
    reader = get_reader(
        "openai",
        model=model,
        base_url=base_url,
        api_key=api_key,
        concurrency=concurrency,
        revision=revision,
        response_format=fmt,
    )
    return Judge(reader, style, retries=retries, max_tokens=max_tokens)
