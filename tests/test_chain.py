"""The whole TPBench chain in-process, fast: corpora -> probes -> contexts -> answers -> scores
-> metrics on the built-in corpus, with a deterministic in-process reader and a real MLflow
sqlite store. Asserts metric values, so a wiring fault anywhere in the chain (ids, pairing of
answers with probes, scorer choice, aggregation) changes a number."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from compressbench.config import parse_params
from compressbench.jsonl import read_jsonl
from compressbench.pipeline import paths, stages
from compressbench.readers.base import ChatRequest, Generation
from compressbench.readers.registry import register_reader, unregister_reader
from compressbench.text.normalize import value_occurs_in_text
from compressbench.tpbench.probes import read_probes

METHODS = ("full_context", "recency", "first_n")
RATIO = 0.3
CONTEXT_END = "\n\nQuestion:"


class GoldWhereVisibleReader:
    """Answers from the probes file: the gold value when it survives in the prompt's context
    (P2, P3), else abstains; P1 always states the gold goal. Deterministic, no model."""

    name = "gold_where_visible"
    revision = "1"

    def __init__(self, model: str) -> None:
        self.model_id = model
        self.probes = {f"{p.probe_type}|{p.seed}|{p.probe_id}": p for p in read_probes(model)}
        self.calls = 0

    def decoding(self) -> dict[str, Any]:
        return {"rule": "gold where visible"}

    def answer(self, request: ChatRequest) -> str:
        probe = self.probes[request.id]  # the answers stage's id: probe type|seed|probe id
        probe_type = probe.probe_type
        context = request.user.split(CONTEXT_END)[0]
        if probe_type == "P1":
            return json.dumps({"value": probe.gold, "abstain": False})
        value = probe.gold if probe_type == "P2" else probe.gold_value
        if not value_occurs_in_text(value, context, probe.dataset):
            return json.dumps({"value": "unknown", "abstain": True})
        if probe_type == "P2":
            return json.dumps({"value": value, "abstain": False})
        joint = f"{probe.gold_story_label}; {probe.slot_human}: {value}"
        return json.dumps({"value": joint, "abstain": False})

    def generate(self, requests: Sequence[ChatRequest]) -> list[Generation]:
        self.calls += len(requests)
        return [
            Generation(id=r.id, raw=(a := self.answer(r)), json_text=a, error=None)
            for r in requests
        ]


@pytest.fixture()
def reader_name() -> Iterator[str]:
    register_reader(GoldWhereVisibleReader.name, GoldWhereVisibleReader)
    yield GoldWhereVisibleReader.name
    unregister_reader(GoldWhereVisibleReader.name)


def _params(tmp_path: Path, backend: str) -> Any:
    raw = {
        "corpora": {"builtin": {"source": "builtin"}},
        "datasets": ["builtin"],
        "probes": ["p1", "p2", "p3"],
        "seeds": [42],
        "ratios": [RATIO],
        "p3_ratio": RATIO,
        "n_per_cell": 26,
        "methods": list(METHODS),
        "reader": {"backend": backend, "model": str(paths.probes_file("builtin", RATIO))},
        "tracking": {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "experiment": "chain"},
    }
    return parse_params(raw, "chain-params.yaml")


def _expected(contexts: list[dict[str, Any]], probe_type: str) -> float:
    """Strict accuracy the rule reader must reach: the share of probes whose gold survives."""
    rows = [r for r in contexts if r["probe_type"] == probe_type]
    gold = "gold" if probe_type == "P2" else "gold_value"
    kept = [value_occurs_in_text(r[gold], r["compressed_text_used"], r["dataset"]) for r in rows]
    return sum(kept) / len(kept)


def test_chain_metrics(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader_name: str) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(tmp_path / "answers.sqlite"))
    params = _params(tmp_path, reader_name)
    stages.stage_corpora(params, "builtin")
    stages.stage_probes(params, "builtin", RATIO)
    for method in METHODS:
        for stage in (stages.stage_contexts, stages.stage_answers, stages.stage_scores):
            stage(params, "builtin", method, RATIO)
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
        stats = json.loads(paths.CellFiles("builtin", method, RATIO).answer_stats.read_text())
        assert stats["model_calls"] == 0
    assert {p: p.read_bytes() for p in Path("data").rglob("*.jsonl")} == before
