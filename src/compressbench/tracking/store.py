"""The MLflow store: tracking URI resolution, the client, experiments and store errors.

mlflow is imported lazily (importing it costs seconds) and only through :func:`open_client`.
The fluent API (``mlflow.start_run``) is not used anywhere in this package: no global
active-run state, no system-metrics thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from compressbench.tracking.provenance import find_repo_root
from compressbench.tracking.values import KEY_BAD_CHARS, TrackingError

__all__ = [
    "ARTIFACTS_DIR_NAME",
    "DEFAULT_DB_NAME",
    "DEFAULT_EXPERIMENT",
    "EXPERIMENT_KIND",
    "EXPERIMENT_KIND_TAG",
    "KIND_CELL",
    "KIND_PIPELINE",
    "KIND_TAG",
    "PARENT_TAG",
    "TrackingError",
    "default_tracking_uri",
    "ensure_experiment_kind",
    "experiment_id",
    "experiment_kind",
    "guard",
    "open_client",
    "resolve_tracking_uri",
    "sqlite_path",
    "ui_url",
]

DEFAULT_EXPERIMENT = "compressbench-tpbench"
DEFAULT_DB_NAME = "mlflow.db"
ARTIFACTS_DIR_NAME = "mlartifacts"

KIND_TAG = "compressbench.kind"
KIND_PIPELINE = "pipeline"
KIND_CELL = "cell"
PARENT_TAG = "mlflow.parentRunId"
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
EXPERIMENT_KIND = "custom_model_development"

#: Where ``mlflow ui`` / ``mlflow server`` listen by default.
UI_DEFAULT_BASE = "http://127.0.0.1:5000"
#: MLflow 3.10+ decides an experiment's landing page by the UI's GenAI / Model training switch
#: (kept in the browser, GenAI by default), not by the experiment's kind tag; this query
#: parameter selects "Model training", so the experiment opens on its runs table.
UI_RUNS_QUERY = "workflowType=machine_learning"

T = TypeVar("T")

logger = logging.getLogger(__name__)


def guard(where: str, fn: Callable[[], T]) -> T:
    """Run one store call; any failure becomes a :class:`TrackingError` naming ``where``."""
    try:
        return fn()
    except TrackingError:
        raise
    except Exception as exc:
        raise TrackingError(
            f"MLflow logging failed for {where}: {type(exc).__name__}: {exc}"
        ) from exc


# ---------------------------------------------------------------------------- tracking URI


def default_tracking_uri(repo_root: str | Path | None = None) -> str:
    """``sqlite:///<repo>/mlflow.db`` (absolute), the repo found from ``repo_root`` or cwd."""
    root = find_repo_root(repo_root)
    return f"sqlite:///{(root / DEFAULT_DB_NAME).as_posix()}"


def resolve_tracking_uri(explicit: str | None = None, repo_root: str | Path | None = None) -> str:
    """The explicit URI if given, else ``$MLFLOW_TRACKING_URI``, else the repo's sqlite file."""
    if explicit:
        return explicit
    env = os.environ.get("MLFLOW_TRACKING_URI", "").strip()
    if env:
        return env
    return default_tracking_uri(repo_root)


def sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI; None for other stores and in-memory ones."""
    if not uri.startswith("sqlite:///"):
        return None
    raw = uri[len("sqlite:///") :].split("?", 1)[0]
    return Path(raw) if raw and raw != ":memory:" else None


def ui_url(
    tracking_uri: str, experiment_id: str, run_id: str | None = None, base: str | None = None
) -> str:
    """The MLflow UI page that shows an experiment's runs table (or one run of it).

    ``base`` defaults to the tracking server itself for an ``http(s)://`` tracking URI, else to
    ``mlflow ui``'s default address. The link carries :data:`UI_RUNS_QUERY`, so it opens on the
    runs table whatever the UI's switch says.
    """
    if base is None:
        remote = tracking_uri.startswith(("http://", "https://"))
        base = tracking_uri.split("#", 1)[0].rstrip("/") if remote else UI_DEFAULT_BASE
    page = f"experiments/{experiment_id}" + (f"/runs/{run_id}" if run_id else "")
    return f"{base.rstrip('/')}/#/{page}?{UI_RUNS_QUERY}"


# ---------------------------------------------------------------------------- sqlite speed

_FALSEY = frozenset({"0", "false", "no", "off"})
_FAST_SQLITE_FILES: set[str] = set()
_LISTENER_INSTALLED = False


def _on_sqlite_connect(dbapi_conn: Any, _record: Any) -> None:
    """Per-connection ``synchronous=NORMAL`` for the stores we opened (WAL makes it safe)."""
    if not isinstance(dbapi_conn, sqlite3.Connection) or not _FAST_SQLITE_FILES:
        return
    try:
        files = {
            str(Path(row[2]).resolve())
            for row in dbapi_conn.execute("PRAGMA database_list")
            if row[2]
        }
    except sqlite3.Error:
        return
    if files & _FAST_SQLITE_FILES:
        dbapi_conn.execute("PRAGMA synchronous=NORMAL")


def _speed_up_sqlite(db: Path) -> None:
    """Put the store in WAL mode (persistent) and commit without an fsync per transaction.

    MLflow commits several times per run; with the default rollback journal every commit
    fsyncs (about 15 ms on a typical disk, i.e. about 15 s per hundred cells). WAL with
    ``synchronous=NORMAL`` keeps the database consistent on a crash (only the last commits can
    be lost on power failure) and lets ``mlflow ui`` read while the pipeline writes. Opt out
    with ``COMPRESSBENCH_MLFLOW_SQLITE_WAL=0``.
    """
    global _LISTENER_INSTALLED
    if os.environ.get("COMPRESSBENCH_MLFLOW_SQLITE_WAL", "1").strip().lower() in _FALSEY:
        return
    with contextlib.closing(sqlite3.connect(db, timeout=20)) as con:
        con.execute("PRAGMA journal_mode=WAL")
    _FAST_SQLITE_FILES.add(str(db.resolve()))
    if not _LISTENER_INSTALLED:
        from sqlalchemy import event
        from sqlalchemy.engine import Engine

        event.listen(Engine, "connect", _on_sqlite_connect)
        _LISTENER_INSTALLED = True


# ---------------------------------------------------------------------------- client, experiment


def mlflow_import_error(exc: ImportError) -> str:
    """Why mlflow did not import, on one line: "not installed" only when the ``mlflow`` module
    itself is missing; otherwise the exact error (a dependency missing, a broken install)."""
    if isinstance(exc, ModuleNotFoundError) and exc.name == "mlflow":
        return "mlflow is not installed: pip install 'compressbench[pipeline]' (or mlflow)"
    text = " ".join(str(exc).split())
    return f"mlflow is installed but does not import: {type(exc).__name__}: {text}"


def open_client(tracking_uri: str | None = None) -> Any:
    """An ``MlflowClient`` on the resolved tracking URI (mlflow imported here, lazily).

    For sqlite stores the folder is created and the store switched to WAL mode first (see
    :func:`_speed_up_sqlite`); system-metrics logging and telemetry default to off.
    """
    uri = resolve_tracking_uri(tracking_uri)
    os.environ.setdefault("MLFLOW_ENABLE_SYSTEM_METRICS_LOGGING", "false")
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # offline by default
    try:
        from mlflow.tracking import MlflowClient
    except ImportError as exc:
        raise TrackingError(mlflow_import_error(exc)) from exc
    db = sqlite_path(uri)
    if db is not None:
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TrackingError(f"cannot create the folder of MLflow store {uri}: {exc}") from exc
        try:
            _speed_up_sqlite(db)
        except sqlite3.Error as exc:
            raise TrackingError(f"cannot open MLflow sqlite store {uri}: {exc}") from exc
    try:
        return MlflowClient(tracking_uri=uri)
    except Exception as exc:
        raise TrackingError(f"cannot open MLflow tracking store {uri}: {exc}") from exc


def _create_experiment(client: Any, uri: str, name: str, artifact_location: str | None) -> Any:
    """Create experiment ``name`` (kind tag set); returns it, or the one another process made."""
    location = artifact_location
    db = sqlite_path(uri)
    if location is None and db is not None:
        # Without this, MLflow puts artifacts under ./mlruns of whatever cwd the process had.
        slug = KEY_BAD_CHARS.sub("_", name).replace("/", "_") or "experiment"
        location = (db.resolve().parent / ARTIFACTS_DIR_NAME / slug).as_uri()
    try:
        client.create_experiment(
            name, artifact_location=location, tags={EXPERIMENT_KIND_TAG: EXPERIMENT_KIND}
        )
    except Exception:
        exp = client.get_experiment_by_name(name)  # created concurrently by another process
        if exp is None:
            raise
        return exp
    exp = client.get_experiment_by_name(name)
    if exp is None:  # pragma: no cover - a store that loses what it just created
        raise TrackingError(f"experiment {name!r} vanished right after its creation in {uri}")
    return exp


def experiment_kind(exp: Any) -> str | None:
    """The experiment's ``mlflow.experimentKind`` tag; None when absent or empty."""
    tags = getattr(exp, "tags", None) or {}
    return tags.get(EXPERIMENT_KIND_TAG) or None


def ensure_experiment_kind(client: Any, exp: Any) -> str:
    """Give ``exp`` the kind tag ``custom_model_development`` unless it has a kind already.

    MLflow 3.0 to 3.8's UI opens an experiment without this tag on its GenAI view (traces,
    empty here) instead of its runs table; from 3.10 the UI's own GenAI / Model training switch
    decides instead (see :data:`UI_RUNS_QUERY`), and the tag still says what the experiment
    holds. Experiments this project creates carry the tag from the start; this tags the ones
    created before (an older ``mlflow.db``, another tool, another user). A kind already set
    (``genai_development`` or any other non-empty value) was chosen by someone, in the UI or by
    code, and is kept. Returns the kind the experiment has now.
    """
    kind = experiment_kind(exp)
    if kind is not None:
        if kind != EXPERIMENT_KIND:
            logger.info(
                "experiment %r keeps its %s tag %r (MLflow 3.0-3.8 open it on that view; "
                "%r opens the runs table)",
                exp.name,
                EXPERIMENT_KIND_TAG,
                kind,
                EXPERIMENT_KIND,
            )
        return kind
    client.set_experiment_tag(exp.experiment_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND)
    logger.info(
        "experiment %r: set %s=%s (a model-training experiment, not a GenAI one)",
        exp.name,
        EXPERIMENT_KIND_TAG,
        EXPERIMENT_KIND,
    )
    return EXPERIMENT_KIND


def experiment_id(client: Any, uri: str, name: str, artifact_location: str | None = None) -> str:
    """Id of experiment ``name`` in ``uri``, created (artifacts beside a sqlite store) if new.

    Every experiment the project logs to goes through here, so every one carries the kind tag
    (:func:`ensure_experiment_kind`): new ones from their creation, older ones from the first
    run logged to them.
    """
    try:
        exp = client.get_experiment_by_name(name)
        if exp is None:
            exp = _create_experiment(client, uri, name, artifact_location)
        if exp.lifecycle_stage == "deleted":
            raise TrackingError(
                f"experiment {name!r} is deleted in {uri}: restore it "
                f"(mlflow experiments restore --experiment-id {exp.experiment_id}) "
                "or choose another experiment name"
            )
        ensure_experiment_kind(client, exp)
        return str(exp.experiment_id)
    except TrackingError:
        raise
    except Exception as exc:
        raise TrackingError(f"cannot get or create experiment {name!r} in {uri}: {exc}") from exc
