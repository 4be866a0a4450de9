"""The whole TPBench chain in-process, fast: corpora -> probes -> contexts -> answers -> scores
-> metrics on the built-in corpus, with the mock reader answering gold where visible and a
real MLflow sqlite store. Asserts metric values, so a wiring fault anywhere in the chain (ids,
pairing of answers with probes, scorer choice, aggregation) changes a number."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compressbench import stages
from compressbench.config import parse_params
from compressbench.jsonl import read_jsonl
from compressbench.pipeline.run_log import read_observations
from compressbench.text.normalize import value_occurs_in_text
from compressbench.tpbench.stages import paths
from support.answer_tables import TABLE, gold_where_visible, mock_lookup, write_table
from support.params import RATIO, pipeline_params, sqlite_tracking

METHODS = ("full_context", "recency", "first_n")


def _params(tmp_path: Path) -> Any:
    raw = pipeline_params(
        n_per_cell=26,
        methods=list(METHODS),
        reader=mock_lookup(tmp_path / TABLE),
        tracking=sqlite_tracking(tmp_path, "chain"),
    )
    return parse_params(raw, "chain-params.yaml")


def _expected(contexts: list[dict[str, Any]], probe_type: str) -> float:
    """Strict accuracy the rule reader must reach: the share of probes whose gold survives."""
    rows = [r for r in contexts if r["probe_type"] == probe_type]
    gold = "gold" if probe_type == "P2" else "gold_value"
    kept = [value_occurs_in_text(r[gold], r["compressed_text_used"], r["dataset"]) for r in rows]
    return sum(kept) / len(kept)


def test_chain_metrics(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(tmp_path / "answers.sqlite"))
    params = _params(tmp_path)
    stages.stage_corpora(params, "builtin")
    stages.stage_probes(params, "builtin", RATIO)
    for method in METHODS:
        stages.stage_contexts(params, "builtin", method, RATIO)
    # the mock answers each prompt from the gold data of its contexts row
    write_table(tmp_path / TABLE, gold_where_visible)
    for method in METHODS:
        stages.stage_answers(params, "builtin", method, RATIO)
        stages.stage_scores(params, "builtin", method, RATIO)
    stages.stage_metrics(params)

    # every metric of every cell (the compact metrics/tpbench.json keeps strict and loose only)
    metrics = json.loads(paths.FULL_METRICS_FILE.read_text(encoding="utf-8"))["builtin"]
    for method in METHODS:
        cell = metrics[method][paths.ratio_name(RATIO)]
        contexts = list(read_jsonl(paths.CellFiles("builtin", method, RATIO).contexts))
        assert cell["P2"]["strict"] == pytest.approx(_expected(contexts, "P2"))
        assert cell["P3"]["value_strict"] == pytest.approx(_expected(contexts, "P3"))
        assert cell["P1"]["strict"] == 1.0  # the gold goal against itself
        assert cell["P2"]["abstain_rate"] == pytest.approx(1 - cell["P2"]["strict"])
        assert cell["P2"]["format_error_rate"] == 0.0

    # Pinned values: the built-in corpus, seed 42 and the published selectors fix them.
    p2 = {m: metrics[m]["0.3"]["P2"]["strict"] for m in METHODS}
    assert p2 == pytest.approx({"full_context": 1.0, "recency": 0.9, "first_n": 0.2})
    p3_goal = {m: metrics[m]["0.3"]["P3"]["goal"] for m in METHODS}
    # The rule reader abstains on P3 when the value is gone, so its goal score follows it.
    assert p3_goal == pytest.approx(
        {"full_context": 25 / 26, "recency": 20 / 26, "first_n": 2 / 26}
    )

    # The same inputs again: every stage writes the same bytes, and no answer is regenerated.
    before = {p: p.read_bytes() for p in Path("data").rglob("*.jsonl")}
    for method in METHODS:
        stages.stage_answers(params, "builtin", method, RATIO)
        # the run's cache counts are observations: in its run log, not the stats output
        observed = read_observations(paths.CellFiles("builtin", method, RATIO).answer_stats)
        assert observed["model_calls"] == 0
    assert {p: p.read_bytes() for p in Path("data").rglob("*.jsonl")} == before
