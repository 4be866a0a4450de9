"""Check ``tracking``: an unreachable server, sqlite stores (new, existing, locked, unwritable
folder) and, slow, a real ``mlflow server`` written to and cleaned."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from compressbench.doctor.base import Context, Options, Result
from compressbench.doctor.checks import run_one
from support.http_server import free_port
from support.processes import stop


def tracking(params: Path, uri: str | None) -> Result:
    return run_one("tracking", Context(Options(params=params, tracking_uri=uri, timeout=3.0)))


def test_unreachable_server_fails(write_params: Callable[..., Path], closed_port: int) -> None:
    uri = f"http://127.0.0.1:{closed_port}"
    result = tracking(write_params(), uri)
    assert result.status == "FAIL"
    assert result.summary == f"tracking server {uri} unreachable: Connection refused"


def test_sqlite_stores(write_params: Callable[..., Path], tmp_path: Path) -> None:
    params = write_params()
    db = tmp_path / "runs" / "mlflow.db"
    uri = f"sqlite:///{db}"
    result = tracking(params, uri)
    assert result.status == "PASS" and "the store is created on first use" in result.summary
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.execute("CREATE TABLE experiments (id INTEGER)")
        con.commit()
    result = tracking(params, uri)
    assert result.status == "PASS" and result.summary == f"{uri}: folder and store writable"
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as holder:
        holder.execute("BEGIN IMMEDIATE")  # another writer holds the store
        result = tracking(params, uri)
    assert result.status == "FAIL" and "database is locked" in result.summary, result.summary


def test_default_store_is_the_projects_and_a_file_in_its_way_fails(
    write_params: Callable[..., Path], tmp_path: Path
) -> None:
    params = write_params()  # tracking.uri null: <project>/mlflow.db
    result = tracking(params, None)
    assert result.status == "PASS" and f"sqlite:///{tmp_path}/mlflow.db" in result.summary
    (tmp_path / "blocked").write_text("a file where the store's folder should be")
    uri = f"sqlite:///{tmp_path / 'blocked' / 'mlflow.db'}"
    result = tracking(params, uri)
    assert result.status == "FAIL" and "not writable" in result.summary, result.summary


@pytest.fixture
def mlflow_server(tmp_path: Path) -> Iterator[str]:
    """A real ``mlflow server`` on a sqlite store, on a free loopback port."""
    port = free_port()
    cmd = [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--backend-store-uri", f"sqlite:///{tmp_path / 'server.db'}", "--workers", "1"]
    cmd += ["--artifacts-destination", (tmp_path / "artifacts").as_uri()]
    env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true"}
    env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            with contextlib.suppress(OSError), urllib.request.urlopen(url + "/health", timeout=5):
                break
            time.sleep(1)
        else:
            pytest.fail(f"mlflow server did not start: {(tmp_path / 'server.log').read_text()}")
        yield url
    finally:
        stop(proc)
        log.close()


@pytest.mark.slow
def test_real_server_takes_a_throwaway_run(
    write_params: Callable[..., Path], mlflow_server: str, tmp_path: Path
) -> None:
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    result = tracking(write_params(), mlflow_server)
    assert result.status == "PASS", result.summary
    assert "a throwaway run written and deleted in 'compressbench-tpbench'" in result.summary
    client = MlflowClient(tracking_uri=mlflow_server)
    exp = client.get_experiment_by_name("compressbench-tpbench")
    assert client.search_runs([exp.experiment_id]) == []  # nothing left among live runs
    gone = client.search_runs([exp.experiment_id], run_view_type=ViewType.DELETED_ONLY)
    assert [r.info.run_name for r in gone] == ["compressbench-doctor-write-check"]
    assert gone[0].info.status == "FINISHED"
    assert list((tmp_path / "artifacts").rglob("doctor.txt"))  # the artifact store took a file
