"""The ``openai`` KEEP judge against a real local OpenAI-compatible server (llama_cpp.server
with SmolLM2-135M), through a real local proxy that records every request and can answer
malformed verdicts itself. SmolLM2 is no judge: these tests check the machinery (prompts and
schemas requested, verdicts parsed, cached, retried, recorded as errors), never the labels.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from compressbench.keepbench.cases import KeepCase, case_from_dict
from compressbench.keepbench.compressors.llm_prompt import SAMPLE_FILE
from compressbench.keepbench.judges.calls import CONDITION_SCHEMA, ORDINARY_SCHEMA, JudgeInput
from compressbench.keepbench.judges.registry import get_judge
from compressbench.keepbench.prompts.templates import load_prompts
from compressbench.readers.cache import AnswerCache
from support.verdict_proxy import chat_completion

pytest.importorskip("openai")
pytest.importorskip("jsonschema")

MAX_TOKENS = 40  # a verdict is under 20 tokens; a bound on a looping reply
LOCAL = {  # how a llama_cpp.server judge is configured (no reasoning, JSON mode + schema)
    "model": "smollm2",
    "reasoning_effort": None,
    "temperature": 0.0,
    "token_param": "max_tokens",
    "response_format": "json_object",
    "max_tokens": MAX_TOKENS,
    "concurrency": 1,  # llama_cpp.server answers one request at a time anyway
    "timeout": 1800.0,  # a slow shared CPU must not turn into transport retries
}
Reply = Callable[[int, str], str | None]  # (attempt of this user message, the message) -> reply


class ScriptedProxy:
    """Records each chat request; ``reply(attempt, user)`` gives the content to answer itself
    (attempt counts from 1 per user message), or None to forward to ``upstream``."""

    def __init__(self, upstream: str | None, reply: Reply) -> None:
        self.upstream = None
        if upstream is not None:
            host, port = upstream.removeprefix("http://").split("/")[0].split(":")
            self.upstream = (host, int(port))
        self.reply = reply
        self.bodies: list[dict[str, Any]] = []
        self.attempts: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def _decide(self, body: bytes) -> str | None:
        data = json.loads(body)
        user = data["messages"][-1]["content"]
        with self.lock:
            self.bodies.append(data)
            self.attempts[user] += 1
            return self.reply(self.attempts[user], user)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                content = proxy._decide(body)
                if content is not None or proxy.upstream is None:
                    model = json.loads(body).get("model", "")
                    self._send(200, chat_completion(content or "", model), "application/json")
                    return
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=600)
                conn.request("POST", self.path, body, {"Content-Type": "application/json"})
                resp = conn.getresponse()
                self._send(resp.status, resp.read(), resp.getheader("Content-Type", ""))
                conn.close()

            def _send(self, status: int, payload: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> ScriptedProxy:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def cases() -> dict[str, KeepCase]:
    rows = json.loads(SAMPLE_FILE.read_text(encoding="utf-8"))["cases"]
    out: dict[str, KeepCase] = {}
    for case in (case_from_dict(r) for r in rows if not r.get("demonstration")):
        out.setdefault(case.subset, case)
    return out


def malformed_for(case: KeepCase) -> Callable[[str], str]:
    """Perspective i's call gets ``MALFORMED[i % 4]`` (found as the message's target)."""

    def pick(user: str) -> str:
        target = user.split("Target perspective:\n", 1)[1]
        i = next(i for i, p in enumerate(case.propositions) if target.startswith(p.text))
        return MALFORMED[i % len(MALFORMED)]

    return pick


def kept(case: KeepCase, n: int) -> str:
    """A short compressed context: the first ``n`` propositions verbatim."""
    return " ".join(p.text for p in case.propositions[:n])


def assert_labelled(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        assert row["error"] is None and row["raw"] is None, row
        assert row["judgement"] in ("yes", "no") and row["preserved"] == (row["judgement"] == "yes")


@pytest.mark.slow
def test_verdicts_from_a_real_server_are_parsed_and_cached(
    llama_server: str,
    cases: dict[str, KeepCase],
    tmp_path: Path,
) -> None:
    inputs = [
        JudgeInput(cases["parallel"], kept(cases["parallel"], 2), {"compressor": "c"}),
        JudgeInput(cases["conditional"], kept(cases["conditional"], 3), {"compressor": "c"}),
    ]
    n_props = sum(len(i.case.propositions) for i in inputs)
    n_calls = len(cases["parallel"].propositions) + len(cases["conditional"].propositions) - 1
    prompts = load_prompts("judge")
    with (
        ScriptedProxy(llama_server, lambda attempt, user: None) as proxy,
        AnswerCache(tmp_path / "verdicts.sqlite") as cache,
    ):
        run = get_judge("openai", base_url=proxy.url, **LOCAL).judge(inputs, cache)
        assert len(proxy.bodies) == n_calls
        rerun = get_judge("openai", base_url=proxy.url, **LOCAL).judge(inputs, cache)
        assert len(proxy.bodies) == n_calls  # never judged again
    assert len(run.rows) == n_props and rerun.rows == run.rows
    assert_labelled(run.rows)
    assert run.stats["calls"] == n_calls and run.stats["model_calls"] == n_calls
    assert run.stats["errors"] == 0 and rerun.stats["model_calls"] == 0
    schemas = Counter(json.dumps(b["response_format"]["schema"]) for b in proxy.bodies)
    assert schemas == {json.dumps(ORDINARY_SCHEMA): n_calls - 1, json.dumps(CONDITION_SCHEMA): 1}
    for body in proxy.bodies:
        assert body["response_format"]["type"] == "json_object"
        assert body["temperature"] == 0.0 and body["max_tokens"] == MAX_TOKENS
        assert "reasoning_effort" not in body and "max_completion_tokens" not in body
        assert body["messages"][0] == {"role": "system", "content": prompts.text("system")}
    condition_rows = [r for r in run.rows if r["template"] == "condition"]
    assert sorted(r["field"] for r in condition_rows) == [
        "condition_judgement",
        "overall_judgement",
    ]
    assert run.info["judge_model"] == "smollm2" and run.info["prompt_version"] == "v1"
    assert run.info["judge_reasoning_effort"] is None and run.info["approximation"] is False
    assert {r["compressor"] for r in run.rows} == {"c"}


MALFORMED = [
    "The perspective is clearly preserved.",  # not JSON
    '{"judgment": "yes"}',  # the field misspelled
    '{"judgement": "maybe"}',  # not a label
    '{"judgement": "yes", "reason": "kept"}',  # a field the schema forbids
]


@pytest.mark.slow
def test_malformed_verdicts_are_asked_again(
    llama_server: str,
    cases: dict[str, KeepCase],
    tmp_path: Path,
) -> None:
    science = cases["science"]
    inputs = [JudgeInput(science, kept(science, 2))]

    bad = malformed_for(science)

    def first_bad(attempt: int, user: str) -> str | None:
        return bad(user) if attempt == 1 else None

    with (
        ScriptedProxy(llama_server, first_bad) as proxy,
        AnswerCache(tmp_path / "verdicts.sqlite") as cache,
    ):
        judge = get_judge("openai", base_url=proxy.url, retries=2, **LOCAL)
        run = judge.judge(inputs, cache)
        calls = len(science.propositions)
        assert len(proxy.bodies) == 2 * calls  # one malformed reply, then the model
        rerun = judge.judge(inputs, cache)
        assert len(proxy.bodies) == 2 * calls  # both attempts replayed from the cache
    assert_labelled(run.rows)
    assert [r["attempts"] for r in run.rows] == [2] * calls
    assert run.stats["retried"] == calls and run.stats["errors"] == 0
    assert rerun.rows == run.rows and rerun.stats["model_calls"] == 0


def test_verdicts_that_stay_malformed_are_recorded_as_errors(
    cases: dict[str, KeepCase], tmp_path: Path
) -> None:
    """Every attempt malformed (the proxy answers itself; no model behind it)."""
    policy = cases["policy"]
    inputs = [JudgeInput(policy, kept(policy, 4), {"compressor": "c"})]
    with (
        ScriptedProxy(None, lambda attempt, user: malformed_for(policy)(user)) as proxy,
        AnswerCache(tmp_path / "verdicts.sqlite") as cache,
    ):
        judge = get_judge("openai", base_url=proxy.url, retries=1, **LOCAL)
        run = judge.judge(inputs, cache)
        calls = len(policy.propositions)
        assert len(proxy.bodies) == 2 * calls  # retries=1: two attempts each
        rerun = judge.judge(inputs, cache)
        assert len(proxy.bodies) == 2 * calls
    expected_errors = ["not-json", "invalid:object:", "invalid:judgement:", "invalid:object:"]
    for i, row in enumerate(run.rows):
        assert row["judgement"] is None and row["preserved"] is None and row["attempts"] == 2
        assert row["raw"] == MALFORMED[i % len(MALFORMED)]
        assert row["error"].startswith(expected_errors[i % len(MALFORMED)]), row["error"]
    assert run.stats["errors"] == calls and rerun.rows == run.rows


def test_the_papers_judge_settings_reach_the_server(
    cases: dict[str, KeepCase], tmp_path: Path
) -> None:
    """Defaults = GPT-5.2 with reasoning effort high, strict JSON schema, API defaults."""
    parallel = cases["parallel"]
    with (
        ScriptedProxy(None, lambda attempt, user: '{"judgement": "no"}') as proxy,
        AnswerCache(tmp_path / "verdicts.sqlite") as cache,
    ):
        run = get_judge("openai", base_url=proxy.url).judge(
            [JudgeInput(parallel, kept(parallel, 1))], cache
        )
    body = proxy.bodies[0]
    assert body["model"] == "gpt-5.2" and body["reasoning_effort"] == "high"
    assert body["max_completion_tokens"] == 16384
    assert "temperature" not in body and "max_tokens" not in body
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "keep_judgement", "schema": ORDINARY_SCHEMA, "strict": True},
    }
    assert {r["judgement"] for r in run.rows} == {"no"}
    assert run.info["judge_reasoning_effort"] == "high" and run.info["judge_model"] == "gpt-5.2"
