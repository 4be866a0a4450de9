"""MLflow logging: one parent run per pipeline invocation, one nested child run per cell.

A *cell* is one point of the experiment grid (dataset, probe, seed, ratio, method, reader).
Each cell becomes a child run (tag ``mlflow.parentRunId``) carrying the cell keys as params,
provenance tags (model id and revision, ``env.*``, git commit, DVC stage, sha256 of inputs and
outputs), float metrics, the scored files as artifacts and, when given, its per-probe table
(``log_table``), its dataset inputs and its real compute start and end times. The parent run
carries the complete software environment as ``environment.json`` and its hash as a tag.
Every run records its owner process (:mod:`.owner`) and data version (:mod:`.data_version`);
opening a parent run marks the experiment's runs whose owner died KILLED (:mod:`.orphans`).

Speed: a cell costs a handful of store calls (``create_run``, one ``log_batch`` per 100
params/tags, one copy per artifact, ``set_terminated``), so a hundred cells log in seconds on a
sqlite store. Errors never pass silently: every failure of the store raises
:class:`TrackingError` naming the tracking URI, the run and the cell; the child run is marked
FAILED on a best-effort basis.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compressbench.readers.image_env import image_identity
from compressbench.tracking.data_version import data_version_tags
from compressbench.tracking.inputs import DatasetFile, dataset_inputs, log_table
from compressbench.tracking.orphans import reap_orphans
from compressbench.tracking.owner import this_process
from compressbench.tracking.provenance import (
    environment_record,
    find_repo_root,
    git_info,
    path_digest,
    software_env,
)
from compressbench.tracking.store import (
    DEFAULT_EXPERIMENT,
    KIND_CELL,
    KIND_PIPELINE,
    KIND_TAG,
    PARENT_TAG,
    TrackingError,
    experiment_id,
    guard,
    open_client,
    resolve_tracking_uri,
    sqlite_path,
    ui_url,
)
from compressbench.tracking.values import (
    as_text,
    cell_run_name,
    check_lengths,
    flatten_params,
    safe_key,
    to_float,
)

__all__ = [
    "ENVIRONMENT_ARTIFACT",
    "ENVIRONMENT_HASH_TAG",
    "PipelineRun",
    "digest_tags",
    "log_cell",
    "provenance_tags",
    "start_pipeline_run",
]

ENVIRONMENT_ARTIFACT = "environment.json"
ENVIRONMENT_HASH_TAG = "env.distributions_sha256"

logger = logging.getLogger(__name__)

# MLflow's per-call limits for log_batch (params and tags share no budget with metrics here).
_MAX_PARAMS_PER_BATCH = 100
_MAX_TAGS_PER_BATCH = 100
_MAX_METRICS_PER_BATCH = 1000
_MAX_ENTITIES_PER_BATCH = 1000


def _now_ms() -> int:
    return int(time.time() * 1000)


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

    ts = timestamp_ms if timestamp_ms is not None else _now_ms()
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


def _label(path: Path, root: Path) -> str:
    try:
        rel = path.resolve().relative_to(root).as_posix()
    except ValueError:
        rel = path.name
    return safe_key(rel)


def digest_tags(kind: str, paths: Iterable[str | Path], root: Path) -> dict[str, str]:
    """``sha256.<kind>.<relpath>`` -> sha256 (folders get :func:`path_digest`)."""
    tags: dict[str, str] = {}
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise TrackingError(f"{kind} {path} does not exist (cannot hash it for provenance)")
        tags[f"sha256.{kind}.{_label(path, root)}"] = path_digest(path)
    return tags


def provenance_tags(repo_root: Path, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env.*`` software environment + ``git.*`` state + MLflow's own source-commit tag +
    the data version (``dvc.lock_sha256``, a stage's ``dvc.dep.*``)."""
    tags = {f"env.{safe_key(k)}": v for k, v in (env or software_env()).items()}
    tags["mlflow.source.name"] = "compressbench"
    tags.update(image_identity())  # image.lock_sha256 / image.base_digest, or host
    git = git_info(repo_root)
    tags.update(git.as_tags())
    if git.commit:
        tags["mlflow.source.git.commit"] = git.commit
    tags.update(data_version_tags(repo_root))
    return tags


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

    @property
    def where(self) -> str:
        return f"pipeline run {self.run_name!r} ({self.run_id}) in {self.tracking_uri}"

    def log_metrics(self, metrics: Mapping[str, Any]) -> None:
        values = {safe_key(k): to_float(k, v, self.where) for k, v in metrics.items()}
        guard(self.where, lambda: _log_batches(self.client, self.run_id, metrics=values))

    def log_artifacts(self, paths: Sequence[str | Path], artifact_path: str | None = None) -> None:
        guard(self.where, lambda: _log_artifacts(self.client, self.run_id, paths, artifact_path))


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

    ``params`` (nested mappings flattened to dotted keys) are logged on the parent, with the
    complete software environment as the artifact ``environment.json`` and its hash as the tag
    ``env.distributions_sha256`` (also on every cell). The run ends FINISHED when the block
    completes, FAILED if it raises (KILLED on KeyboardInterrupt), and the exception propagates.
    Every invocation makes a new parent run, and marks the experiment's orphans KILLED.
    """
    root = find_repo_root(repo_root)
    uri = resolve_tracking_uri(tracking_uri, root)
    client = open_client(uri)
    exp_id = experiment_id(client, uri, experiment, artifact_location)
    environment = environment_record()
    base = provenance_tags(root)
    base[ENVIRONMENT_HASH_TAG] = environment["distributions_sha256"]
    where = f"pipeline run {name!r} in {uri} (experiment {experiment!r})"
    run_tags = dict(base)
    run_tags[KIND_TAG] = KIND_PIPELINE
    if stage:
        run_tags["dvc.stage"] = stage
    run_tags.update({safe_key(k): as_text(v) for k, v in (tags or {}).items()})
    flat = {safe_key(k): v for k, v in flatten_params(params or {}).items()}
    check_lengths(flat, run_tags, where)
    owner = this_process().tags()
    run = guard(where, lambda: client.create_run(exp_id, tags=owner, run_name=name))
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
        guard(where, lambda: _log_batches(client, run_id, params=flat, tags=run_tags))
        guard(where, lambda: client.log_dict(run_id, environment, ENVIRONMENT_ARTIFACT))
        guard(where, lambda: reap_orphans(client, exp_id, replaced_by=run_id))
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
    serve = f" (serve it: mlflow ui --backend-store-uri {uri})" if sqlite_path(uri) else ""
    link = ui_url(uri, exp_id)
    logger.info("MLflow run %r (%d cell runs): %s%s", name, len(handle.cells), link, serve)


# ---------------------------------------------------------------------------- child runs


def _cell_params(
    cell: Mapping[str, Any], params: Mapping[str, Any] | None, where: str
) -> dict[str, str]:
    flat = {safe_key(k): v for k, v in flatten_params(cell).items()}
    for k, v in flatten_params(params or {}).items():
        key = safe_key(k)
        if key in flat and flat[key] != v:
            raise TrackingError(
                f"{where}: param {key!r} given as {flat[key]!r} by the cell and {v!r} by params"
            )
        flat[key] = v
    return flat


def compute_tags(started_at: float | None, ended_at: float | None, where: str) -> dict[str, str]:
    """``compute.started_at`` / ``compute.ended_at`` (UTC ISO 8601) of the work behind a cell;
    the run itself starts and ends with the invocation that logs it (cached answers are older)."""
    if started_at is not None and ended_at is not None and ended_at < started_at:
        raise TrackingError(f"{where}: ended_at {ended_at} is before started_at {started_at}")
    out = {}
    for key, value in (("compute.started_at", started_at), ("compute.ended_at", ended_at)):
        if value is not None:
            moment = datetime.datetime.fromtimestamp(value, tz=datetime.UTC)
            out[key] = moment.isoformat(timespec="milliseconds")
    return out


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
    table: Sequence[Mapping[str, Any]] | None = None,
    table_file: str = "answers.json",
    datasets: Sequence[DatasetFile] = (),
    started_at: float | None = None,
    ended_at: float | None = None,
) -> str:
    """Log one cell as a finished child run of ``parent``; returns the child run id.

    - params: the ``cell`` keys plus ``params`` (nested mappings flattened). A key given in both
      with different values is an error.
    - tags: ``model.id``/``model.revision``, ``env.*`` and ``git.*`` (from the parent),
      ``dvc.stage``, ``sha256.input.<relpath>`` for each of ``inputs`` and
      ``sha256.output.<relpath>`` for each of ``outputs`` (default: the artifacts), then ``tags``.
    - metrics: floats (P1/P2/P3 scores, rates, token counts, wall time ...), logged at step 0
      with the logging time as timestamp.
    - artifacts: files or folders copied into the run (under ``artifact_path`` if given).
    - table: one mapping per row, logged with MLflow's ``log_table`` as ``table_file``.
    - datasets: files logged as MLflow dataset inputs (name, sha256 digest, source path).
    - started_at / ended_at: epoch seconds of the cell's real compute, logged as the tags
      ``compute.started_at`` / ``compute.ended_at`` (see :func:`compute_tags`); the run starts
      and ends when it is logged, in this invocation.

    Logging a cell whose run name was already logged under this parent raises.
    """
    name = run_name or cell_run_name(cell)
    where = f"cell {name!r} of pipeline run {parent.run_id} in {parent.tracking_uri}"
    if name in parent.cells:
        raise TrackingError(f"{where}: already logged as run {parent.cells[name]}")
    flat_params = _cell_params(cell, params, where)
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
    all_tags.update({safe_key(k): as_text(v) for k, v in (tags or {}).items()})
    values = {safe_key(k): to_float(k, v, where) for k, v in (metrics or {}).items()}
    all_tags.update(compute_tags(started_at, ended_at, where))
    check_lengths(flat_params, all_tags, where)
    for p in artifacts:
        if not Path(p).exists():
            raise TrackingError(f"{where}: artifact {p} does not exist")
    dataset_entities = dataset_inputs(datasets, parent.repo_root, where)

    client = parent.client
    start_ms = _now_ms()
    run = guard(
        where,
        lambda: client.create_run(
            parent.experiment_id,
            start_time=start_ms,
            tags={PARENT_TAG: parent.run_id, **this_process().tags()},
            run_name=name,
        ),
    )
    run_id = str(run.info.run_id)
    try:
        guard(
            where,
            lambda: _log_batches(
                client,
                run_id,
                metrics=values,
                params=flat_params,
                tags=all_tags,
                timestamp_ms=max(_now_ms(), start_ms),
            ),
        )
        if dataset_entities:
            guard(where, lambda: client.log_inputs(run_id, datasets=dataset_entities))
        if table is not None:
            guard(where, lambda: log_table(client, run_id, table, table_file))
        if artifacts:
            guard(where, lambda: _log_artifacts(client, run_id, artifacts, artifact_path))
        end_ms = max(_now_ms(), start_ms)
        guard(where, lambda: client.set_terminated(run_id, "FINISHED", end_time=end_ms))
    except BaseException:
        with contextlib.suppress(Exception):
            client.set_terminated(run_id, "FAILED", end_time=_now_ms())
        raise
    parent.cells[name] = run_id
    return run_id
