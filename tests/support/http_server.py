"""A real HTTP server on a free loopback port answering fixed routes (a fake Hub, an
OpenAI-compatible ``/v1/models``), and a port nothing listens on."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# path -> (status, headers, body); HEAD answers the same without the body, any other path 404.
Route = tuple[int, dict[str, str], bytes]
Routes = Mapping[str, Route]


def json_route(
    payload: Any, status: int = 200, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json", **headers}, json.dumps(payload).encode()


def _handler(routes: Routes) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, body: bool) -> None:
            status, headers, payload = routes.get(self.path.split("?")[0], (404, {}, b"{}"))
            self.send_response(status)
            for key, value in {"Content-Length": str(len(payload)), **headers}.items():
                self.send_header(key, value)
            self.end_headers()
            if body:
                self.wfile.write(payload)

        def do_GET(self) -> None:
            self._answer(True)

        def do_HEAD(self) -> None:
            self._answer(False)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


def start_server(routes: Routes) -> tuple[ThreadingHTTPServer, str]:
    """The running server (call ``shutdown()`` then ``server_close()``) and its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(routes))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def free_port() -> int:
    """A loopback port nothing listens on now (bound, then released): a port to start a server
    on, or one whose connections are refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
