"""A real local HTTP server in front of an OpenAI-compatible server (or none).

:class:`ChatProxy` forwards every chat request to ``upstream`` unless :meth:`ChatProxy.intercept`
answers it itself (a status and a body): the failing-server and malformed-verdict proxies of the
reader and judge tests are its subclasses.
"""

from __future__ import annotations

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

JSON = "application/json"


def chat_completion(content: str, model: str) -> bytes:
    """A well-formed chat completion whose message is ``content``."""
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


class ChatProxy:
    """Serves on a free loopback port (``url`` ends in ``/v1``) while used as a context."""

    def __init__(self, upstream: str | None) -> None:
        self.upstream = None
        if upstream is not None:
            host, port = upstream.removeprefix("http://").split("/")[0].split(":")
            self.upstream = (host, int(port))
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def intercept(self, body: bytes) -> tuple[int, bytes] | None:
        """The reply to send instead of forwarding (status, JSON body), or None to forward."""
        return None

    def _forward(self, path: str, body: bytes) -> tuple[int, bytes, str]:
        if self.upstream is None:
            return 502, b'{"error": {"message": "no upstream"}}', JSON
        conn = http.client.HTTPConnection(*self.upstream, timeout=600)
        try:
            conn.request("POST", path, body, {"Content-Type": JSON})
            resp = conn.getresponse()
            return resp.status, resp.read(), resp.getheader("Content-Type", "")
        finally:
            conn.close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                own = proxy.intercept(body)
                status, payload, ctype = (*own, JSON) if own else proxy._forward(self.path, body)
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
