"""Reader on any OpenAI-compatible chat server (OpenAI, vLLM serve, llama.cpp server, ...).

Temperature 0, ``max_tokens`` per request, a thread pool for concurrency, and transport-level
retries (exponential backoff with jitter, bounded) on 429 / 5xx / timeouts / connection
errors. A request that still fails becomes a row with ``error="exception:..."``.
"""

from __future__ import annotations

import copy
import os
import random
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from compressbench.readers.base import (
    SERVER,
    ChatRequest,
    Generation,
    ModelSource,
    Reader,
    provenance,
)
from compressbench.readers.postprocess import from_exception, from_text

RETRY_STATUS = frozenset({408, 409, 429})


def is_retryable(exc: BaseException) -> bool:
    """429 / 408 / 409 / 5xx responses, timeouts and connection errors."""
    import openai

    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRY_STATUS or exc.status_code >= 500
    return False


class OpenAIReader(Reader):
    """Parameters: ``model`` (served model name), ``base_url`` / ``api_key`` (default
    ``$OPENAI_BASE_URL`` / ``$OPENAI_API_KEY``), ``model_id`` / ``revision`` (provenance),
    ``concurrency``, ``max_retries``, ``backoff_base`` / ``backoff_max`` (seconds),
    ``timeout`` (seconds per HTTP request), ``seed`` (sent when set), ``response_format``
    (sent as is when set, e.g. a JSON-schema structured-output request; part of
    :meth:`decoding`, so it is in the cache key).
    """

    name = "openai"
    libraries = ("openai",)
    structured_output = True  # sends the request's schema as a JSON-schema response format

    @classmethod
    def model_source(cls, model: str, revision: str | None = None) -> ModelSource:
        """The model is served: ``reader.model`` names it on the server."""
        return ModelSource(SERVER, model)

    @property
    def commit_every(self) -> int:  # type: ignore[override]
        """The requests in flight at once are committed together."""
        return self.concurrency

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        model_id: str | None = None,
        revision: str | None = None,
        concurrency: int = 4,
        max_retries: int = 6,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        timeout: float = 120.0,
        seed: int | None = None,
        response_format: Mapping[str, Any] | None = None,
    ) -> None:
        import openai

        if concurrency < 1 or max_retries < 0:
            raise ValueError("concurrency must be >= 1 and max_retries >= 0")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY")
        if api_key is None and base_url is not None:
            api_key = "not-needed"  # local servers take any key
        # Retries are ours (counted, bounded), so the client's own are off.
        self.client = openai.OpenAI(
            base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout
        )
        self.model = model
        self.model_id = model_id or model
        self.revision = revision or "unknown"
        self.base_url = str(self.client.base_url)
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.seed = seed
        self.response_format = None if response_format is None else dict(response_format)
        self._lock = threading.Lock()
        self._rng = random.Random()
        self.stats: dict[str, Any] = {"calls": 0, "retries": 0, "failures": 0}

    def decoding(self) -> dict[str, Any]:
        out: dict[str, Any] = {"temperature": 0.0, "top_p": 1.0}
        if self.seed is not None:
            out["seed"] = self.seed
        if self.response_format is not None:
            out["response_format"] = copy.deepcopy(self.response_format)
        return out

    def generate(self, requests: Sequence[ChatRequest]) -> list[Generation]:
        if len(requests) <= 1 or self.concurrency == 1:
            return [self._answer(r) for r in requests]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests))) as pool:
            return list(pool.map(self._answer, requests))

    # -- one request ------------------------------------------------------------------------
    def _answer(self, req: ChatRequest) -> Generation:
        start = time.perf_counter()
        retries = 0
        while True:
            self._count("calls")
            try:
                resp = self._create(req)
                break
            except Exception as exc:
                if retries < self.max_retries and is_retryable(exc):
                    retries += 1
                    self._count("retries")
                    time.sleep(self._delay(retries, exc))
                    continue
                self._count("failures")
                prov = self._provenance(req, retries)
                return from_exception(
                    req.id, exc, seconds=time.perf_counter() - start, provenance=prov
                )
        usage = resp.usage
        prov = self._provenance(req, retries)
        prov["served_model"] = resp.model
        if getattr(resp, "system_fingerprint", None):
            prov["system_fingerprint"] = resp.system_fingerprint
        return from_text(
            req.id,
            resp.choices[0].message.content or "",
            tokens_in=int(usage.prompt_tokens) if usage else 0,
            tokens_out=int(usage.completion_tokens) if usage else 0,
            seconds=time.perf_counter() - start,
            provenance=prov,
        )

    def _create(self, req: ChatRequest) -> Any:
        extra: dict[str, Any] = {} if self.seed is None else {"seed": self.seed}
        if self.response_format is not None:
            extra["response_format"] = self.response_format
        if req.response_schema is not None:  # a request's own schema wins
            extra["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": dict(req.response_schema)},
            }
        return self.client.chat.completions.create(
            model=self.model,
            messages=[
                {"role": "system", "content": req.system},
                {"role": "user", "content": req.user},
            ],
            temperature=0.0,
            top_p=1.0,
            max_tokens=req.max_new_tokens,
            **extra,
        )

    def _delay(self, attempt: int, exc: BaseException) -> float:
        """Exponential backoff with jitter in [50%, 100%], at least Retry-After, capped."""
        with self._lock:
            jitter = self._rng.uniform(0.5, 1.0)
        delay = self.backoff_base * 2 ** (attempt - 1) * jitter
        delay = max(delay, _retry_after(exc))
        return float(min(delay, self.backoff_max))

    def _count(self, what: str) -> None:
        with self._lock:
            self.stats[what] += 1

    def _provenance(self, req: ChatRequest, retries: int) -> dict[str, Any]:
        prov = provenance(self, base_url=self.base_url, retries=retries)
        prov["decoding"]["max_new_tokens"] = req.max_new_tokens
        return prov


def _retry_after(exc: BaseException) -> float:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else 0.0
    except ValueError:
        return 0.0
