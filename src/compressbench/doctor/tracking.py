"""Check ``tracking``: mlflow imports, and the MLflow store the stages log to opens and is writable.

The URI is resolved as the stages resolve it (``--tracking-uri``, else ``tracking.uri``, else
``MLFLOW_TRACKING_URI``, else the project's ``mlflow.db``). First ``import mlflow``: a failure
is reported with its exact error (:func:`compressbench.tracking.store.mlflow_import_error`). A
sqlite store: its folder takes a file; an existing database takes a write lock and is opened
with MLflow as the stages open it (:func:`~compressbench.tracking.store.open_client`) and
listed; a database not yet there is stood in for by a throwaway store that MLflow creates and
opens in the same folder, then removed. A server: ``/health`` answers, then a throwaway run is
created in the project's experiment with a small artifact, ended and deleted.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from compressbench.doctor.base import FAIL, PASS, Context, Result, Skip, one_line
from compressbench.tracking.store import (
    DEFAULT_EXPERIMENT,
    KIND_TAG,
    experiment_id,
    mlflow_import_error,
    open_client,
    resolve_tracking_uri,
    sqlite_path,
)

RUN_NAME = "compressbench-doctor-write-check"


def tracking_uri(ctx: Context) -> str:
    try:
        configured = ctx.params.tracking.uri
    except Skip:
        configured = None
    return resolve_tracking_uri(ctx.options.tracking_uri or configured, ctx.repo_root)


def _experiment(ctx: Context) -> str:
    try:
        return ctx.params.tracking.experiment
    except Skip:
        return DEFAULT_EXPERIMENT


def _folder_writable(folder: Path) -> str | None:
    """Why ``folder`` (created if missing) cannot take a file, or None."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-"):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _open_sqlite(uri: str) -> None:
    """Open the sqlite store at ``uri`` as the stages do (creating it if missing) and list an
    experiment: MLflow's store code, its schema and sqlite all run."""
    open_client(uri).search_experiments(max_results=1)


def _sqlite(uri: str, db: Path) -> Result:
    why = _folder_writable(db.parent)
    if why is not None:
        return Result("tracking", FAIL, f"{uri}: folder {db.parent} not writable: {why}")
    if not db.exists():
        try:
            with tempfile.TemporaryDirectory(dir=db.parent, prefix=".doctor-") as tmp:
                _open_sqlite(f"sqlite:///{Path(tmp) / db.name}")
        except Exception as exc:
            return Result("tracking", FAIL, f"{uri}: a new store does not open: {one_line(exc)}")
        text = f"{uri}: folder writable, a throwaway store opened there; created on first use"
        return Result("tracking", PASS, text)
    try:
        with contextlib.closing(
            sqlite3.connect(f"{db.as_uri()}?mode=rw", uri=True, timeout=2)
        ) as c:
            c.execute("BEGIN IMMEDIATE")
            c.execute("ROLLBACK")
    except sqlite3.Error as exc:
        return Result("tracking", FAIL, f"{uri}: store not writable: {exc}")
    try:
        _open_sqlite(uri)
    except Exception as exc:
        return Result("tracking", FAIL, f"{uri}: store does not open: {one_line(exc)}")
    return Result("tracking", PASS, f"{uri}: folder and store writable, the store opens")


@contextlib.contextmanager
def _short_http(timeout: float) -> Iterator[None]:
    """MLflow's HTTP client without its minutes of retries, for this check only."""
    keys = {
        "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0",
        "MLFLOW_HTTP_REQUEST_TIMEOUT": str(max(1, round(timeout))),
    }
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update(keys)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _write_run(uri: str, experiment: str, timeout: float) -> str:
    """Create, fill, end and delete one run in ``experiment``; returns the experiment id."""
    with _short_http(timeout):
        client = open_client(uri)
        exp = experiment_id(client, uri, experiment)
        run = client.create_run(exp, run_name=RUN_NAME, tags={KIND_TAG: "doctor"})
        run_id = run.info.run_id
        try:
            client.log_param(run_id, "doctor", "write check")
            client.log_text(run_id, "compressbench doctor write check\n", "doctor.txt")
            client.set_terminated(run_id, "FINISHED")
        finally:
            client.delete_run(run_id)
    return exp


def check_tracking(ctx: Context) -> Result:
    uri = tracking_uri(ctx)
    db = sqlite_path(uri)
    if db is None and uri.startswith("sqlite:"):
        raise Skip(f"{uri}: an in-memory store keeps nothing")
    try:
        import mlflow  # noqa: F401  (what every stage's run logging imports)
    except ImportError as exc:
        return Result("tracking", FAIL, f"{uri}: {mlflow_import_error(exc)}")
    if db is not None:
        return _sqlite(uri, db)
    if uri.startswith(("http://", "https://")):
        try:
            health = uri.rstrip("/") + "/health"
            with urllib.request.urlopen(health, timeout=ctx.options.timeout):
                pass
        except Exception as exc:
            reason = getattr(exc, "reason", None)
            why = getattr(reason, "strerror", None) or reason or one_line(exc)
            return Result("tracking", FAIL, f"tracking server {uri} unreachable: {why}")
    experiment = _experiment(ctx)
    try:
        exp = _write_run(uri, experiment, ctx.options.timeout)
    except Exception as exc:
        return Result("tracking", FAIL, f"{uri}: not writable: {one_line(exc)}")
    text = f"{uri}: reachable; a throwaway run written and deleted in {experiment!r} (id {exp})"
    return Result("tracking", PASS, text)
