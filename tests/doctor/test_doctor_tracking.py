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

import compressbench
from compressbench.doctor.base import Context, Options, Result
from compressbench.doctor.checks import run_one
from compressbench.tracking.store import open_client
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
    assert result.status == "PASS", result.summary
    assert result.summary == (
        f"{uri}: folder writable, a throwaway store opened there; created on first use"
    )
    assert list(db.parent.iterdir()) == []  # the throwaway store is gone, the store not made
    open_client(uri).search_experiments()  # the store as a stage creates it
    result = tracking(params, uri)
    assert result.status == "PASS" and result.summary == (
        f"{uri}: folder and store writable, the store opens"
    )
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as holder:
        holder.execute("BEGIN IMMEDIATE")  # another writer holds the store
        result = tracking(params, uri)
    assert result.status == "FAIL" and "database is locked" in result.summary, result.summary

    other = tmp_path / "other.db"  # a sqlite file that is not an MLflow store
    with contextlib.closing(sqlite3.connect(other)) as con:
        con.execute("CREATE TABLE experiments (id INTEGER)")
        con.commit()
    result = tracking(params, f"sqlite:///{other}")
    assert result.status == "FAIL", result.summary
    assert result.summary.startswith(f"sqlite:///{other}: store does not open: ")


BROKEN_MLFLOW = "raise ImportError(\"cannot import name 'Engine' from 'sqlalchemy' (unknown)\")\n"


@pytest.mark.parametrize(
    ("init", "expected"),
    [
        (
            BROKEN_MLFLOW,
            "mlflow is installed but does not import: ImportError: cannot import name 'Engine' "
            "from 'sqlalchemy' (unknown)",
        ),
        (
            "import sqlalchemy_gone_from_this_install\n",
            "mlflow is installed but does not import: ModuleNotFoundError: No module named "
            "'sqlalchemy_gone_from_this_install'",
        ),
    ],
)
def test_an_mlflow_that_does_not_import_fails_with_its_exact_error(
    doctor: Callable[..., subprocess.CompletedProcess[str]],
    write_params: Callable[..., Path],
    tmp_path: Path,
    init: str,
    expected: str,
) -> None:
    """A broken install (an ``mlflow`` package first on the path whose import fails) through
    ``compressbench doctor``: the tracking check imports mlflow and names the error."""
    broken = tmp_path / "broken" / "mlflow"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text(init)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    args = ["--params", str(write_params()), "--only", "tracking", "--tracking-uri", uri]
    proc = doctor(*args, env={"PYTHONPATH": str(broken.parent)})
    assert proc.returncode == 1 and proc.stderr == ""
    [line] = proc.stdout.splitlines()
    assert line.split(maxsplit=2) == ["FAIL", "tracking", f"{uri}: {expected}"], line


def test_the_store_says_not_installed_only_when_mlflow_is_missing(tmp_path: Path) -> None:
    """``open_client`` in a process where ``mlflow`` is absent, then where it is broken."""
    code = (
        "import sys\n"
        "from compressbench.tracking.store import open_client\n"
        "try:\n"
        "    open_client(sys.argv[1])\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    # python -S: no site-packages, so no mlflow; the package from its source folder
    src = f"sys.path.insert(0, {str(Path(compressbench.__file__).parents[1])!r})\n"
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code.replace("\n", "\n" + src, 1), uri],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.stdout.strip() == (
        "TrackingError mlflow is not installed: pip install 'compressbench[pipeline]' (or mlflow)"
    ), proc.stderr
    broken = tmp_path / "broken" / "mlflow"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text(BROKEN_MLFLOW)
    env = {**os.environ, "PYTHONPATH": str(broken.parent)}
    proc = subprocess.run(
        [sys.executable, "-c", code, uri], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.stdout.strip() == (
        "TrackingError mlflow is installed but does not import: ImportError: cannot import "
        "name 'Engine' from 'sqlalchemy' (unknown)"
    ), proc.stderr


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
