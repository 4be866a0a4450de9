"""The answers stage writes what KV presses measured, on the real default reader and kvpress.

Each answer row carries its press's record and the cost the kept entries imply; the cell's
``.stats.json`` summarises modes, fallbacks (never silent) and kept entries, and spans the real
compute window; a rerun from the answer cache writes the same bytes.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from support.smoke import use_smoke_reader

pytest.importorskip("kvpress")

from compressbench.config import Params, parse_params
from compressbench.jsonl import read_jsonl
from compressbench.pipeline.run_log import read_observations
from compressbench.stages import (
    stage_answers,
    stage_contexts,
    stage_corpora,
    stage_probes,
)
from compressbench.tpbench.stages import paths
from support.paths import REPO_ROOT

RATIO = 0.3
pytestmark = pytest.mark.slow


def _params(**method_params: dict[str, Any]) -> Params:
    raw = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    raw.update(datasets=["builtin"], probes=["P2"], seeds=[42], ratios=[RATIO], n_per_cell=4)
    raw["methods"] = ["full_context", "chunkkv", *method_params]
    raw["method_params"].update(method_params)
    use_smoke_reader(raw)  # hf: kvpress runs there
    raw["reader"]["max_new_tokens"] = {"P1": 8, "P2": 8, "P3": 8}
    return parse_params(raw)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Params]:
    """Corpus and probes of a small builtin grid in a fresh directory with its own cache."""
    root = tmp_path_factory.mktemp("kv_records")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        mp.setenv("COMPRESSBENCH_ANSWER_CACHE", str(root / "answers.sqlite"))
        params = _params()
        stage_corpora(params, "builtin")
        stage_probes(params, "builtin", RATIO)
        yield params


@pytest.fixture(scope="module")
def chunkkv(project: Params) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The published ChunkKV cell: context_only, no fallback on the builtin contexts."""
    return _run_cell(project, "chunkkv")


def _run_cell(params: Params, method: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    stage_contexts(params, "builtin", method, RATIO)
    cell = paths.CellFiles("builtin", method, RATIO)
    stage_answers(params, "builtin", method, RATIO)
    # the cell's facts (its .stats.json) and what the run observed (its run log)
    stats = json.loads(cell.answer_stats.read_text(encoding="utf-8"))
    return list(read_jsonl(cell.answers)), {**stats, **read_observations(cell.answer_stats)}


def _assert_measured_cost(row: dict[str, Any]) -> None:
    rec, cost = row["kv_record"], row["cost_measured"]
    kept = rec["kept_entries_per_layer"]
    q = sum(kept) / len(kept) / rec["context_tokens"]
    assert cost["q"] == pytest.approx(q) == pytest.approx(rec["kept_fraction"])
    assert cost["kv_memory_ratio"] == pytest.approx(1 / q)
    assert cost["prefill_attention_ratio"] == 1.0
    assert (cost["kept_entries_min"], cost["kept_entries_max"]) == (min(kept), max(kept))
    assert cost["basis"] == "measured"


def test_fallback_is_recorded_in_rows_stats_and_log(
    chunkkv: tuple[list[dict[str, Any]], dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    # A SnapKV window just below the shortest prompt: prompts whose context (the part before
    # the question) is within window + 4 tokens fall back to full_prompt; the others run
    # context_only. The same prompts' token counts come from the ChunkKV cell's records.
    measured = [r["kv_record"] for r in chunkkv[0]]
    window = min(r["context_tokens"] + r["question_tokens"] for r in measured) - 8
    expect_fallback = [r["context_tokens"] <= window + 4 for r in measured]
    assert any(expect_fallback)
    params = _params(SnapKVPress={"mode": "context_only", "window_size": window})
    before = time.time()
    with caplog.at_level(logging.WARNING):
        rows, stats = _run_cell(params, "SnapKVPress")
    after = time.time()
    for row, falls_back, m in zip(rows, expect_fallback, measured, strict=True):
        rec = row["kv_record"]
        assert rec["mode_requested"] == "context_only"
        if falls_back:  # the whole prompt was prefilled under the press
            assert (rec["mode"], rec["question_tokens"]) == ("full_prompt", 0)
            assert rec["context_tokens"] > m["context_tokens"]
            assert rec["fallback_reason"] == (
                f"context has {m['context_tokens']} tokens <= window_size + 4 = {window + 4}"
            )
        else:
            assert (rec["mode"], rec["fallback_reason"]) == ("context_only", None)
            assert rec["context_tokens"] == m["context_tokens"]
        _assert_measured_cost(row)
    n, k = len(rows), sum(expect_fallback)
    kv = stats["kv"]
    assert kv["rows"] == kv["rows_measured"] == n and kv["rows_without_record"] == 0
    assert kv["modes_requested"] == {"context_only": n}
    assert kv["modes"] == {m: c for m, c in (("context_only", n - k), ("full_prompt", k)) if c}
    assert kv["fallbacks"]["count"] == k
    reasons = {r["kv_record"]["fallback_reason"] for r in rows} - {None}
    assert {r["reason"] for r in kv["fallbacks"]["reasons"]} == reasons
    assert sum(r["count"] for r in kv["fallbacks"]["reasons"]) == k
    assert kv["context_tokens_total"] == sum(r["kv_record"]["context_tokens"] for r in rows)
    kept = [e for r in rows for e in r["kv_record"]["kept_entries_per_layer"]]
    assert kv["kept_entries_per_layer"] == {
        "mean": pytest.approx(sum(kept) / len(kept)),
        "min": min(kept),
        "max": max(kept),
    }
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(f"{k} of {n} prompts fell back to full_prompt" in m for m in warnings)
    assert before <= stats["compute_started_at"] <= stats["compute_ended_at"] <= after


def test_rerun_from_cache_is_byte_identical(
    project: Params, chunkkv: tuple[list[dict[str, Any]], dict[str, Any]]
) -> None:
    cell = paths.CellFiles("builtin", "chunkkv", RATIO)
    first = cell.answers.read_bytes()
    window = chunkkv[1]
    cell.answers.unlink()
    rows, stats = _run_cell(project, "chunkkv")
    assert cell.answers.read_bytes() == first
    assert stats["model_calls"] == 0 and stats["hits"] == len(rows)
    assert all(r["kv_record"] is not None for r in rows)
    assert (stats["compute_started_at"], stats["compute_ended_at"]) == (
        window["compute_started_at"],
        window["compute_ended_at"],
    )


def test_context_only_press_records_its_kept_entries(
    chunkkv: tuple[list[dict[str, Any]], dict[str, Any]],
) -> None:
    rows, stats = chunkkv
    kv = stats["kv"]
    assert kv["modes"] == {"context_only": len(rows)} and kv["fallbacks"]["count"] == 0
    for row in rows:
        assert row["kv_record"]["fallback_reason"] is None
        assert row["kv_record"]["question_tokens"] > 0
        _assert_measured_cost(row)
    assert abs(kv["kept_fraction_mean"] - RATIO) < 0.1
    contexts = list(read_jsonl(paths.CellFiles("builtin", "chunkkv", RATIO).contexts))
    assert {c["cost"]["basis"] for c in contexts} == {"nominal"}


def test_turn_selector_rows_have_no_kv_record(project: Params) -> None:
    rows, stats = _run_cell(project, "full_context")
    assert stats["kv"] is None
    assert all(r["kv_record"] is None and r["cost_measured"] is None for r in rows)
    assert stats["compute_started_at"] <= stats["compute_ended_at"]
