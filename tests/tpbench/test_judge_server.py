"""The P1 semantic judge against a real local OpenAI-compatible server (llama_cpp.server with
SmolLM2-135M), through a real proxy that records requests and can answer non-JSON.

SmolLM2 is no judge: these tests check the machinery (schema requested, verdicts parsed,
cached, retried, agreement arithmetic), never the verdicts' quality.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compressbench import cli
from compressbench.analysis.agreement import kappa_from_counts
from compressbench.readers.cache import AnswerCache
from compressbench.tpbench.judge.judge import build_judge
from compressbench.tpbench.judge.p1 import judge_p1_rows, read_p1_rows, summarize
from compressbench.tpbench.judge.prompt import (
    CORE_GOALS,
    REFERENCE_TYPES,
    VERDICT_SCHEMA,
    prompt_sha256,
)
from support.verdict_proxy import FIRST_ATTEMPT, NEVER, VerdictProxy

pytest.importorskip("openai")
pytest.importorskip("jsonschema")
pytestmark = pytest.mark.slow

MAX_TOKENS = 160  # the verdict takes ~50 tokens; a bound on a looping reason


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def p1_scores(tmp_path: Path) -> Path:
    base = {"dataset": "sgd", "seed": 42, "ratio": 0.3, "probe_type": "P1"}
    hotel = {"gold": "Can you book me a hotel in Paris?", "prediction": "book a hotel in Paris"}
    food = {"gold": "I want to find a restaurant in the west.", "prediction": "find a restaurant"}
    return write_jsonl(
        tmp_path / "scores.jsonl",
        [
            {**base, **hotel, "probe_id": "d1:0", "dialogue_id": "d1", "method": "recency"},
            {**base, **hotel, "probe_id": "d1:0", "dialogue_id": "d1", "method": "first_n"},
            {**base, **food, "probe_id": "d2:0", "dialogue_id": "d2", "method": "recency"},
        ],
    )


def assert_valid_verdict(row: dict[str, Any]) -> None:
    assert row["error"] is None and row["raw"] is None
    assert row["equivalent"] in (True, False, None)
    assert row["core_goal"] in CORE_GOALS and row["reference_type"] in REFERENCE_TYPES
    assert isinstance(row["reason"], str) and isinstance(row["verdict_id"], str)


def test_structured_verdicts_are_parsed_and_cached(llama_server: str, tmp_path: Path) -> None:
    rows = read_p1_rows(p1_scores(tmp_path))
    with VerdictProxy(llama_server, NEVER) as proxy, AnswerCache(tmp_path / "c.sqlite") as cache:
        judge = build_judge(
            "smollm2", base_url=proxy.url, style="json_object", max_tokens=MAX_TOKENS
        )
        verdicts, run = judge_p1_rows(judge, rows, cache, progress=False)
        assert proxy.forwarded == 2  # two distinct (reference, answer) pairs, three rows
        fresh = build_judge(
            "smollm2", base_url=proxy.url, style="json_object", max_tokens=MAX_TOKENS
        )
        again, rerun = judge_p1_rows(fresh, rows, cache, progress=False)
        assert len(proxy.bodies) == 2  # the second run called nothing
    assert rerun.stats["model_calls"] == 0 and rerun.stats["cache_hits"] == 2
    assert again == verdicts
    for body in proxy.bodies:  # the schema was requested the way llama_cpp.server takes it
        assert body["response_format"] == {"type": "json_object", "schema": VERDICT_SCHEMA}
        assert body["temperature"] == 0.0 and body["max_tokens"] == MAX_TOKENS
    assert run.stats == {
        "requests": 2, "model_calls": 2, "cache_hits": 0, "retried": 0, "errors": 0
    }  # fmt: skip
    for v in verdicts:
        assert_valid_verdict(v)
        assert v["attempts"] == 1
    assert verdicts[0]["judge_id"] == verdicts[1]["judge_id"] != verdicts[2]["judge_id"]
    assert [v["method"] for v in verdicts] == ["recency", "first_n", "recency"]
    summary = summarize(verdicts)
    true = sum(v["equivalent"] is True for v in verdicts)
    assert summary["n"] == 3 and summary["errors"] == 0
    assert summary["semantic_accuracy"] == true / 3
    assert (
        run.info["judge_model"] == "smollm2" and run.info["judge_response_format"] == "json_object"
    )


def test_a_non_json_verdict_is_asked_again(llama_server: str, tmp_path: Path) -> None:
    rows = read_p1_rows(p1_scores(tmp_path))[2:]  # one item
    with (
        VerdictProxy(llama_server, FIRST_ATTEMPT) as proxy,
        AnswerCache(tmp_path / "c.sqlite") as cache,
    ):
        judge = build_judge(
            "smollm2", base_url=proxy.url, style="json_object", max_tokens=MAX_TOKENS
        )
        verdicts, run = judge_p1_rows(judge, rows, cache, progress=False)
        assert len(proxy.bodies) == 2 and proxy.forwarded == 1  # non-JSON first, then the model
        again, rerun = judge_p1_rows(judge, rows, cache, progress=False)
        assert len(proxy.bodies) == 2  # both attempts replayed from the cache
    assert run.stats["retried"] == 1 and run.stats["errors"] == 0
    assert rerun.stats["model_calls"] == 0 and rerun.stats["cache_hits"] == 2
    (verdict,) = verdicts
    assert_valid_verdict(verdict)
    assert verdict["attempts"] == 2
    assert again == verdicts


AE_ITEMS = [
    {
        "id": "ae1",
        "question": "Who wrote Hamlet?",
        "context": "Hamlet is a tragedy written by William Shakespeare.",
        "reference": "William Shakespeare",
        "candidate": "Shakespeare",
    },
    {
        "id": "ae2",
        "question": "What is the capital of France?",
        "context": "Paris is the capital of France.",
        "reference": "Paris",
        "candidate": "Lyon",
    },
    {
        "id": "ae3",
        "question": "How many legs does a spider have?",
        "context": None,
        "reference": "eight",
        "candidate": "8",
    },
]
AE_KEY = [
    {"id": "ae1", "majority_label": True},
    {"id": "ae2", "majority_label": "not_equivalent"},
    {"id": "ae3", "majority_label": None},  # tied votes: unresolved
]


def test_judge_validate_end_to_end(
    llama_server: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    inputs = write_jsonl(tmp_path / "inputs.jsonl", AE_ITEMS)
    key = write_jsonl(tmp_path / "key.jsonl", AE_KEY)
    out = tmp_path / "agreement.json"
    args = ["judge-validate", "--inputs", str(inputs), "--key", str(key), "--output", str(out)]
    args += ["--base-url", llama_server, "--model", "smollm2", "--response-format", "json_object"]
    args += ["--max-tokens", str(MAX_TOKENS), "--cache", str(tmp_path / "c.sqlite")]
    assert cli.main(args) == 0
    printed = json.loads(capsys.readouterr().out)
    report = json.loads(out.read_text())
    assert printed == {k: v for k, v in report.items() if k != "items"}
    assert report["judge_calls"]["model_calls"] >= 3
    items = report["items"]
    assert [i["id"] for i in items] == ["ae1", "ae2", "ae3"]
    assert [i["label"] for i in items] == [True, False, None]
    # the figures, recomputed from the real verdicts and the labels
    resolved = [i for i in items if i["label"] is not None]
    decided = [i for i in resolved if i["error"] is None and i["equivalent"] is not None]
    tp = sum(i["label"] and i["equivalent"] for i in decided)
    tn = sum(not i["label"] and not i["equivalent"] for i in decided)
    fp = sum(not i["label"] and i["equivalent"] for i in decided)
    fn = sum(i["label"] and not i["equivalent"] for i in decided)
    assert report["confusion"] == {"tp": tp, "tn": tn, "fp": fp, "fn": fn}
    assert report["n_items"] == 3 and report["n_unresolved"] == 1 and report["n_resolved"] == 2
    assert report["n_decided"] == len(decided)
    assert report["n_errors"] == sum(i["error"] is not None for i in resolved)
    assert report["accuracy"] == (tp + tn) / 2
    assert report["balanced_accuracy"] == (tp / 1 + tn / 1) / 2
    kappa = kappa_from_counts(tp, tn, fp, fn)
    assert report["cohen_kappa"] == (None if kappa is None else pytest.approx(kappa))
    assert report["judge"]["judge_prompt_sha256"] == prompt_sha256()
    for item in items:
        if item["error"] is None:
            assert_valid_verdict(item)
    # a rerun judges nothing again
    assert cli.main(args) == 0
    assert json.loads(capsys.readouterr().out)["judge_calls"]["model_calls"] == 0
