"""Shared tracking end to end: a real PostgreSQL cluster (Debian's binaries, started here) as
the backend store of a real ``mlflow server`` with an artifact root; the built-in chain's
metrics stage logs to it through ``tracking.uri`` and everything is read back."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from compressbench import stages
from compressbench.config import parse_params
from compressbench.jsonl import read_jsonl
from compressbench.tpbench.stages import paths
from compressbench.tracking import read_cell_table, read_cells, read_pipeline_runs
from support.answer_tables import TABLE, gold_where_visible, mock_lookup, write_table
from support.http_server import free_port
from support.params import RATIO, pipeline_params
from support.processes import stop

pytestmark = pytest.mark.slow

METHOD = "recency"
DB_USER = "cb"
DB_NAME = "mlflow"
STARTUP_S = 600  # a loaded 2-core machine took 2 minutes to start the server


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        pytest.skip("Debian's postgresql is not installed (apt-get install postgresql)")
    return Path(found[-1]).parent


def _as_owner(args: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run its tools as the ``postgres`` user then."""
    if os.geteuid() != 0:
        return args
    return ["runuser", "-u", "postgres", "--", *args]


@dataclass(frozen=True)
class Server:
    uri: str  # the MLflow tracking server
    db_url: str  # the PostgreSQL database behind it
    artifacts: Path


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a free port; yields its database URL (psycopg)."""
    bin_dir = _pg_bin()
    base = Path(tempfile.mkdtemp(prefix="cb-pg-"))
    data = base / "data"
    if os.geteuid() == 0:
        shutil.chown(base, "postgres")
    port = free_port()
    run = {"check": True, "capture_output": True, "timeout": 120}
    subprocess.run(
        _as_owner([str(bin_dir / "initdb"), "-D", str(data), "-U", DB_USER, "--auth=trust"]),
        **run,
    )
    opts = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
    ctl = [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(base / "log"), "-o", opts]
    subprocess.run(_as_owner([*ctl, "-w", "-t", "60", "start"]), **run)
    try:
        subprocess.run(
            _as_owner(
                [
                    str(bin_dir / "createdb"),
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(port),
                    "-U",
                    DB_USER,
                    DB_NAME,
                ]
            ),
            **run,
        )
        yield f"postgresql+psycopg://{DB_USER}@127.0.0.1:{port}/{DB_NAME}"
    finally:
        subprocess.run(_as_owner([*ctl, "-m", "fast", "stop"]), capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text()[-2000:]
            raise RuntimeError(f"mlflow server exited {proc.returncode}: {tail}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{url}/health", timeout=5) as resp,
        ):
            if resp.status == 200:
                return
        time.sleep(1)
    tail = log.read_text()[-2000:]
    raise RuntimeError(f"mlflow server not healthy after {STARTUP_S} s: {tail}")


@pytest.fixture(scope="module")
def mlflow_server(postgres: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``mlflow server`` with the PostgreSQL store and a local artifact root, on a free port."""
    root = tmp_path_factory.mktemp("mlflow-server")
    artifacts = root / "artifacts"
    port = free_port()
    log = root / "server.log"
    cmd = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", postgres]
    cmd += ["--artifacts-destination", artifacts.as_uri(), "--host", "127.0.0.1"]
    cmd += ["--port", str(port), "--workers", "1"]
    # No job-execution workers (the server's optional background jobs): not needed here.
    env = {
        **os.environ,
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
    }
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, log)
        yield Server(uri=url, db_url=postgres.replace("+psycopg", ""), artifacts=artifacts)
    finally:
        stop(proc)


def test_metrics_stage_logs_to_mlflow_server_on_postgres(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mlflow_server: Server
) -> None:
    import psycopg

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(tmp_path / "answers.sqlite"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    raw = pipeline_params(
        grid=False,
        ratios=[RATIO],
        p3_ratio=RATIO,
        n_per_cell=6,
        methods=[METHOD],
        reader=mock_lookup(tmp_path / TABLE),
        tracking={"uri": mlflow_server.uri, "experiment": "shared"},
    )
    params = parse_params(raw, "pg-params.yaml")
    stages.stage_corpora(params, "builtin")
    stages.stage_probes(params, "builtin", RATIO)
    stages.stage_contexts(params, "builtin", METHOD, RATIO)
    write_table(tmp_path / TABLE, gold_where_visible)
    for stage in (stages.stage_answers, stages.stage_scores):
        stage(params, "builtin", METHOD, RATIO)
    stages.stage_metrics(params)

    cell = paths.CellFiles("builtin", METHOD, RATIO)
    scored = list(read_jsonl(cell.scores))
    probe_types = sorted({r["probe_type"] for r in scored})
    assert probe_types == ["P1", "P2", "P3"]

    # Read back through the server: the parent run, one child per probe type, their params,
    # provenance tags, metrics, artifacts and per-probe tables.
    (parent,) = read_pipeline_runs(mlflow_server.uri, "shared")
    assert parent.status == "FINISHED" and parent.tags["dvc.stage"] == "metrics"
    cells = read_cells(
        mlflow_server.uri, "shared", parent_run_id=parent.run_id, with_artifacts=True
    )
    assert sorted(c.params["probe"] for c in cells) == probe_types
    for run in cells:
        assert run.params["dataset"] == "builtin" and run.params["method"] == METHOD
        assert run.tags["model.revision"] == "1" and run.tags["image.lock_sha256"]
        assert cell.scores.name in run.artifacts
        rows = [r for r in scored if r["probe_type"] == run.params["probe"]]
        assert run.metrics["n"] == len(rows)
        table = read_cell_table(run.run_id, mlflow_server.uri)
        assert sorted(table["probe_id"]) == sorted(r["probe_id"] for r in rows)

    # The runs live in PostgreSQL, the files under the artifact root.
    with psycopg.connect(mlflow_server.db_url) as db:
        names = {r[0] for r in db.execute("SELECT name FROM runs WHERE status = 'FINISHED'")}
    assert names == {parent.run_name} | {c.run_name for c in cells}
    stored = [p for p in mlflow_server.artifacts.rglob("answers.json") if p.is_file()]
    assert len(stored) == len(cells)
    first = json.loads(stored[0].read_text(encoding="utf-8"))
    assert first["columns"][0] == "probe_id"
