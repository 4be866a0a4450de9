"""A real local HTTP server that speaks the OpenAI chat API in front of a real server (or none).

It records every chat request it receives and, for the attempts ``bad(n)`` selects (``n`` = how
many times this exact user message has been asked, from 1), answers itself with a well-formed
chat completion whose content is not JSON, instead of forwarding to ``upstream``.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

NOT_JSON_REPLY = "I think the candidate is equivalent to the reference."

FIRST_ATTEMPT: Callable[[int], bool] = lambda n: n == 1  # noqa: E731
ALWAYS: Callable[[int], bool] = lambda n: True  # noqa: E731
NEVER: Callable[[int], bool] = lambda n: False  # noqa: E731


def chat_completion(content: str, model: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-proxy",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()


class VerdictProxy:
    def __init__(self, upstream: str | None, bad: Callable[[int], bool] = NEVER) -> None:
        self.upstream = None
        if upstream is not None:
            host, port = upstream.removeprefix("http://").split("/")[0].split(":")
            self.upstream = (host, int(port))
        self.bad = bad
        self.bodies: list[dict[str, Any]] = []
        self.attempts: Counter[str] = Counter()
        self.forwarded = 0
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _decide(self, body: bytes) -> bool:
        """Record the request; True when this attempt gets the non-JSON reply."""
        data = json.loads(body)
        user = data["messages"][-1]["content"]
        with self.lock:
            self.bodies.append(data)
            self.attempts[user] += 1
            bad = self.bad(self.attempts[user])
            if not bad:
                self.forwarded += 1
        return bad

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if proxy._decide(body):
                    model = json.loads(body).get("model", "")
                    self._reply(200, chat_completion(NOT_JSON_REPLY, model), "application/json")
                    return
                if proxy.upstream is None:
                    self._reply(502, b'{"error": {"message": "no upstream"}}', "application/json")
                    return
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=600)
                conn.request("POST", self.path, body, {"Content-Type": "application/json"})
                resp = conn.getresponse()
                self._reply(resp.status, resp.read(), resp.getheader("Content-Type", ""))
                conn.close()

            def _reply(self, status: int, payload: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> VerdictProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
