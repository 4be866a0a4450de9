#!/usr/bin/env python3
"""Check that the MLflow UI lists the runs of a tracking store, in a real headless browser.

Starts ``mlflow server`` on 127.0.0.1 (a free port) over the given backend store, waits until it
answers, then drives headless Chromium through the Chrome DevTools Protocol (a small stdlib
websocket client, no extra packages): it opens the experiment page, expands nested runs, reads
which run names the page shows, prints what it saw and saves a screenshot. Exits non-zero when
an expected run is not listed.

    python scripts/check_mlflow_ui.py --backend-store-uri sqlite:///$PWD/mlflow.db \\
        --screenshot mlflow-ui.png
    python scripts/check_mlflow_ui.py --demo 12 --screenshot /tmp/ui.png   # temp store

Chromium: Debian/Ubuntu ``apt-get install -y chromium`` (or pass ``--chromium PATH`` to any
Chrome/Chromium binary). By default the expected runs are every pipeline (parent) run of the
experiment, and the cells of the newest one (up to ``--max-expected``).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL_HINT = (
    "headless Chromium is needed and was not found.\n"
    "  Debian/Ubuntu: sudo apt-get install -y chromium   (binary: /usr/bin/chromium)\n"
    "  or pass --chromium /path/to/chrome"
)


# ---------------------------------------------------------------------------- small helpers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, timeout_s: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with code {proc.returncode} before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except Exception as exc:
            last = exc
        time.sleep(0.3)
    raise TimeoutError(f"{url} did not answer within {timeout_s:.0f} s ({last})")


def find_chromium(explicit: str | None) -> str:
    if explicit:
        if not Path(explicit).exists() and shutil.which(explicit) is None:
            sys.exit(f"check_mlflow_ui: --chromium {explicit} does not exist\n{INSTALL_HINT}")
        return shutil.which(explicit) or explicit
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    sys.exit(f"check_mlflow_ui: {INSTALL_HINT}")


# ---------------------------------------------------------------------------- CDP over websocket


class WebSocket:
    """Just enough of RFC 6455 for the DevTools protocol: text frames, client masking."""

    def __init__(self, url: str, timeout_s: float = 30.0) -> None:
        assert url.startswith("ws://"), url
        hostport, _, path = url[len("ws://") :].partition("/")
        host, _, port = hostport.partition(":")
        self.sock = socket.create_connection((host, int(port or 80)), timeout=timeout_s)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            head += chunk
        status_line = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status_line:
            raise ConnectionError(
                f"websocket handshake refused: {status_line.decode(errors='replace')}"
            )
        self.buf = head.split(b"\r\n\r\n", 1)[1]

    def _recv_exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buf)))
            if not chunk:
                raise ConnectionError("websocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send_text(self, text: str) -> None:
        payload = text.encode()
        header = bytearray([0x81])
        n = len(payload)
        if n < 126:
            header.append(0x80 | n)
        elif n < 1 << 16:
            header.append(0x80 | 126)
            header += struct.pack(">H", n)
        else:
            header.append(0x80 | 127)
            header += struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(bytes(header) + mask + masked)

    def recv_text(self) -> str:
        parts: list[bytes] = []
        while True:
            b0, b1 = self._recv_exact(2)
            opcode, fin = b0 & 0x0F, b0 & 0x80
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._recv_exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._recv_exact(8))[0]
            mask = self._recv_exact(4) if b1 & 0x80 else None
            data = self._recv_exact(n)
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            if opcode == 0x8:
                raise ConnectionError("websocket closed by peer")
            if opcode == 0x9:  # ping -> pong
                self.sock.sendall(bytes([0x8A, 0x80 | len(data)]) + b"\0\0\0\0" + data)
                continue
            if opcode in (0x1, 0x2, 0x0):
                parts.append(data)
                if fin:
                    return b"".join(parts).decode()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class DevTools:
    """Minimal CDP session on one page target."""

    def __init__(self, ws_url: str) -> None:
        self.ws = WebSocket(ws_url)
        self.next_id = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        my_id = self.next_id
        self.ws.send_text(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv_text())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"CDP {method} failed: {msg['error']}")
                return dict(msg.get("result", {}))

    def evaluate(self, expression: str) -> Any:
        res = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in res:
            raise RuntimeError(f"page script failed: {res['exceptionDetails']}")
        return res.get("result", {}).get("value")

    def close(self) -> None:
        self.ws.close()


@contextlib.contextmanager
def chromium_page(chromium: str, width: int, height: int) -> Iterator[DevTools]:
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="cb-chromium-") as profile:
        cmd = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            f"--remote-debugging-port={port}",
            "--remote-debugging-address=127.0.0.1",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_http(f"http://127.0.0.1:{port}/json/version", 30, proc)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                targets = json.load(r)
            pages = [t for t in targets if t.get("type") == "page"]
            if not pages:
                raise RuntimeError("Chromium opened no page target")
            tools = DevTools(pages[0]["webSocketDebuggerUrl"])
            try:
                tools.call(
                    "Emulation.setDeviceMetricsOverride",
                    width=width,
                    height=height,
                    deviceScaleFactor=1,
                    mobile=False,
                )
                yield tools
            finally:
                tools.close()
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# ---------------------------------------------------------------------------- the check

# Clicks each not-yet-clicked "show child runs" toggle in the runs table once; returns how many.
# MLflow 3 renders it as an icon button in the run-name cell (no aria label); older UIs used
# aria-labelled buttons or ag-grid group toggles.
EXPAND_JS = r"""
(() => {
  let n = 0;
  const sel = [
    'button[data-component-id*="runnamecellrenderer" i]',
    'button[aria-label*="expand" i]',
    '.ag-group-contracted',
  ].join(', ');
  for (const el of document.querySelectorAll(sel)) {
    if (el.dataset.cbClicked || el.getAttribute('aria-expanded') === 'true') continue;
    el.dataset.cbClicked = '1';
    el.click();
    n++;
  }
  return n;
})()
"""


# Closes side panels (MLflow 3's assistant) so the screenshot shows the table; returns count.
CLOSE_PANELS_JS = r"""
(() => {
  let n = 0;
  for (const b of document.querySelectorAll('button[aria-label]')) {
    if (/^close/i.test(b.getAttribute('aria-label')) && !b.closest('[role="dialog"]')) {
      b.click(); n++;
    }
  }
  return n;
})()
"""


def page_text(tools: DevTools) -> str:
    return str(tools.evaluate("document.body ? document.body.innerText : ''") or "")


def expected_runs(uri: str, experiment: str, limit: int) -> tuple[str, int, list[str], list[str]]:
    """(experiment id, run count, parent names, cell names of the newest parent) from the store."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        sys.exit(f"check_mlflow_ui: no experiment {experiment!r} in {uri}")
    runs = client.search_runs(
        [exp.experiment_id], max_results=1000, order_by=["attributes.start_time DESC"]
    )
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    newest = parents[0].info.run_id if parents else None
    cells = [r.info.run_name for r in runs if r.data.tags.get("mlflow.parentRunId") == newest]
    names = [r.info.run_name for r in parents][:limit]
    return str(exp.experiment_id), len(runs), names, cells[:limit]


def populate_demo(uri: str, experiment: str, n_cells: int, workdir: Path) -> None:
    """Log one pipeline run with ``n_cells`` cells into ``uri`` using compressbench.tracking."""
    from compressbench.tracking import log_cell, start_pipeline_run

    methods = ("recency", "earliest", "random", "mmr")
    t0 = time.perf_counter()
    with start_pipeline_run(
        "demo-pipeline",
        {"seed": 0, "n_cells": n_cells},
        tracking_uri=uri,
        experiment=experiment,
        stage="score",
    ) as parent:
        for i in range(n_cells):
            cell = {
                "dataset": "sgd",
                "probe": f"P{i % 3 + 1}",
                "seed": 0,
                "ratio": (0.25, 0.5)[i // 3 % 2],
                "method": methods[i // 6 % len(methods)],
                "reader": "smollm2",
            }
            if i >= 6 * len(methods):
                cell["seed"] = i
            scored = workdir / f"scores_{i}.jsonl"
            scored.write_text(json.dumps({"id": f"sgd:demo:{i}", "correct": i % 2}) + "\n")
            log_cell(
                parent,
                cell,
                metrics={"P1": (i % 7) / 7, "tokens_in": 100 + i},
                artifacts=[scored],
                model_id="HuggingFaceTB/SmolLM2-135M-Instruct",
                model_revision="demo",
                stage="score",
            )
    print(
        f"demo store: logged 1 pipeline run + {n_cells} cells in "
        f"{time.perf_counter() - t0:.2f} s -> {uri}"
    )


def run_check(args: argparse.Namespace) -> int:
    chromium = find_chromium(args.chromium)
    uri: str = args.backend_store_uri
    exp_id, n_runs, parents, cells = expected_runs(uri, args.experiment, args.max_expected)
    expected = list(args.expect) if args.expect else parents + cells
    if not expected:
        print(f"check_mlflow_ui: experiment {args.experiment!r} has no runs", file=sys.stderr)
        return 1

    port = args.port or free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, MLFLOW_ENABLE_SYSTEM_METRICS_LOGGING="false")
    server_cmd = [
        sys.executable,
        "-m",
        "mlflow",
        "server",
        "--backend-store-uri",
        uri,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        "1",
    ]
    log = tempfile.NamedTemporaryFile(prefix="mlflow-server-", suffix=".log", delete=False)  # noqa: SIM115
    server = subprocess.Popen(server_cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        try:
            wait_http(f"{base}/health", args.server_timeout, server)
        except (RuntimeError, TimeoutError) as exc:
            log.flush()
            tail = Path(log.name).read_text(errors="replace")[-3000:]
            print(f"check_mlflow_ui: mlflow server did not come up: {exc}\n{tail}", file=sys.stderr)
            return 1
        print(f"mlflow server up at {base} (store {uri})")
        url = f"{base}/#/experiments/{exp_id}/runs"
        with chromium_page(chromium, args.width, args.height) as tools:
            tools.call("Page.enable")
            tools.call("Page.navigate", url=url)
            deadline = time.monotonic() + args.page_timeout
            text = ""
            expanded = 0
            while time.monotonic() < deadline:
                text = page_text(tools)
                if all(name in text for name in expected):
                    break
                if parents and parents[0] in text:
                    expanded += int(tools.evaluate(EXPAND_JS) or 0)
                time.sleep(0.5)
            tools.evaluate(CLOSE_PANELS_JS)
            time.sleep(1.0)  # let the last expansion and layout paint before the screenshot
            text = page_text(tools)
            title = tools.evaluate("document.title")
            if args.screenshot:
                shot = tools.call("Page.captureScreenshot", format="png")
                out = Path(args.screenshot)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(base64.b64decode(shot["data"]))
                print(f"screenshot: {out}")
            if args.dump_text:
                Path(args.dump_text).write_text(text)
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
        with contextlib.suppress(OSError):
            os.unlink(log.name)

    found = [n for n in expected if n in text]
    missing = [n for n in expected if n not in text]
    print(f"page: {url}  title: {title!r}")
    print(f"experiment name shown: {args.experiment in text}  ({args.experiment!r})")
    counter = re.search(r"(\d+)\s+matching runs", text)
    print(f"expand clicks: {expanded}")
    shown = counter.group(0) if counter else "not shown"
    print(f"page run counter: {shown}  (store: {n_runs} runs in the experiment)")
    print(f"runs listed: {len(found)}/{len(expected)}")
    for name in found:
        print(f"  found   {name}")
    for name in missing:
        print(f"  MISSING {name}")
    ok = not missing and args.experiment in text
    print("OK: the MLflow UI lists the runs" if ok else "FAIL: runs not listed by the MLflow UI")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend-store-uri",
        help="tracking store (default: as compressbench "
        "resolves it: $MLFLOW_TRACKING_URI, else sqlite:///<repo>/mlflow.db)",
    )
    parser.add_argument("--experiment", default=None, help="default: compressbench-tpbench")
    parser.add_argument(
        "--expect",
        action="append",
        default=[],
        help="run name that must be listed (repeatable; default: from store)",
    )
    parser.add_argument(
        "--max-expected",
        type=int,
        default=60,
        help="cap on run names taken from the store (the UI pages long lists)",
    )
    parser.add_argument("--screenshot", help="save a PNG of the page here")
    parser.add_argument("--dump-text", help="save the page's visible text here")
    parser.add_argument(
        "--demo",
        type=int,
        metavar="N",
        help="populate a fresh temp store with one pipeline run of N cells first",
    )
    parser.add_argument("--chromium", help="path to chromium/chrome (default: search PATH)")
    parser.add_argument("--port", type=int, default=0, help="server port (default: free port)")
    parser.add_argument("--width", type=int, default=1600)
    parser.add_argument("--height", type=int, default=1100)
    parser.add_argument("--server-timeout", type=float, default=120.0)
    parser.add_argument("--page-timeout", type=float, default=60.0)
    args = parser.parse_args(argv)

    src = Path(__file__).resolve().parents[1] / "src"
    if src.is_dir() and str(src) not in sys.path:
        sys.path.insert(0, str(src))
    from compressbench.tracking import DEFAULT_EXPERIMENT, resolve_tracking_uri

    args.experiment = args.experiment or DEFAULT_EXPERIMENT
    find_chromium(args.chromium)  # fail fast, before any server starts
    with tempfile.TemporaryDirectory(prefix="cb-ui-demo-") as tmp:
        if args.demo:
            args.backend_store_uri = f"sqlite:///{Path(tmp, 'mlflow.db').as_posix()}"
            populate_demo(args.backend_store_uri, args.experiment, args.demo, Path(tmp))
        args.backend_store_uri = resolve_tracking_uri(args.backend_store_uri)
        return run_check(args)


if __name__ == "__main__":
    raise SystemExit(main())
