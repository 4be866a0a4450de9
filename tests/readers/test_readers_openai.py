"""OpenAI-compatible reader against a real llama.cpp server, through a real failing proxy."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from compressbench.readers.base import ChatRequest
from compressbench.readers.registry import get_reader
from support.chat_proxy import ChatProxy
from support.http_server import free_port

pytest.importorskip("openai")

POISON = "ALWAYS-FAILS"


def requests_for_test() -> list[ChatRequest]:
    system = "Reply with a single JSON object and no other text."
    ask = '\n\nQuestion: {}? Reply as {{"value": <string>}}.'
    users = [
        "Context:\n[T0] USER: Book a table at 7 pm." + ask.format("What time"),
        "Context:\n[T0] USER: Fly to Boston." + ask.format("Which city"),
        f"{POISON}: this prompt is always refused by the proxy.",
        "Context:\n[T0] USER: Play jazz." + ask.format("Which genre"),
    ]
    return [ChatRequest(f"q{i}", system, u, 24) for i, u in enumerate(users)]


class FailingProxy(ChatProxy):
    """Forwards to ``upstream`` but answers 429 to the first attempt of every prompt
    (503 for every other prompt, to vary it) and 500 always for prompts holding POISON."""

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream)
        self.attempts: Counter[str] = Counter()

    def intercept(self, body: bytes) -> tuple[int, bytes] | None:
        user = json.loads(body)["messages"][-1]["content"]
        with self.lock:
            self.attempts[user] += 1
            n, rank = self.attempts[user], len(self.attempts)
        status = 500 if POISON in user else (429 if rank % 2 else 503) if n == 1 else None
        if status is None:
            return None
        return status, json.dumps({"error": {"message": f"proxy says {status}"}}).encode()


@pytest.mark.slow
def test_answers_from_a_real_server(llama_server: str) -> None:
    from compressbench.readers.smollm import find_gguf, gguf_sha256

    reader = get_reader(
        "openai",
        model="smollm2",
        base_url=llama_server,
        concurrency=2,
        revision=gguf_sha256(find_gguf()),
    )
    reqs = [r for r in requests_for_test() if POISON not in r.user]
    gens = reader.generate(reqs)
    assert [g.id for g in gens] == [r.id for r in reqs]
    for g in gens:
        assert g.error in (None, "no-json")
        assert g.raw.strip()
        assert 0 < g.tokens_out <= 24 and g.tokens_in > 0
        assert g.provenance["retries"] == 0
        assert g.provenance["decoding"] == {"temperature": 0.0, "top_p": 1.0, "max_new_tokens": 24}
    assert reader.stats == {"calls": len(reqs), "retries": 0, "failures": 0}
    assert reader.generate(reqs)[0].raw == gens[0].raw  # temperature 0 is repeatable


@pytest.mark.slow
def test_retries_through_a_failing_proxy(llama_server: str) -> None:
    reqs = requests_for_test()
    direct = get_reader("openai", model="smollm2", base_url=llama_server).generate(
        [r for r in reqs if POISON not in r.user]
    )
    with FailingProxy(llama_server) as proxy:
        reader = get_reader(
            "openai",
            model="smollm2",
            base_url=proxy.url,
            concurrency=3,
            max_retries=3,
            backoff_base=0.01,
            backoff_max=0.05,
        )
        gens = reader.generate(reqs)
    assert [g.id for g in gens] == [r.id for r in reqs]  # every row, in order
    poisoned = gens[2]
    assert poisoned.error is not None
    assert poisoned.error.startswith("exception:InternalServerError:")
    assert poisoned.raw == "" and poisoned.provenance["retries"] == 3
    ok = [g for g in gens if g is not poisoned]
    assert all(g.provenance["retries"] == 1 for g in ok)
    assert [g.raw for g in ok] == [g.raw for g in direct]
    assert reader.stats == {"calls": 3 * 2 + 4, "retries": 3 + 3, "failures": 1}
    assert sorted(proxy.attempts.values()) == [2, 2, 2, 4]


def test_connection_errors_are_retried_then_recorded() -> None:
    port = free_port()  # nothing listens here
    reader = get_reader(
        "openai",
        model="m",
        base_url=f"http://127.0.0.1:{port}/v1",
        max_retries=2,
        backoff_base=0.001,
        backoff_max=0.01,
        timeout=2.0,
    )
    gens = reader.generate([ChatRequest("a", "s", "u"), ChatRequest("b", "s", "v")])
    assert [g.id for g in gens] == ["a", "b"]
    assert all(g.error and g.error.startswith("exception:APIConnectionError") for g in gens)
    assert reader.stats == {"calls": 6, "retries": 4, "failures": 2}


def test_base_url_and_key_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    reader: Any = get_reader("openai", model="m")
    assert reader.base_url.startswith("http://127.0.0.1:9/v1")
    assert reader.client.api_key == "sk-test"
    assert reader.revision == "unknown" and reader.model_id == "m"
