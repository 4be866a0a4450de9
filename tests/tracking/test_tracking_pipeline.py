"""What the pipeline logs for a cell: the answers table, the probe set as a dataset input, the
real compute times and the KV summary; run through the real stages on the built-in corpus with
the ``mock`` reader (a fixed answer per probe type), read back from a real MLflow sqlite
store."""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compressbench import stages
from compressbench.config import parse_params
from compressbench.errors import InputError
from compressbench.jsonl import read_jsonl, sha256_file, write_jsonl
from compressbench.pipeline.run_log import read_observations
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.answer_records import kv_summary
from compressbench.tpbench.stages.answer_table import (
    EXCERPT_CHARS,
    answer_table,
    context_excerpt,
    question_of,
)
from compressbench.tracking import read_cell_table, read_cells, split_numeric, start_pipeline_run

pytest.importorskip("mlflow")
from mlflow.tracking import MlflowClient

from support.params import RATIO, pipeline_params
from support.paths import REPO_ROOT

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

METHOD = "recency"
EXPERIMENT = "cells"
SCRIPT = REPO_ROOT / "scripts" / "check_mlflow_ui.py"
ANSWERS: dict[str, dict[str, Any]] = {
    "P1": {"value": "find a restaurant", "abstain": False},
    "P2": {"value": "unknown", "abstain": True},
    "P3": {"value": "changed; city: Paris", "abstain": False},
}


def _fixed_mock() -> dict[str, Any]:
    """The ``mock`` reader, model ``fixed``: the answer of each probe type (request ids start
    with it)."""
    answers = {f"{kind}|": json.dumps(answer) for kind, answer in ANSWERS.items()}
    return {"backend": "mock", "model": "fixed", "options": {"answers": answers}}


def _run_pipeline(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    before_metrics: Callable[[paths.CellFiles], None] | None = None,
) -> str:
    """corpora -> probes -> contexts -> answers -> scores -> metrics (MLflow) in ``tmp_path``;
    returns the tracking URI."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(tmp_path / "answers.sqlite"))
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    raw = pipeline_params(
        seeds=[7],
        n_per_cell=5,
        methods=[METHOD],
        reader=_fixed_mock(),
        tracking={"uri": uri, "experiment": EXPERIMENT},
    )
    params = parse_params(raw, "params.yaml")
    stages.stage_corpora(params, "builtin")
    stages.stage_probes(params, "builtin", RATIO)
    for stage in (stages.stage_contexts, stages.stage_answers, stages.stage_scores):
        stage(params, "builtin", METHOD, RATIO)
    if before_metrics is not None:
        before_metrics(paths.CellFiles("builtin", METHOD, RATIO))
    stages.stage_metrics(params)
    return uri


def test_cell_runs_show_answers_dataset_and_compute_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = _run_pipeline(tmp_path, monkeypatch)
    cell = paths.CellFiles("builtin", METHOD, RATIO)
    scores = list(read_jsonl(cell.scores))
    contexts = {(r["probe_type"], r["probe_id"]): r for r in read_jsonl(cell.contexts)}
    stats = read_observations(cell.answer_stats)  # the compute times: the cell's run log
    probes = paths.probes_file("builtin", RATIO)
    client = MlflowClient(tracking_uri=uri)
    runs = read_cells(uri, EXPERIMENT, with_artifacts=True)
    assert sorted(r.params["probe"] for r in runs) == ["P1", "P2", "P3"]
    for run in runs:
        probe_type = run.params["probe"]
        mine = [s for s in scores if s["probe_type"] == probe_type]
        assert mine, probe_type
        assert "answers.json" in run.artifacts
        table = read_cell_table(run.run_id, uri)
        assert len(table) == len(mine)
        assert table["probe_id"].tolist() == [s["probe_id"] for s in mine]
        score_cols = [f"score_{k}" for k in mine[0]["scores"]]
        for column in (
            "probe_id", "dialogue_id", "kept_turn_ids", "context_excerpt", "question",
            "output", "prediction", "gold", "abstain", "format_error", *score_cols,
        ):  # fmt: skip
            assert column in table.columns, (probe_type, column)
        first = table.iloc[0]
        ctx = contexts[(probe_type, first["probe_id"])]
        assert first["question"].startswith("Question:")
        assert ctx["prompt_user"].endswith(first["question"])
        assert first["context_excerpt"] == context_excerpt(ctx["compressed_text_used"])
        assert json.loads(first["kept_turn_ids"]) == ctx["kept_turn_ids"]
        assert json.loads(first["output"]) == ANSWERS[probe_type]
        assert first["abstain"] == int(ANSWERS[probe_type]["abstain"])
        assert [first[c] for c in score_cols] == list(mine[0]["scores"].values())

        (dataset,) = run.datasets
        assert dataset.name == probes.as_posix()
        assert dataset.digest == sha256_file(probes)[:36]
        assert json.loads(dataset.source) == {"uri": probes.as_posix()}
        assert dataset.tags["sha256"] == sha256_file(probes)

        assert stats["compute_started_at"] is not None
        started = datetime.datetime.fromtimestamp(stats["compute_started_at"], tz=datetime.UTC)
        assert run.tags["compute.started_at"] == started.isoformat(timespec="milliseconds")
        assert run.start_time is not None and run.end_time is not None
        assert run.start_time >= round(stats["compute_ended_at"] * 1000)  # logged after it
        assert client.get_run(run.run_id).info.end_time == run.end_time
        assert run.run_name == f"{METHOD} · builtin/{probe_type}/seed=7/r={RATIO}/fixed"


KV_RECORD = {
    "mode_requested": "context_only",
    "mode": "full_prompt",
    "fallback_reason": "chat template splits the context",
    "kept_entries_per_layer": [10, 12],
    "context_tokens": 40,
    "question_tokens": 9,
    "kept_fraction": 0.3,
}


def _as_kv_cell(cell: paths.CellFiles) -> None:
    """Give every scored answer the KV record and the stats the KV summary that the answers
    stage writes for a KV press cell (no KV model runs here)."""
    rows = [{**r, "kv_record": KV_RECORD} for r in read_jsonl(cell.scores)]
    write_jsonl(cell.scores, rows)
    stats = json.loads(cell.answer_stats.read_text(encoding="utf-8"))
    stats["kv"] = kv_summary([KV_RECORD] * len(rows))
    cell.answer_stats.write_text(json.dumps(stats), encoding="utf-8")


def test_kv_cell_logs_its_summary_and_measured_modes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = _run_pipeline(tmp_path, monkeypatch, before_metrics=_as_kv_cell)
    cell = paths.CellFiles("builtin", METHOD, RATIO)
    n = {t: sum(r["probe_type"] == t for r in read_jsonl(cell.scores)) for t in ANSWERS}
    runs = read_cells(uri, EXPERIMENT)
    assert sorted(r.params["probe"] for r in runs) == sorted(ANSWERS)
    for run in runs:
        assert run.metrics["kv.rows"] == sum(n.values())
        assert run.metrics["kv.fallbacks.count"] == sum(n.values())
        assert run.metrics["kv.modes.full_prompt"] == sum(n.values())
        assert run.metrics["kv.kept_entries_per_layer.mean"] == 11.0
        reasons = json.loads(run.params["kv.fallbacks.reasons"])
        assert reasons == [{"count": sum(n.values()), "reason": KV_RECORD["fallback_reason"]}]
        table = read_cell_table(run.run_id, uri)
        assert len(table) == n[run.params["probe"]]
        assert set(table["kv_mode"]) == {"full_prompt"}
        assert set(table["kv_fallback_reason"]) == {KV_RECORD["fallback_reason"]}


def test_answer_table_rows_and_kv_columns() -> None:
    text = "u: " + "x" * 400 + " tail"
    ctx = {
        "probe_type": "P2",
        "seed": 0,
        "probe_id": "sgd:d1:0",
        # the prompt is built around the context it used, as the contexts stage writes it
        "prompt_user": f"Context:\n{text}\n\nQuestion: What is the current value of city?",
        "compressed_text_used": text,
        "kept_turn_ids": [3, 4],
    }
    score = {
        "probe_type": "P2",
        "seed": 0,
        "probe_id": "sgd:d1:0",
        "dialogue_id": "d1",
        "slot": "city",
        "output": '{"value": "Paris"}',
        "prediction": "Paris",
        "gold": "Paris",
        "abstain": 0,
        "format_error": 0,
        "scores": {"strict": 1, "loose": 1},
        "kv_record": {"mode": "full_prompt", "fallback_reason": "chat template", "x": 1},
    }
    (row,) = answer_table([ctx], [score], contexts_file=Path("c.jsonl"))
    assert row["question"] == "Question: What is the current value of city?"
    assert row["context_excerpt"].startswith(text[:EXCERPT_CHARS])
    assert row["context_excerpt"].endswith(text[-EXCERPT_CHARS:])
    assert len(row["context_excerpt"]) < len(text) and row["context_chars"] == len(text)
    assert row["kept_turn_ids"] == [3, 4]
    assert (row["score_strict"], row["score_loose"]) == (1, 1)
    assert (row["kv_mode"], row["kv_fallback_reason"]) == ("full_prompt", "chat template")
    assert "gold_story_label" not in row and "error" not in row  # empty in every row
    assert question_of("no marker here", "marker", "city") == "city"
    assert context_excerpt("short") == "short"
    with pytest.raises(InputError, match=r"c\.jsonl.*sgd:d2:0"):
        answer_table([ctx], [{**score, "probe_id": "sgd:d2:0"}], contexts_file=Path("c.jsonl"))
    with pytest.raises(InputError, match="prompt_user"):
        no_prompt = {k: v for k, v in ctx.items() if k != "prompt_user"}
        answer_table([no_prompt], [], contexts_file=Path("c.jsonl"))


def test_kv_summary_flattens_to_metrics_and_params() -> None:
    summary = {
        "rows": 4,
        "modes": {"context_only": 3, "full_prompt": 1},
        "fallbacks": {"count": 1, "reasons": [{"reason": "too long", "count": 1}]},
        "kept_entries_per_layer": {"mean": 12.5, "min": None, "max": 20},
    }
    metrics, params = split_numeric(summary, prefix="kv.")
    assert metrics == {
        "kv.rows": 4.0,
        "kv.modes.context_only": 3.0,
        "kv.modes.full_prompt": 1.0,
        "kv.fallbacks.count": 1.0,
        "kv.kept_entries_per_layer.mean": 12.5,
        "kv.kept_entries_per_layer.max": 20.0,
    }
    assert params == {
        "kv.fallbacks.reasons": '[{"count": 1, "reason": "too long"}]',
        "kv.kept_entries_per_layer.min": "null",
    }


@pytest.mark.slow
def test_mlflow_ui_shows_runs_and_a_cells_answers_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """scripts/check_mlflow_ui.py on a store the pipeline logged, ending as a complete run does
    (the report stage's pipeline run, without cells, is the newest): server + Playwright on the
    system Chromium (a minute or two)."""
    if not (Path("/usr/bin/chromium").is_file() or shutil.which("chromium")):
        pytest.skip("Chromium is not installed (apt-get install -y chromium)")
    uri = _run_pipeline(tmp_path, monkeypatch)
    with start_pipeline_run("tpbench report", tracking_uri=uri, experiment=EXPERIMENT):
        pass  # what stage_report logs when it has no cells to log
    (cell,) = [c for c in read_cells(uri, EXPERIMENT) if c.params["probe"] == "P2"]
    columns = list(read_cell_table(cell.run_id, uri).columns)
    shot = tmp_path / "ui.png"
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--backend-store-uri", uri, "--experiment", EXPERIMENT,
         "--cell", cell.run_name, "--screenshot", str(shot)],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    print(out.stdout)  # what the page showed (pytest -rP)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "runs listed: 5/5" in out.stdout  # 2 pipeline runs, 3 cells
    assert "runs link:  " in out.stdout and "-> tab 'runs'" in out.stdout
    assert f"table columns shown: {len(columns)}/{len(columns)}:" in out.stdout
    assert "OK: the MLflow UI opens the runs table, lists the runs and shows the cell's table" in (
        out.stdout
    )
    for png in (shot, tmp_path / "ui-plain.png", tmp_path / "ui-table.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
