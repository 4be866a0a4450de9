"""A real local HTTP server that speaks the OpenAI chat API in front of a real server (or none).

It records every chat request it receives and, for the attempts ``bad(n)`` selects (``n`` = how
many times this exact user message has been asked, from 1), answers itself with a well-formed
chat completion whose content is not JSON, instead of forwarding to ``upstream``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from support.chat_proxy import ChatProxy, chat_completion

__all__ = ["ALWAYS", "FIRST_ATTEMPT", "NEVER", "NOT_JSON_REPLY", "VerdictProxy", "chat_completion"]

NOT_JSON_REPLY = "I think the candidate is equivalent to the reference."

FIRST_ATTEMPT: Callable[[int], bool] = lambda n: n == 1  # noqa: E731
ALWAYS: Callable[[int], bool] = lambda n: True  # noqa: E731
NEVER: Callable[[int], bool] = lambda n: False  # noqa: E731


class VerdictProxy(ChatProxy):
    def __init__(self, upstream: str | None, bad: Callable[[int], bool] = NEVER) -> None:
        super().__init__(upstream)
        self.bad = bad
        self.bodies: list[dict[str, Any]] = []
        self.attempts: Counter[str] = Counter()
        self.forwarded = 0

    def intercept(self, body: bytes) -> tuple[int, bytes] | None:
        """Record the request; the non-JSON reply for the attempts ``bad`` selects."""
        data = json.loads(body)
        user = data["messages"][-1]["content"]
        with self.lock:
            self.bodies.append(data)
            self.attempts[user] += 1
            bad = self.bad(self.attempts[user])
            if not bad:
                self.forwarded += 1
        return (200, chat_completion(NOT_JSON_REPLY, data.get("model", ""))) if bad else None
