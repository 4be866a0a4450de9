"""Reading runs back from an MLflow store: pipeline (parent) runs, cell runs, cell tables."""

from __future__ import annotations

import functools
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.tracking.store import (
    DEFAULT_EXPERIMENT,
    KIND_CELL,
    KIND_PIPELINE,
    KIND_TAG,
    PARENT_TAG,
    TrackingError,
    guard,
    open_client,
    resolve_tracking_uri,
)

__all__ = [
    "LOGGED_ARTIFACTS_TAG",
    "CellRun",
    "DatasetRef",
    "latest_cells",
    "logged_tables",
    "read_cell_table",
    "read_cells",
    "read_pipeline_runs",
]

#: MLflow's run tag listing what ``log_table`` logged: JSON ``[{"path": ..., "type": "table"}]``.
LOGGED_ARTIFACTS_TAG = "mlflow.loggedArtifacts"


@dataclass(frozen=True)
class DatasetRef:
    """A dataset input of a run as recorded: name, digest, source (JSON) and input tags."""

    name: str
    digest: str
    source_type: str
    source: str
    tags: dict[str, str]


@dataclass(frozen=True)
class CellRun:
    """A run as read back from the store (child cell or pipeline parent).

    ``start_time`` / ``end_time`` are epoch milliseconds (``end_time`` None while running).
    """

    run_id: str
    run_name: str
    parent_run_id: str | None
    status: str
    params: dict[str, str]
    tags: dict[str, str]
    metrics: dict[str, float]
    artifacts: tuple[str, ...] = ()
    start_time: int | None = None
    end_time: int | None = None
    datasets: tuple[DatasetRef, ...] = ()


def _list_artifacts(client: Any, run_id: str, path: str | None = None) -> list[str]:
    found: list[str] = []
    for info in client.list_artifacts(run_id, path):
        if info.is_dir:
            found.extend(_list_artifacts(client, run_id, info.path))
        else:
            found.append(info.path)
    return sorted(found)


def _datasets(run: Any) -> tuple[DatasetRef, ...]:
    inputs = getattr(run, "inputs", None)
    refs = []
    for di in getattr(inputs, "dataset_inputs", None) or ():
        d = di.dataset
        refs.append(
            DatasetRef(
                name=d.name,
                digest=d.digest,
                source_type=d.source_type,
                source=d.source,
                tags={t.key: t.value for t in di.tags},
            )
        )
    return tuple(refs)


def _to_cell_run(client: Any, r: Any, with_artifacts: bool) -> CellRun:
    tags = dict(r.data.tags)
    return CellRun(
        run_id=r.info.run_id,
        run_name=r.info.run_name or tags.get("mlflow.runName", ""),
        parent_run_id=tags.get(PARENT_TAG),
        status=str(r.info.status),
        params=dict(r.data.params),
        tags=tags,
        metrics={k: float(v) for k, v in r.data.metrics.items()},
        artifacts=tuple(_list_artifacts(client, r.info.run_id)) if with_artifacts else (),
        start_time=r.info.start_time,
        end_time=r.info.end_time,
        datasets=_datasets(r),
    )


def _search(
    tracking_uri: str | None,
    experiment: str,
    kind: str,
    parent_run_id: str | None,
    with_artifacts: bool,
    status: str | None = None,
) -> list[CellRun]:
    uri = resolve_tracking_uri(tracking_uri)
    client = open_client(uri)
    where = f"experiment {experiment!r} in {uri}"
    exp = guard(where, lambda: client.get_experiment_by_name(experiment))
    if exp is None:
        raise TrackingError(f"no experiment {experiment!r} in {uri}")
    filt = f"tags.`{KIND_TAG}` = '{kind}'"
    if parent_run_id is not None:
        filt += f" and tags.`{PARENT_TAG}` = '{parent_run_id}'"
    if status is not None:
        filt += f" and attributes.status = '{status}'"
    runs: list[Any] = []
    token: str | None = None

    def page_of(tok: str | None) -> Any:
        return client.search_runs(
            [exp.experiment_id],
            filter_string=filt,
            max_results=1000,
            order_by=["attributes.start_time ASC"],
            page_token=tok,
        )

    while True:
        page = guard(where, functools.partial(page_of, token))
        runs.extend(page)
        token = page.token
        if not token:
            break
    return [_to_cell_run(client, r, with_artifacts) for r in runs]


def read_cells(
    tracking_uri: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    *,
    parent_run_id: str | None = None,
    with_artifacts: bool = False,
    status: str | None = None,
) -> list[CellRun]:
    """Child (cell) runs of ``experiment``, oldest first, optionally of one parent only.

    ``tracking_uri`` defaults as in :func:`resolve_tracking_uri`. ``with_artifacts`` lists each
    run's artifact paths (one store call per run and folder). ``status`` (e.g. ``FINISHED``)
    keeps only runs in that state.
    """
    return _search(tracking_uri, experiment, KIND_CELL, parent_run_id, with_artifacts, status)


def read_pipeline_runs(
    tracking_uri: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    *,
    status: str | None = None,
) -> list[CellRun]:
    """Parent (pipeline invocation) runs of ``experiment``, oldest first (only those in state
    ``status`` when given)."""
    return _search(tracking_uri, experiment, KIND_PIPELINE, None, False, status)


def logged_tables(run: CellRun) -> list[str]:
    """Artifact paths of the tables ``run`` logged with ``log_table`` (the UI shows these as
    tables), read from MLflow's ``mlflow.loggedArtifacts`` tag; [] when none or unreadable."""
    try:
        entries = json.loads(run.tags.get(LOGGED_ARTIFACTS_TAG) or "[]")
    except ValueError:
        return []
    if not isinstance(entries, list):
        return []
    return [
        str(e["path"])
        for e in entries
        if isinstance(e, dict) and e.get("type") == "table" and e.get("path")
    ]


def latest_cells(
    tracking_uri: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    *,
    keep: Callable[[CellRun], bool] | None = None,
) -> tuple[CellRun | None, list[CellRun]]:
    """The newest pipeline run that has cell runs, and those cells (oldest first).

    Every DVC stage invocation that logs opens its own pipeline run, and some log no cells
    (the report stage's run comes last and has none), so the newest pipeline run is often not
    the one to look in. Only cells for which ``keep`` is true count (all when None). Groups of
    cells rank by: their parent is a known pipeline run, that parent FINISHED, one of the cells
    FINISHED, then the newest parent start (the newest cell start for an unknown parent).
    Deleted runs are not seen (MLflow's searches skip them). Returns ``(None, [])`` when no cell
    counts; the parent is None for cells whose pipeline run is missing (deleted, or logged by
    other code).
    """
    uri = resolve_tracking_uri(tracking_uri)
    parents = {p.run_id: p for p in read_pipeline_runs(uri, experiment)}
    groups: dict[str | None, list[CellRun]] = {}
    for cell in read_cells(uri, experiment):
        if keep is None or keep(cell):
            groups.setdefault(cell.parent_run_id, []).append(cell)
    if not groups:
        return None, []

    def rank(item: tuple[str | None, list[CellRun]]) -> tuple[bool, bool, bool, int]:
        parent = parents.get(item[0]) if item[0] is not None else None
        started = parent.start_time if parent is not None else None
        if started is None:
            started = max((c.start_time or 0) for c in item[1])
        return (
            parent is not None,
            parent is not None and parent.status == "FINISHED",
            any(c.status == "FINISHED" for c in item[1]),
            started or 0,
        )

    parent_id, cells = max(groups.items(), key=rank)
    return (parents.get(parent_id) if parent_id is not None else None), cells


def read_cell_table(
    run_id: str, tracking_uri: str | None = None, artifact_file: str = "answers.json"
) -> Any:
    """The table a cell run logged with ``log_table``, as a pandas DataFrame.

    (``MlflowClient.load_table`` searches runs through the global tracking URI, not the
    client's, so the artifact is downloaded and read here: MLflow writes it as pandas
    ``split`` JSON, ``{"columns": [...], "data": [[...], ...]}``.)
    """
    import pandas as pd

    uri = resolve_tracking_uri(tracking_uri)
    client = open_client(uri)
    where = f"table {artifact_file!r} of run {run_id} in {uri}"
    with tempfile.TemporaryDirectory(prefix="cb-table-") as tmp:
        local = guard(where, lambda: client.download_artifacts(run_id, artifact_file, tmp))
        table = json.loads(Path(local).read_text(encoding="utf-8"))
    return pd.DataFrame(table["data"], columns=table["columns"])
