"""MLflow logging: one parent run per pipeline invocation, one nested child run per cell.

A *cell* is one point of the experiment grid (dataset, probe, seed, ratio, method, reader).
Each cell becomes a child run (tag ``mlflow.parentRunId``) carrying the cell keys as params,
provenance tags (model id and revision, ``env.*``, git commit, DVC stage, sha256 of inputs and
outputs), float metrics and the scored files as artifacts.

Speed: mlflow is imported lazily (importing it costs seconds); a cell costs a handful of store
calls (``create_run``, one ``log_batch`` per 100 params/tags, one copy per artifact,
``set_terminated``), so a hundred cells log in seconds on a sqlite store. The fluent API
(``mlflow.start_run``) is not used: no global active-run state, no system-metrics thread.

Errors never pass silently: every failure of the store raises :class:`TrackingError` naming the
tracking URI, the run and the cell; the child run is marked FAILED on a best-effort basis.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compressbench.tracking.provenance import (
    find_repo_root,
    git_info,
    path_digest,
    software_env,
)

__all__ = [
    "CELL_KEYS",
    "DEFAULT_EXPERIMENT",
    "CellRun",
    "PipelineRun",
    "TrackingError",
    "cell_run_name",
    "default_tracking_uri",
    "digest_tags",
    "flatten_params",
    "log_cell",
    "open_client",
    "provenance_tags",
    "read_cells",
    "read_pipeline_runs",
    "resolve_tracking_uri",
    "start_pipeline_run",
]

DEFAULT_EXPERIMENT = "compressbench-tpbench"
DEFAULT_DB_NAME = "mlflow.db"
ARTIFACTS_DIR_NAME = "mlartifacts"

#: The usual keys of a TPBench cell, in run-name order (other keys are allowed and follow).
CELL_KEYS: tuple[str, ...] = ("dataset", "probe", "seed", "ratio", "method", "reader")

KIND_TAG = "compressbench.kind"
KIND_PIPELINE = "pipeline"
KIND_CELL = "cell"
PARENT_TAG = "mlflow.parentRunId"
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
EXPERIMENT_KIND = "custom_model_development"

# MLflow's per-call limits for log_batch (params and tags share no budget with metrics here).
_MAX_PARAMS_PER_BATCH = 100
_MAX_TAGS_PER_BATCH = 100
_MAX_METRICS_PER_BATCH = 1000
_MAX_ENTITIES_PER_BATCH = 1000
_MAX_PARAM_VALUE = 6000
_MAX_TAG_VALUE = 8000
_KEY_BAD_CHARS = re.compile(r"[^\w.\-/ ]")


class TrackingError(RuntimeError):
    """MLflow logging failed; the message names the tracking URI, run and cell."""


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


def _sqlite_path(uri: str) -> Path | None:
    if not uri.startswith("sqlite:///"):
        return None
    raw = uri[len("sqlite:///") :].split("?", 1)[0]
    return Path(raw) if raw and raw != ":memory:" else None


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
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise TrackingError(
            "mlflow is not installed: pip install 'compressbench[pipeline]' (or pip install mlflow)"
        ) from exc
    db = _sqlite_path(uri)
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


def _experiment_id(client: Any, uri: str, name: str, artifact_location: str | None) -> str:
    try:
        exp = client.get_experiment_by_name(name)
        if exp is not None:
            if exp.lifecycle_stage == "deleted":
                raise TrackingError(
                    f"experiment {name!r} is deleted in {uri}: restore it "
                    f"(mlflow experiments restore --experiment-id {exp.experiment_id}) "
                    "or choose another experiment name"
                )
            return str(exp.experiment_id)
        location = artifact_location
        db = _sqlite_path(uri)
        if location is None and db is not None:
            # Without this, MLflow puts artifacts under ./mlruns of whatever cwd the process had.
            slug = _KEY_BAD_CHARS.sub("_", name).replace("/", "_") or "experiment"
            location = (db.resolve().parent / ARTIFACTS_DIR_NAME / slug).as_uri()
        try:
            # The kind tag makes MLflow 3's UI open the experiment on its runs table (model
            # training view) instead of the GenAI traces overview.
            return str(
                client.create_experiment(
                    name, artifact_location=location, tags={EXPERIMENT_KIND_TAG: EXPERIMENT_KIND}
                )
            )
        except Exception:
            exp = client.get_experiment_by_name(name)  # created concurrently by another process
            if exp is None:
                raise
            return str(exp.experiment_id)
    except TrackingError:
        raise
    except Exception as exc:
        raise TrackingError(f"cannot get or create experiment {name!r} in {uri}: {exc}") from exc


# ---------------------------------------------------------------------------- value helpers


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Path):
        return value.as_posix()
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def flatten_params(params: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested mappings become dotted keys; leaves become strings (JSON for non-strings)."""
    flat: dict[str, str] = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten_params(value, prefix=f"{name}."))
        else:
            flat[name] = _as_text(value)
    return flat


def cell_run_name(cell: Mapping[str, Any]) -> str:
    """Compact run name: string values bare, others as ``key=value``, usual keys first.

    ``{"dataset": "sgd", "probe": "P2", "seed": 0, "ratio": 0.5, "method": "recency",
    "reader": "smollm2"}`` -> ``sgd/P2/seed=0/ratio=0.5/recency/smollm2``.
    """
    keys = [k for k in CELL_KEYS if k in cell] + [k for k in cell if k not in CELL_KEYS]
    parts = []
    for k in keys:
        v = cell[k]
        parts.append(str(v) if isinstance(v, str) else f"{k}={_as_text(v)}")
    return "/".join(parts)


def _safe_key(key: str) -> str:
    """Make a string usable as an MLflow tag/param/metric key (chars and path-normal form)."""
    cleaned = _KEY_BAD_CHARS.sub("_", key).strip("/ ")
    parts = [p for p in cleaned.split("/") if p not in {"", ".", ".."}]
    return "/".join(parts) or "_"


def _to_float(key: str, value: Any, where: str) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise TrackingError(f"{where}: metric {key!r} is not a number: {value!r}") from exc


def _check_lengths(params: Mapping[str, str], tags: Mapping[str, str], where: str) -> None:
    for k, v in params.items():
        if len(v) > _MAX_PARAM_VALUE:
            raise TrackingError(
                f"{where}: param {k!r} is {len(v)} chars, over MLflow's {_MAX_PARAM_VALUE}; "
                "log it as an artifact instead"
            )
    for k, v in tags.items():
        if len(v) > _MAX_TAG_VALUE:
            raise TrackingError(
                f"{where}: tag {k!r} is {len(v)} chars, over MLflow's {_MAX_TAG_VALUE}"
            )


def _label(path: Path, root: Path) -> str:
    try:
        rel = path.resolve().relative_to(root).as_posix()
    except ValueError:
        rel = path.name
    return _safe_key(rel)


def digest_tags(kind: str, paths: Iterable[str | Path], root: Path) -> dict[str, str]:
    """``sha256.<kind>.<relpath>`` -> sha256 (folders get :func:`path_digest`)."""
    tags: dict[str, str] = {}
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise TrackingError(f"{kind} {path} does not exist (cannot hash it for provenance)")
        tags[f"sha256.{kind}.{_label(path, root)}"] = path_digest(path)
    return tags


def _log_batches(
    client: Any,
    run_id: str,
    *,
    metrics: Mapping[str, float] | None = None,
    params: Mapping[str, str] | None = None,
    tags: Mapping[str, str] | None = None,
    timestamp_ms: int | None = None,
) -> None:
    from mlflow.entities import Metric, Param, RunTag

    ts = timestamp_ms if timestamp_ms is not None else int(time.time() * 1000)
    m_items = [Metric(k, v, ts, 0) for k, v in (metrics or {}).items()]
    p_items = [Param(k, v) for k, v in (params or {}).items()]
    t_items = [RunTag(k, v) for k, v in (tags or {}).items()]
    while m_items or p_items or t_items:
        p_chunk, p_items = p_items[:_MAX_PARAMS_PER_BATCH], p_items[_MAX_PARAMS_PER_BATCH:]
        t_chunk, t_items = t_items[:_MAX_TAGS_PER_BATCH], t_items[_MAX_TAGS_PER_BATCH:]
        room = _MAX_ENTITIES_PER_BATCH - len(p_chunk) - len(t_chunk)
        n_m = min(room, _MAX_METRICS_PER_BATCH)
        m_chunk, m_items = m_items[:n_m], m_items[n_m:]
        client.log_batch(run_id, metrics=m_chunk, params=p_chunk, tags=t_chunk)


def _log_artifacts(
    client: Any, run_id: str, paths: Sequence[str | Path], artifact_path: str | None
) -> None:
    seen: dict[str, Path] = {}
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise TrackingError(f"artifact {path} does not exist")
        if path.name in seen:
            raise TrackingError(
                f"artifacts {seen[path.name]} and {path} share the name {path.name!r} and would "
                "overwrite each other; log them under different artifact paths"
            )
        seen[path.name] = path
        if path.is_dir():
            sub = f"{artifact_path}/{path.name}" if artifact_path else path.name
            client.log_artifacts(run_id, str(path), sub)
        else:
            client.log_artifact(run_id, str(path), artifact_path)


# ---------------------------------------------------------------------------- parent run


@dataclass
class PipelineRun:
    """Handle on the parent run of one pipeline invocation (from :func:`start_pipeline_run`)."""

    client: Any
    tracking_uri: str
    experiment_id: str
    experiment_name: str
    run_id: str
    run_name: str
    repo_root: Path
    base_tags: dict[str, str]
    cells: dict[str, str] = field(default_factory=dict)  # cell run name -> child run id

    def log_metrics(self, metrics: Mapping[str, Any]) -> None:
        where = f"pipeline run {self.run_name!r} ({self.run_id}) in {self.tracking_uri}"
        values = {_safe_key(k): _to_float(k, v, where) for k, v in metrics.items()}
        _guard(where, lambda: _log_batches(self.client, self.run_id, metrics=values))

    def log_params(self, params: Mapping[str, Any]) -> None:
        where = f"pipeline run {self.run_name!r} ({self.run_id}) in {self.tracking_uri}"
        flat = {_safe_key(k): v for k, v in flatten_params(params).items()}
        _check_lengths(flat, {}, where)
        _guard(where, lambda: _log_batches(self.client, self.run_id, params=flat))

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        where = f"pipeline run {self.run_name!r} ({self.run_id}) in {self.tracking_uri}"
        flat = {_safe_key(k): _as_text(v) for k, v in tags.items()}
        _check_lengths({}, flat, where)
        _guard(where, lambda: _log_batches(self.client, self.run_id, tags=flat))

    def log_artifacts(self, paths: Sequence[str | Path], artifact_path: str | None = None) -> None:
        where = f"pipeline run {self.run_name!r} ({self.run_id}) in {self.tracking_uri}"
        _guard(where, lambda: _log_artifacts(self.client, self.run_id, paths, artifact_path))


def _guard(where: str, fn: Any) -> Any:
    try:
        return fn()
    except TrackingError:
        raise
    except Exception as exc:
        raise TrackingError(
            f"MLflow logging failed for {where}: {type(exc).__name__}: {exc}"
        ) from exc


def provenance_tags(repo_root: Path, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env.*`` software environment + ``git.*`` state + MLflow's own source-commit tag."""
    tags = {f"env.{_safe_key(k)}": v for k, v in (env or software_env()).items()}
    tags["mlflow.source.name"] = "compressbench"
    git = git_info(repo_root)
    tags.update(git.as_tags())
    if git.commit:
        tags["mlflow.source.git.commit"] = git.commit
    return tags


@contextlib.contextmanager
def start_pipeline_run(
    name: str,
    params: Mapping[str, Any] | None = None,
    *,
    tracking_uri: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    tags: Mapping[str, Any] | None = None,
    stage: str | None = None,
    repo_root: str | Path | None = None,
    artifact_location: str | None = None,
) -> Iterator[PipelineRun]:
    """Open the parent run of one pipeline invocation; finish it on exit.

    ``params`` (nested mappings flattened to dotted keys) are logged on the parent. The run ends
    FINISHED when the block completes, FAILED if it raises (KILLED on KeyboardInterrupt), and
    the exception propagates. Every invocation makes a new parent run.
    """
    root = find_repo_root(repo_root)
    uri = resolve_tracking_uri(tracking_uri, root)
    client = open_client(uri)
    exp_id = _experiment_id(client, uri, experiment, artifact_location)
    base = provenance_tags(root)
    where = f"pipeline run {name!r} in {uri} (experiment {experiment!r})"
    run_tags = dict(base)
    run_tags[KIND_TAG] = KIND_PIPELINE
    if stage:
        run_tags["dvc.stage"] = stage
    run_tags.update({_safe_key(k): _as_text(v) for k, v in (tags or {}).items()})
    flat = {_safe_key(k): v for k, v in flatten_params(params or {}).items()}
    _check_lengths(flat, run_tags, where)
    run = _guard(where, lambda: client.create_run(exp_id, tags={}, run_name=name))
    run_id = str(run.info.run_id)
    handle = PipelineRun(
        client=client,
        tracking_uri=uri,
        experiment_id=exp_id,
        experiment_name=experiment,
        run_id=run_id,
        run_name=name,
        repo_root=root,
        base_tags=base,
    )
    status = "FAILED"
    try:
        _guard(where, lambda: _log_batches(client, run_id, params=flat, tags=run_tags))
        yield handle
        status = "FINISHED"
    except KeyboardInterrupt:
        status = "KILLED"
        raise
    finally:
        try:
            client.set_terminated(run_id, status)
        except Exception as exc:
            if status == "FINISHED":
                raise TrackingError(f"cannot finish {where} ({run_id}): {exc}") from exc


# ---------------------------------------------------------------------------- child runs


def log_cell(
    parent: PipelineRun,
    cell: Mapping[str, Any],
    params: Mapping[str, Any] | None = None,
    tags: Mapping[str, Any] | None = None,
    metrics: Mapping[str, Any] | None = None,
    artifacts: Sequence[str | Path] = (),
    *,
    model_id: str | None = None,
    model_revision: str | None = None,
    stage: str | None = None,
    inputs: Sequence[str | Path] = (),
    outputs: Sequence[str | Path] | None = None,
    run_name: str | None = None,
    artifact_path: str | None = None,
) -> str:
    """Log one cell as a finished child run of ``parent``; returns the child run id.

    - params: the ``cell`` keys plus ``params`` (nested mappings flattened). A key given in both
      with different values is an error.
    - tags: ``model.id``/``model.revision``, ``env.*`` and ``git.*`` (from the parent),
      ``dvc.stage``, ``sha256.input.<relpath>`` for each of ``inputs`` and
      ``sha256.output.<relpath>`` for each of ``outputs`` (default: the artifacts), then ``tags``.
    - metrics: floats (P1/P2/P3 scores, rates, token counts, wall time ...), logged at step 0.
    - artifacts: files or folders copied into the run (under ``artifact_path`` if given).

    Logging a cell whose run name was already logged under this parent raises.
    """
    name = run_name or cell_run_name(cell)
    where = f"cell {name!r} of pipeline run {parent.run_id} in {parent.tracking_uri}"
    if name in parent.cells:
        raise TrackingError(f"{where}: already logged as run {parent.cells[name]}")

    flat_params = {_safe_key(k): v for k, v in flatten_params(cell).items()}
    for k, v in flatten_params(params or {}).items():
        key = _safe_key(k)
        if key in flat_params and flat_params[key] != v:
            raise TrackingError(
                f"{where}: param {key!r} given as {flat_params[key]!r} by the cell and {v!r} "
                "by params"
            )
        flat_params[key] = v

    all_tags: dict[str, str] = dict(parent.base_tags)
    all_tags[KIND_TAG] = KIND_CELL
    if model_id is not None:
        all_tags["model.id"] = model_id
    if model_revision is not None:
        all_tags["model.revision"] = model_revision
    if stage is not None:
        all_tags["dvc.stage"] = stage
    all_tags.update(digest_tags("input", inputs, parent.repo_root))
    all_tags.update(
        digest_tags("output", artifacts if outputs is None else outputs, parent.repo_root)
    )
    all_tags.update({_safe_key(k): _as_text(v) for k, v in (tags or {}).items()})
    values = {_safe_key(k): _to_float(k, v, where) for k, v in (metrics or {}).items()}
    _check_lengths(flat_params, all_tags, where)
    for p in artifacts:
        if not Path(p).exists():
            raise TrackingError(f"{where}: artifact {p} does not exist")

    run = _guard(
        where,
        lambda: parent.client.create_run(
            parent.experiment_id, tags={PARENT_TAG: parent.run_id}, run_name=name
        ),
    )
    run_id = str(run.info.run_id)
    try:
        _guard(
            where,
            lambda: _log_batches(
                parent.client, run_id, metrics=values, params=flat_params, tags=all_tags
            ),
        )
        if artifacts:
            _guard(where, lambda: _log_artifacts(parent.client, run_id, artifacts, artifact_path))
        _guard(where, lambda: parent.client.set_terminated(run_id, "FINISHED"))
    except BaseException:
        with contextlib.suppress(Exception):
            parent.client.set_terminated(run_id, "FAILED")
        raise
    parent.cells[name] = run_id
    return run_id


# ---------------------------------------------------------------------------- reading back


@dataclass(frozen=True)
class CellRun:
    """A run as read back from the store (child cell or pipeline parent)."""

    run_id: str
    run_name: str
    parent_run_id: str | None
    status: str
    params: dict[str, str]
    tags: dict[str, str]
    metrics: dict[str, float]
    artifacts: tuple[str, ...] = ()


def _list_artifacts(client: Any, run_id: str, path: str | None = None) -> list[str]:
    found: list[str] = []
    for info in client.list_artifacts(run_id, path):
        if info.is_dir:
            found.extend(_list_artifacts(client, run_id, info.path))
        else:
            found.append(info.path)
    return sorted(found)


def _search(
    tracking_uri: str | None,
    experiment: str,
    kind: str,
    parent_run_id: str | None,
    with_artifacts: bool,
) -> list[CellRun]:
    uri = resolve_tracking_uri(tracking_uri)
    client = open_client(uri)
    where = f"experiment {experiment!r} in {uri}"
    exp = _guard(where, lambda: client.get_experiment_by_name(experiment))
    if exp is None:
        raise TrackingError(f"no experiment {experiment!r} in {uri}")
    filt = f"tags.`{KIND_TAG}` = '{kind}'"
    if parent_run_id is not None:
        filt += f" and tags.`{PARENT_TAG}` = '{parent_run_id}'"
    runs: list[Any] = []
    token: str | None = None
    while True:
        page = _guard(
            where,
            lambda tok=token: client.search_runs(
                [exp.experiment_id],
                filter_string=filt,
                max_results=1000,
                order_by=["attributes.start_time ASC"],
                page_token=tok,
            ),
        )
        runs.extend(page)
        token = page.token
        if not token:
            break
    out = []
    for r in runs:
        tags = dict(r.data.tags)
        out.append(
            CellRun(
                run_id=r.info.run_id,
                run_name=r.info.run_name or tags.get("mlflow.runName", ""),
                parent_run_id=tags.get(PARENT_TAG),
                status=str(r.info.status),
                params=dict(r.data.params),
                tags=tags,
                metrics={k: float(v) for k, v in r.data.metrics.items()},
                artifacts=tuple(_list_artifacts(client, r.info.run_id)) if with_artifacts else (),
            )
        )
    return out


def read_cells(
    tracking_uri: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    *,
    parent_run_id: str | None = None,
    with_artifacts: bool = False,
) -> list[CellRun]:
    """Child (cell) runs of ``experiment``, oldest first, optionally of one parent only.

    ``tracking_uri`` defaults as in :func:`resolve_tracking_uri`. ``with_artifacts`` lists each
    run's artifact paths (one store call per run and folder).
    """
    return _search(tracking_uri, experiment, KIND_CELL, parent_run_id, with_artifacts)


def read_pipeline_runs(
    tracking_uri: str | None = None, experiment: str = DEFAULT_EXPERIMENT
) -> list[CellRun]:
    """Parent (pipeline invocation) runs of ``experiment``, oldest first."""
    return _search(tracking_uri, experiment, KIND_PIPELINE, None, False)
