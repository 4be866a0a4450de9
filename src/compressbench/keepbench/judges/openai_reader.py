"""The OpenAI-compatible reader with what a reasoning judge needs (KEEP-Bench D.1).

The paper's judge is GPT-5.2 with reasoning effort ``high``, one sample, API defaults for
everything else. Reasoning models take ``reasoning_effort`` and ``max_completion_tokens`` and
refuse a non-default ``temperature``, which the TPBench reader always sends; this subclass of
:class:`~compressbench.readers.openai_api.OpenAIReader` (same retries, concurrency and
provenance) sends ``reasoning_effort`` when set, the token cap under the name the server takes
(``token_param``) and ``temperature`` only when set. All three are part of :meth:`decoding`,
hence of the cache key.
"""

from __future__ import annotations

from typing import Any

from compressbench.readers.base import ChatRequest
from compressbench.readers.openai_api import OpenAIReader

TOKEN_PARAMS = ("max_tokens", "max_completion_tokens")
REASONING_EFFORTS = ("minimal", "low", "medium", "high", "xhigh", "none")


class JudgeOpenAIReader(OpenAIReader):
    """``reasoning_effort`` (None: not sent), ``temperature`` (None: not sent; default 0.0),
    ``token_param`` (``max_tokens`` or ``max_completion_tokens``); the rest as OpenAIReader."""

    def __init__(
        self,
        model: str,
        *,
        reasoning_effort: str | None = None,
        temperature: float | None = 0.0,
        token_param: str = "max_tokens",
        **kwargs: Any,
    ) -> None:
        if token_param not in TOKEN_PARAMS:
            raise ValueError(f"token_param must be one of {', '.join(TOKEN_PARAMS)}")
        if reasoning_effort is not None and reasoning_effort not in REASONING_EFFORTS:
            allowed = ", ".join(REASONING_EFFORTS)
            raise ValueError(f"reasoning_effort must be one of {allowed}; got {reasoning_effort!r}")
        super().__init__(model, **kwargs)
        self.reasoning_effort = reasoning_effort
        self.temperature = temperature
        self.token_param = token_param

    def decoding(self) -> dict[str, Any]:
        out = super().decoding()
        out.pop("top_p", None)
        out["temperature"] = self.temperature
        out["reasoning_effort"] = self.reasoning_effort
        out["token_param"] = self.token_param
        return out

    def _create(self, req: ChatRequest) -> Any:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": req.system},
                {"role": "user", "content": req.user},
            ],
            self.token_param: req.max_new_tokens,
        }
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.reasoning_effort is not None:
            kwargs["reasoning_effort"] = self.reasoning_effort
        if self.seed is not None:
            kwargs["seed"] = self.seed
        if self.response_format is not None:
            kwargs["response_format"] = self.response_format
        return self.client.chat.completions.create(**kwargs)
