"""What a user opens in the MLflow UI: every experiment the project logs to carries the kind tag,
the logged link opens the runs table, and the UI check finds the cells to look at when the newest
pipeline run (the report stage's) has none. Against real sqlite MLflow stores, no mocks."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from compressbench.tracking import (
    latest_cells,
    log_cell,
    logged_tables,
    open_client,
    read_pipeline_runs,
    start_pipeline_run,
)
from compressbench.tracking.store import (
    EXPERIMENT_KIND,
    EXPERIMENT_KIND_TAG,
    UI_DEFAULT_BASE,
    UI_RUNS_QUERY,
    ui_url,
)
from support.paths import REPO_ROOT

pytest.importorskip("mlflow")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SCRIPT = REPO_ROOT / "scripts" / "check_mlflow_ui.py"
EXPERIMENT = "ui-check"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    root = tmp_path / "repo"
    root.mkdir()
    (root / "dvc.yaml").write_text("stages: {}\n")  # the repo-root marker
    return root


@pytest.fixture
def uri(store_uri: str) -> str:
    """A fresh copy of the empty store (tracking/conftest.py)."""
    return store_uri


def _kind(uri: str, name: str) -> str | None:
    exp = open_client(uri).get_experiment_by_name(name)
    assert exp is not None
    return exp.tags.get(EXPERIMENT_KIND_TAG)


@pytest.mark.parametrize("name", ["compressbench-tpbench", "compressbench-keepbench"])
def test_new_experiment_carries_the_kind(repo: Path, uri: str, name: str) -> None:
    with start_pipeline_run("p", tracking_uri=uri, experiment=name, repo_root=repo):
        pass
    assert _kind(uri, name) == EXPERIMENT_KIND


def test_existing_experiment_without_the_kind_gets_it(repo: Path, uri: str) -> None:
    """An experiment made before (an older store, another tool) is tagged by the next run."""
    client = open_client(uri)
    exp_id = client.create_experiment(EXPERIMENT, tags={"team": "nlp"})
    old = client.create_run(exp_id, run_name="older run")
    client.set_terminated(old.info.run_id)
    assert _kind(uri, EXPERIMENT) is None

    with start_pipeline_run("p", tracking_uri=uri, experiment=EXPERIMENT, repo_root=repo) as run:
        assert run.experiment_id == exp_id
    exp = open_client(uri).get_experiment(exp_id)
    assert exp.tags[EXPERIMENT_KIND_TAG] == EXPERIMENT_KIND
    assert exp.tags["team"] == "nlp"  # other tags untouched
    assert len(open_client(uri).search_runs([exp_id])) == 2


@pytest.mark.parametrize("kind", ["genai_development", "finetuning"])
def test_a_kind_set_deliberately_is_kept(repo: Path, uri: str, kind: str) -> None:
    open_client(uri).create_experiment(EXPERIMENT, tags={EXPERIMENT_KIND_TAG: kind})
    with start_pipeline_run("p", tracking_uri=uri, experiment=EXPERIMENT, repo_root=repo):
        pass
    assert _kind(uri, EXPERIMENT) == kind


def test_ui_link_opens_the_runs_table() -> None:
    sqlite = "sqlite:////x/mlflow.db"
    assert ui_url(sqlite, "7") == f"{UI_DEFAULT_BASE}/#/experiments/7?{UI_RUNS_QUERY}"
    assert UI_RUNS_QUERY == "workflowType=machine_learning"
    server = "http://mlflow.example:5001/"
    assert ui_url(server, "3", "abc") == (
        f"http://mlflow.example:5001/#/experiments/3/runs/abc?{UI_RUNS_QUERY}"
    )
    assert ui_url(sqlite, "1", base="http://127.0.0.1:9/").startswith("http://127.0.0.1:9/#/")


def test_each_pipeline_run_logs_its_ui_link(
    repo: Path, uri: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="compressbench.tracking")
    with start_pipeline_run("tpbench", tracking_uri=uri, experiment=EXPERIMENT, repo_root=repo):
        pass
    exp = open_client(uri).get_experiment_by_name(EXPERIMENT)
    (line,) = [r.getMessage() for r in caplog.records if "MLflow run 'tpbench'" in r.getMessage()]
    assert ui_url(uri, exp.experiment_id) in line
    assert f"mlflow ui --backend-store-uri {uri}" in line


# ---------------------------------------------------------------------------- the UI check


def _table(i: int) -> list[dict[str, object]]:
    return [{"probe_id": f"sgd:d{i}:0", "prediction": "Paris", "gold": "Paris", "score": 1.0}]


def _stage_runs(repo: Path, uri: str) -> dict[str, str]:
    """What one ``dvc repro`` logs: the metrics stage (cells with the answers table), a
    retention stage (cells, no table), then the report stage (no cells), newest last."""
    ids: dict[str, str] = {}
    opts: dict[str, Any] = {"tracking_uri": uri, "experiment": EXPERIMENT, "repo_root": repo}
    cell = {"dataset": "sgd", "ratio": 0.5, "method": "recency"}
    with start_pipeline_run("tpbench", stage="metrics", **opts) as parent:
        for i, probe in enumerate(("P1", "P2")):
            log_cell(parent, {**cell, "probe": probe, "seed": 0}, table=_table(i))
        ids["metrics"] = parent.run_id
    with start_pipeline_run("retention sgd", stage="retention@sgd", **opts) as parent:
        log_cell(parent, {**cell, "probe": "retention", "seed": "-"}, metrics={"n": 2})
        ids["retention"] = parent.run_id
    with start_pipeline_run("tpbench report", stage="report", **opts) as parent:
        ids["report"] = parent.run_id
    return ids


def _check_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_mlflow_ui", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_latest_cells_skip_a_newer_pipeline_run_without_cells(repo: Path, uri: str) -> None:
    ids = _stage_runs(repo, uri)
    assert read_pipeline_runs(uri, EXPERIMENT)[-1].run_id == ids["report"]  # newest: no cells

    parent, cells = latest_cells(uri, EXPERIMENT)
    assert parent is not None and parent.run_id == ids["retention"]
    assert [c.params["probe"] for c in cells] == ["retention"]

    parent, cells = latest_cells(uri, EXPERIMENT, keep=lambda c: "answers.json" in logged_tables(c))
    assert parent is not None and parent.run_id == ids["metrics"]
    assert [c.params["probe"] for c in cells] == ["P1", "P2"]
    assert all(c.status == "FINISHED" for c in cells)

    assert latest_cells(uri, EXPERIMENT, keep=lambda c: False) == (None, [])


def test_latest_cells_prefer_a_finished_run_and_skip_deleted_ones(repo: Path, uri: str) -> None:
    ids = _stage_runs(repo, uri)
    has_table = lambda c: bool(logged_tables(c))  # noqa: E731
    opts: dict[str, Any] = {"tracking_uri": uri, "experiment": EXPERIMENT, "repo_root": repo}
    crash = pytest.raises(RuntimeError, match="crash")  # a newer metrics run that failed
    with crash, start_pipeline_run("tpbench", stage="metrics", **opts) as failed:
        log_cell(failed, {"dataset": "sgd", "probe": "P1", "seed": 1}, table=_table(5))
        raise RuntimeError("crash")
    parent, _ = latest_cells(uri, EXPERIMENT, keep=has_table)
    assert parent is not None and parent.run_id == ids["metrics"]

    client = open_client(uri)
    for cell in client.search_runs(
        [client.get_experiment_by_name(EXPERIMENT).experiment_id],
        filter_string=f"tags.`mlflow.parentRunId` = '{ids['metrics']}'",
    ):
        client.delete_run(cell.info.run_id)
    parent, cells = latest_cells(uri, EXPERIMENT, keep=has_table)
    assert parent is not None and parent.run_id == failed.run_id  # the only cells left
    assert [c.params["seed"] for c in cells] == ["1"]


def test_check_script_finds_the_cells_when_the_newest_run_is_the_report(
    repo: Path, uri: str
) -> None:
    """The store of a complete pipeline run: the check script's expectations come from the
    metrics stage's run, not from the newest (report) run, and cover every pipeline run."""
    ids = _stage_runs(repo, uri)
    script = _check_script()
    seen = script.expected_runs(uri, EXPERIMENT, 60, None, None)
    assert seen["home"].run_id == ids["metrics"]
    assert [c.run_name for c in seen["cells"]] == [
        "recency · sgd/P1/seed=0/r=0.5",
        "recency · sgd/P2/seed=0/r=0.5",
    ]
    assert seen["parents"] == ["tpbench report", "retention sgd", "tpbench"]
    assert seen["kind"] == EXPERIMENT_KIND
    assert seen["n_runs"] == 6

    table_file, columns, first_row = script.expected_table(uri, seen["cells"][0], None)
    assert table_file == "answers.json"
    assert columns == ["probe_id", "prediction", "gold", "score"]
    assert first_row == ["sgd:d0:0", "Paris", "Paris", "1.0"]

    assert seen["cell"].run_name == "recency · sgd/P1/seed=0/r=0.5"

    p2 = script.expected_runs(uri, EXPERIMENT, 60, "recency · sgd/P2/seed=0/r=0.5", None)
    assert p2["cell"].params["probe"] == "P2"
    assert [c.params["probe"] for c in p2["cells"]] == ["P2", "P1"]  # all its run's cells
    assert p2["home"].run_id == ids["metrics"]
    assert script.expected_runs(uri, EXPERIMENT, 60, "nope", None)["cell"] is None
    assert script.expected_runs(uri, EXPERIMENT, 60, None, "cases.json")["cell"] is None


def test_page_tab_reads_the_experiment_tab() -> None:
    page_tab = _check_script().page_tab
    assert page_tab("http://h/#/experiments/1/runs?workflowType=machine_learning", "1") == "runs"
    assert page_tab("http://h/#/experiments/1/overview/usage?workflowType=genai", "1") == (
        "overview"
    )
    assert page_tab("http://h/#/experiments/1", "1") == ""
    assert page_tab("http://h/#/experiments/12/runs", "1") == ""


def test_logged_tables_reads_mlflows_tag(repo: Path, uri: str) -> None:
    _stage_runs(repo, uri)
    _, cells = latest_cells(uri, EXPERIMENT, keep=lambda c: bool(logged_tables(c)))
    assert json.loads(cells[0].tags["mlflow.loggedArtifacts"]) == [
        {"path": "answers.json", "type": "table"}
    ]
    assert logged_tables(cells[0]) == ["answers.json"]


def test_a_stored_none_matches_the_null_the_page_shows(repo: Path, uri: str) -> None:
    """A study's answers table holds None (a prediction the parser could not extract, a
    reader error field): read back from the store it is ``None`` / ``nan``, the UI shows
    ``null``, and the check counts that as the same cell (it failed on a study run)."""
    script = _check_script()
    table = [{"probe_id": "sgd:d0:0", "prediction": None, "error": None, "score": 0.0}]
    opts: dict[str, Any] = {"tracking_uri": uri, "experiment": EXPERIMENT, "repo_root": repo}
    with start_pipeline_run("tpbench", stage="metrics", **opts) as parent:
        log_cell(
            parent,
            {"dataset": "sgd", "ratio": 0.5, "method": "recency", "probe": "P2", "seed": 0},
            table=table,
        )
    seen = script.expected_runs(uri, EXPERIMENT, 60, None, None)
    _, columns, first_row = script.expected_table(uri, seen["cell"], None)
    stored = dict(zip(columns, first_row, strict=True))
    assert stored["prediction"] in script.STORED_MISSING
    assert script._same("null", stored["prediction"]) and script._same("null", stored["error"])
    assert not script._same("null", "Paris") and not script._same("Paris", stored["prediction"])
    assert script._same("0", stored["score"])
