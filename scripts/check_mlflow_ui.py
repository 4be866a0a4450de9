#!/usr/bin/env python3
"""Check in a real headless browser that the MLflow UI lists the runs and shows a cell's table.

Starts ``mlflow server`` on 127.0.0.1 (a free port) over the given backend store, waits until it
answers, then drives the system Chromium through Playwright, in a fresh browser profile:

1. opens the plain experiment page (``#/experiments/<id>``) and reports the tab it lands on.
   MLflow 3.10+ picks it by the sidebar's GenAI / Model training switch (kept in the browser,
   GenAI by default: the traces overview), older 3.x by the experiment's
   ``mlflow.experimentKind`` tag, which the pipeline sets; without the switch it must be the runs;
2. opens the link the pipeline logs (``...?workflowType=machine_learning``), which must land on
   the runs table, expands nested runs and reads which run names the page shows;
3. opens one cell run's artifacts, selects its table (logged with ``log_table``) and reads the
   column headers and rows the page shows.

The cells checked are those of the newest pipeline run that has cells with a table (each DVC
stage opens its own pipeline run; the report stage's, the newest, has none). Prints what it saw,
saves screenshots, and exits 1 when a page lands elsewhere, a run is not listed or the table or
one of its columns is not shown.

    python scripts/check_mlflow_ui.py --backend-store-uri sqlite:///$PWD/mlflow.db \\
        --screenshot mlflow-ui.png
    python scripts/check_mlflow_ui.py --demo 6 --screenshot /tmp/ui.png   # temp store

Needs ``pip install 'compressbench[ui]'`` (Playwright; its own browsers are not used) and a
Chromium: Debian/Ubuntu ``apt-get install -y chromium`` (``/usr/bin/chromium``), or
``--chromium PATH`` to any Chrome/Chromium binary.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SYSTEM_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
INSTALL_HINT = (
    "Chromium is needed and was not found.\n"
    "  Debian/Ubuntu: apt-get install -y chromium   (binary: /usr/bin/chromium)\n"
    "  or pass --chromium /path/to/chrome"
)

# Clicks each not-yet-clicked "show child runs" toggle in the runs table once; returns how many.
# MLflow 3 renders it as an icon button in the run-name cell (no aria label); older UIs used
# aria-labelled buttons or ag-grid group toggles.
EXPAND_JS = r"""
() => {
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
}
"""

# Closes side panels (MLflow 3's assistant) so the screenshot shows the page; returns count.
CLOSE_PANELS_JS = r"""
() => {
  let n = 0;
  for (const b of document.querySelectorAll('button[aria-label]')) {
    if (/^close/i.test(b.getAttribute('aria-label')) && !b.closest('[role="dialog"]')) {
      b.click(); n++;
    }
  }
  return n;
}
"""

# The cells of the first body row of the table on the page.
FIRST_ROW_JS = r"""
() => {
  const rows = Array.from(document.querySelectorAll('tbody tr, [role="row"]'));
  const row = rows.find(r => r.querySelector('td, [role="cell"]'));
  return row ? Array.from(row.querySelectorAll('td, [role="cell"]')).map(c => c.innerText) : [];
}
"""

# The column headers of the tables on the page, in order.
HEADERS_JS = r"""
() => Array.from(document.querySelectorAll('th, [role="columnheader"]'))
  .map(e => e.innerText.trim()).filter(t => t)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, timeout_s: float, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + timeout_s
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
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
    """The Chromium binary: ``--chromium``, else /usr/bin/chromium, else one on PATH."""
    for candidate in [explicit] if explicit else [SYSTEM_CHROMIUM, "chromium", "google-chrome"]:
        found = candidate if Path(candidate).is_file() else shutil.which(candidate)
        if found:
            return found
    sys.exit(f"check_mlflow_ui: {INSTALL_HINT}")


@contextlib.contextmanager
def mlflow_server(uri: str, port: int, timeout_s: float) -> Iterator[str]:
    """``mlflow server`` over ``uri`` on 127.0.0.1:``port``; yields its base URL."""
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, MLFLOW_ENABLE_SYSTEM_METRICS_LOGGING="false")
    cmd = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", uri]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    with tempfile.TemporaryFile(prefix="mlflow-server-") as log:
        server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            try:
                wait_http(f"{base}/health", timeout_s, server)
            except (RuntimeError, TimeoutError) as exc:
                log.seek(0)
                tail = log.read().decode(errors="replace")[-3000:]
                raise SystemExit(
                    f"check_mlflow_ui: mlflow server did not come up: {exc}\n{tail}"
                ) from None
            print(f"mlflow server up at {base} (store {uri})")
            yield base
        finally:
            server.terminate()
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


@contextlib.contextmanager
def chromium_page(chromium: str, width: int, height: int) -> Iterator[Any]:
    """A Playwright page in headless ``chromium`` (the system binary, not Playwright's own)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=chromium, headless=True, args=list(CHROMIUM_FLAGS)
        )
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


def screenshot(page: Any, path: str | None, suffix: str = "") -> None:
    if not path:
        return
    out = Path(path)
    if suffix:
        out = out.with_name(f"{out.stem}{suffix}{out.suffix}")
    out.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out))
    print(f"screenshot: {out}")


def expected_runs(uri: str, experiment: str, limit: int, cell: str | None, table: str | None):
    """From the store: experiment id and kind, run count, parent names (newest first), the cells
    of the newest pipeline run with cells that logged ``table`` (any table if None) and the cell
    whose table to open (named ``cell``, else the first finished one; None if there is none)."""
    from compressbench.tracking import latest_cells, logged_tables, read_cells, read_pipeline_runs
    from compressbench.tracking.store import experiment_kind, open_client

    exp = open_client(uri).get_experiment_by_name(experiment)
    if exp is None:
        sys.exit(f"check_mlflow_ui: no experiment {experiment!r} in {uri}")

    def has_table(run: Any) -> bool:
        tables = logged_tables(run)
        return table in tables if table else bool(tables)

    parents = read_pipeline_runs(uri, experiment)[::-1]  # newest first
    home, named = latest_cells(
        uri, experiment, keep=lambda r: has_table(r) and (cell is None or r.run_name == cell)
    )
    cells = named
    if cell is not None and home is not None:  # every cell of that run, the named one first
        siblings = read_cells(uri, experiment, parent_run_id=home.run_id)
        cells = named + [c for c in siblings if has_table(c) and c.run_name != cell]
    names = [p.run_name for p in parents][:limit]
    if home is not None and home.run_name not in names:
        names.append(home.run_name)
    finished = [c for c in named if c.status == "FINISHED"]
    return {
        "experiment_id": str(exp.experiment_id),
        "kind": experiment_kind(exp),
        "n_runs": len(read_cells(uri, experiment)) + len(parents),
        "parents": names,
        "home": home,
        "cells": cells,
        "cell": next(iter(finished or named), None),
    }


def expected_table(uri: str, cell: Any, table: str | None) -> Any:
    """(table file, column names, first row as text) of the table the UI must show."""
    from compressbench.tracking import logged_tables, read_cell_table

    table_file = table or logged_tables(cell)[0]
    frame = read_cell_table(cell.run_id, uri, table_file)
    if frame.empty:
        sys.exit(f"check_mlflow_ui: the table {table_file!r} of {cell.run_name!r} is empty")
    return table_file, [str(c) for c in frame.columns], [str(v) for v in frame.iloc[0]]


def page_tab(url: str, exp_id: str) -> str:
    """The experiment tab a UI address shows (``runs``, ``overview``, ``traces`` ...), or ''."""
    parts = url.split("#", 1)[-1].split("?", 1)[0].strip("/").split("/")
    ok = len(parts) >= 3 and parts[:2] == ["experiments", exp_id]
    return parts[2] if ok else ""


def open_landing(page: Any, url: str, exp_id: str, timeout: float) -> str:
    """Open ``url``; wait until the UI has redirected to an experiment tab; return the tab."""
    page.goto(url)
    deadline = time.monotonic() + timeout
    while not page_tab(page.url, exp_id) and time.monotonic() < deadline:
        page.wait_for_timeout(300)
    page.wait_for_timeout(1500)  # let the page paint before a screenshot
    return page_tab(page.url, exp_id)


def check_runs(page: Any, url: str, exp_id: str, expected: list[str], timeout: float):
    """Open the runs link; expand nested runs until every expected name shows."""
    tab = open_landing(page, url, exp_id, timeout)
    deadline = time.monotonic() + timeout
    expanded, text = 0, ""
    while time.monotonic() < deadline:
        text = page.inner_text("body")
        if all(name in text for name in expected):
            break
        expanded += int(page.evaluate(EXPAND_JS) or 0)
        page.wait_for_timeout(500)
    page.evaluate(CLOSE_PANELS_JS)
    page.wait_for_timeout(1000)  # let the last expansion paint before the screenshot
    return page.inner_text("body"), expanded, tab


def check_table(page: Any, url: str, table_file: str, columns: list[str], timeout: float):
    """Open a run's artifacts, select the table file, wait for its column headers."""
    page.goto(url)
    page.get_by_text(table_file, exact=True).first.click(timeout=timeout * 1000)
    with contextlib.suppress(Exception):  # all headers shown, or report what is there
        page.wait_for_function(
            f"cols => {{ const h = ({HEADERS_JS})(); return cols.every(c => h.includes(c)); }}",
            arg=columns,
            timeout=timeout * 1000,
        )
    page.evaluate(CLOSE_PANELS_JS)
    page.wait_for_timeout(1000)
    headers = [str(h) for h in page.evaluate(HEADERS_JS)]
    return headers, [str(c) for c in page.evaluate(FIRST_ROW_JS)], page.inner_text("body")


def run_check(args: argparse.Namespace) -> int:
    from compressbench.tracking.store import EXPERIMENT_KIND_TAG, UI_RUNS_QUERY, ui_url

    chromium = find_chromium(args.chromium)
    uri: str = args.backend_store_uri
    seen = expected_runs(uri, args.experiment, args.max_expected, args.cell, args.table)
    cell = seen["cell"]
    if cell is None:
        what = f"cell run {args.cell!r}" if args.cell else "cell runs"
        table = f"table {args.table!r}" if args.table else "a table"
        print(f"check_mlflow_ui: experiment {args.experiment!r} has no {what} with {table}")
        return 1
    cell_names = [c.run_name for c in seen["cells"]][: args.max_expected]
    expected = list(args.expect) if args.expect else seen["parents"] + cell_names
    table_file, columns, first_row = expected_table(uri, cell, args.table)
    exp_id = seen["experiment_id"]
    with (
        mlflow_server(uri, args.port or free_port(), args.server_timeout) as base,
        chromium_page(chromium, args.width, args.height) as page,
    ):
        plain_url = f"{base}/#/experiments/{exp_id}"
        plain_tab = open_landing(page, plain_url, exp_id, args.page_timeout)
        switch = page.get_by_text("Model training", exact=True).count() > 0
        page.evaluate(CLOSE_PANELS_JS)
        screenshot(page, args.screenshot, "-plain")
        runs_url = ui_url(uri, exp_id, base=base)
        text, expanded, tab = check_runs(page, runs_url, exp_id, expected, args.page_timeout)
        title = page.title()
        screenshot(page, args.screenshot)
        table_url = f"{base}/#/experiments/{exp_id}/runs/{cell.run_id}/artifacts?{UI_RUNS_QUERY}"
        headers, row_shown, table_text = check_table(
            page, table_url, table_file, columns, args.page_timeout
        )
        screenshot(page, args.screenshot, "-table")
    if args.dump_text:
        Path(args.dump_text).write_text(text + "\n\n" + table_text)

    found = [n for n in expected if n in text]
    missing = [n for n in expected if n not in text]
    shown_cols = [c for c in columns if c in headers]
    row_ok = len(row_shown) == len(first_row) and all(map(_same, row_shown, first_row))
    counter = re.search(r"(\d+)\s+matching runs", text)
    home = seen["home"]
    print(f"experiment {args.experiment!r} (id {exp_id}): {EXPERIMENT_KIND_TAG}={seen['kind']}")
    print(f"cells from pipeline run: {home.run_name if home else '?'!r} ({cell.parent_run_id})")
    where = "the sidebar switch, GenAI by default" if switch else "the experiment's kind tag"
    print(f"plain page: {plain_url} -> tab {plain_tab!r} (chosen by {where})")
    print(f"runs link:  {runs_url} -> tab {tab!r}  title: {title!r}")
    print(f"experiment name shown: {args.experiment in text}  ({args.experiment!r})")
    print(f"expand clicks: {expanded}")
    shown = counter.group(0) if counter else "not shown"
    print(f"page run counter: {shown}  (store: {seen['n_runs']} pipeline and cell runs)")
    print(f"runs listed: {len(found)}/{len(expected)}")
    for name in found:
        print(f"  found   {name}")
    for name in missing:
        print(f"  MISSING {name}")
    print(f"table page: {table_url}  (cell {cell.run_name!r}, file {table_file!r})")
    print(f"table columns shown: {len(shown_cols)}/{len(columns)}: {' | '.join(headers)}")
    print(f"first row on the page: {json.dumps(row_shown, ensure_ascii=False)}")
    print(f"first row in the store: {json.dumps(first_row, ensure_ascii=False)}")
    table_ok = len(shown_cols) == len(columns) and row_ok
    problems = [
        what
        for what, bad in (
            ("the experiment does not open on its runs table", tab != "runs"),
            (
                "the plain experiment page does not open on the runs",
                not switch and plain_tab != "runs",
            ),
            ("runs not listed", bool(missing) or args.experiment not in text),
            ("the cell's table not shown", not table_ok),
        )
        if bad
    ]
    ok_line = "OK: the MLflow UI opens the runs table, lists the runs and shows the cell's table"
    print("FAIL: " + "; ".join(problems) if problems else ok_line)
    return 1 if problems else 0


# How the table file's missing values read back (pandas: None, NaN) and how the UI shows them.
STORED_MISSING = frozenset({"None", "nan", "NaN", "<NA>", ""})
SHOWN_MISSING = frozenset({"null", "None", ""})


def _same(shown: str, stored: str) -> bool:
    """A page cell equals a stored value: same words, the same number (``0`` vs ``0.0``), or
    a missing value (a stored ``None`` reads back as ``None`` or ``nan``; the UI shows
    ``null``)."""
    if " ".join(shown.split()) == " ".join(stored.split()):
        return True
    if stored.strip() in STORED_MISSING:
        return shown.strip() in SHOWN_MISSING
    try:
        return float(shown) == float(stored)
    except ValueError:
        return False


def populate_demo(uri: str, experiment: str, n_cells: int, workdir: Path) -> None:
    """Log what a default ``dvc repro`` logs, in small: a metrics pipeline run of ``n_cells``
    cells (answers table, probe set), a retention run (cells without a table), and last the
    report run (no cells)."""
    from compressbench.tracking import DatasetFile, log_cell, start_pipeline_run

    probes = workdir / "probes.jsonl"
    probes.write_text(
        "".join(json.dumps({"probe_id": f"sgd:d{i}:0", "gold": "Paris"}) + "\n" for i in range(4))
    )
    t0 = time.perf_counter()
    cell = {"dataset": "sgd", "probe": "P2", "ratio": 0.5, "method": "recency"}
    opts: dict[str, Any] = {"tracking_uri": uri, "experiment": experiment}
    with start_pipeline_run("tpbench", {"n_cells": n_cells}, stage="metrics", **opts) as parent:
        for i in range(n_cells):
            table = [
                {
                    "probe_id": f"sgd:d{j}:0",
                    "question": "Question: What is the current value of city?",
                    "output": json.dumps({"value": "Paris" if j % 2 else "Rome"}),
                    "prediction": "Paris" if j % 2 else "Rome",
                    "gold": "Paris",
                    "score_strict": float(j % 2),
                }
                for j in range(4)
            ]
            log_cell(
                parent,
                {**cell, "seed": i},
                metrics={"strict": 0.5},
                table=table,
                datasets=[DatasetFile(probes)],
                started_at=1_700_000_000.0 + 60 * i,
                ended_at=1_700_000_030.0 + 60 * i,
            )
    with start_pipeline_run("retention sgd", {}, stage="retention@sgd", **opts) as parent:
        log_cell(parent, {**cell, "probe": "retention", "seed": "-"}, metrics={"n": 4})
    with start_pipeline_run("tpbench report", {}, stage="report", **opts):
        pass
    took = time.perf_counter() - t0
    print(f"demo store: 3 pipeline runs, the first with {n_cells} cells, in {took:.2f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add = parser.add_argument
    add(
        "--backend-store-uri", help="default: $MLFLOW_TRACKING_URI, else sqlite:///<repo>/mlflow.db"
    )
    add("--experiment", default=None, help="default: compressbench-tpbench")
    add("--expect", action="append", default=[], help="run name that must be listed (repeatable)")
    add("--max-expected", type=int, default=60, help="cap on run names taken from the store")
    add("--cell", help="cell run name whose table to open (default: the newest cells' first)")
    add("--table", help="the cell's table artifact (default: the first it logged)")
    add("--screenshot", help="PNG of the runs page here (the table page gets -table)")
    add("--dump-text", help="save the pages' visible text here")
    add("--demo", type=int, metavar="N", help="check a fresh temp store of N demo cells")
    add("--chromium", help=f"Chrome/Chromium binary (default: {SYSTEM_CHROMIUM})")
    add("--port", type=int, default=0, help="server port (default: a free one)")
    add("--width", type=int, default=1600)
    add("--height", type=int, default=1100)
    add("--server-timeout", type=float, default=120.0)
    add("--page-timeout", type=float, default=90.0)
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
