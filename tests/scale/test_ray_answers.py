"""The answers stage on a real local Ray instance: 1, 2 and 4 workers write the same answers
files byte for byte as the serial stage; the answer cache joins the workers' results (a second
run generates nothing); KV-press cells shard across HF reader workers."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compressbench import stages
from compressbench.cli import main
from compressbench.config import parse_params
from compressbench.pipeline.run_log import read_observations
from compressbench.scale.ray_answers import run_answers
from compressbench.tpbench.stages import paths
from support.answer_tables import TABLE, gold_where_visible, mock_lookup, write_table
from support.params import RATIO, pipeline_params

METHODS = ("full_context", "recency", "first_n")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    """One local Ray instance for the module (starting one costs 10-20 s here)."""
    import ray

    # Workers import the project from the venv and build the mock reader from params.
    # as run_answers does for a local instance: un-niced workers (they do all the work)
    os.environ.setdefault("RAY_worker_niceness", "0")
    ray.init(
        num_cpus=4,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=80 * 1024 * 1024,
    )
    yield ray
    ray.shutdown()


def _params(reader: dict[str, Any], methods: tuple[str, ...], n_per_cell: int) -> Any:
    raw = pipeline_params(
        n_per_cell=n_per_cell,
        methods=list(methods),
        reader=reader,
        tracking={"uri": None, "experiment": "ray"},
    )
    return parse_params(raw, "ray-params.yaml")


def _contexts(params: Any) -> list[tuple[str, str, float]]:
    stages.stage_corpora(params, "builtin")
    stages.stage_probes(params, "builtin", RATIO)
    for method in params.methods:
        stages.stage_contexts(params, "builtin", method, RATIO)
    return [("builtin", m, RATIO) for m in params.methods]


def _answers_bytes(cells: list[tuple[str, str, float]]) -> dict[str, bytes]:
    return {str(c): paths.CellFiles(*c).answers.read_bytes() for c in cells}


@pytest.mark.slow
def test_one_two_four_workers_write_the_serial_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_ray: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    params = _params(mock_lookup(tmp_path / TABLE), METHODS, 26)
    cells = _contexts(params)
    write_table(tmp_path / TABLE, gold_where_visible)  # gold where visible, by prompt

    monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(tmp_path / "serial.sqlite"))
    for cell in cells:
        stages.stage_answers(params, *cell)
    serial = _answers_bytes(cells)
    rows = sum(len(b.splitlines()) for b in serial.values())
    assert rows > 60  # P1 + P2 + P3 of 26 candidates, three cells

    for workers in (1, 2, 4):
        monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(tmp_path / f"w{workers}.sqlite"))
        for cell in cells:
            paths.CellFiles(*cell).answers.unlink()
        run = run_answers(params, cells, workers=workers)
        assert _answers_bytes(cells) == serial, f"{workers} workers"
        assert run.cached == 0 and run.requests == rows
        assert 0 < run.generated <= rows  # a prompt shared by two cells is answered once
        assert run.workers_used == min(workers, run.shards)

    # The cache is the join point: the same cells again generate nothing, same bytes.
    again = run_answers(params, cells, workers=2)
    assert again.shards == 0 and again.generated == 0 and again.cached == run.generated
    assert _answers_bytes(cells) == serial
    stats_file = paths.CellFiles(*cells[0]).answer_stats
    stats, observed = json.loads(stats_file.read_text()), read_observations(stats_file)
    assert observed["model_calls"] == 0 and observed["hits"] == stats["requests"]


@pytest.mark.slow
def test_kv_press_cells_shard_across_hf_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_ray: Any
) -> None:
    """Two real HF readers (SmolLM2 from PyPI) under StreamingLLM: the same answers and
    measured KV records as the serial stage."""
    monkeypatch.chdir(tmp_path)
    new_tokens = {"P1": 8, "P2": 8, "P3": 8}
    reader = {"backend": "hf", "model": "smollm2", "batch_size": 1, "max_new_tokens": new_tokens}
    params = _params(reader, ("streamingllm",), 1)
    cells = _contexts(params)
    monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(tmp_path / "serial.sqlite"))
    stages.stage_answers(params, *cells[0])
    serial = _answers_bytes(cells)
    rows = [json.loads(line) for line in serial[str(cells[0])].splitlines()]
    assert len(rows) >= 2 and all(r["kv_record"]["press"] for r in rows)

    monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(tmp_path / "ray.sqlite"))
    run = run_answers(params, cells, workers=2)
    assert run.generated == len(rows) and run.workers_used == 2
    assert _answers_bytes(cells) == serial
    stats = json.loads(paths.CellFiles(*cells[0]).answer_stats.read_text())
    assert stats["kv"] is not None


def test_cli_names_a_cell_without_contexts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bad input before any Ray work: one line naming the missing contexts file, exit 2."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text(
        "corpora: {builtin: {source: builtin}}\ndatasets: [builtin]\nmethods: [recency]\n"
    )
    code = main(["answers-ray", "--workers", "2"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "data/contexts" in err and "run the contexts stage first" in err
