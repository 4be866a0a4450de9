"""The P1 semantic judge without a model: its prompt, schema parsing, retries and error rows
through a real HTTP server that never answers JSON, agreement arithmetic, MLflow logging, and
bad input of ``judge-validate`` / ``judge-p1``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from compressbench import cli
from compressbench.analysis.agreement import binary_agreement, cohen_kappa, kappa_from_counts
from compressbench.errors import InputError
from compressbench.readers.base import ChatRequest
from compressbench.readers.cache import AnswerCache, cache_key
from compressbench.readers.registry import get_reader
from compressbench.readers.structured import NOT_JSON, parse_object, response_format
from compressbench.readers.structured_run import AttemptReader
from compressbench.tpbench.judge.judge import build_judge
from compressbench.tpbench.judge.p1 import judge_p1_rows, read_p1_rows, summarize, summarize_by
from compressbench.tpbench.judge.prompt import (
    PROMPT_FILE,
    SCHEMA_NAME,
    VERDICT_SCHEMA,
    judge_prompt,
    prompt_sha256,
)
from support.verdict_proxy import ALWAYS, VerdictProxy

pytest.importorskip("openai")
pytest.importorskip("jsonschema")

GOOD = {
    "id": "a",
    "equivalent": None,
    "core_goal": "uncertain",
    "reference_type": "not_goal",
    "reason": "r",
}


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# -- the released prompt ---------------------------------------------------------------------


def test_prompt_is_the_released_file_verbatim(release_dir: Path) -> None:
    released = (release_dir / "tpbench_p1_judge_prompt.txt").read_bytes()
    assert PROMPT_FILE.read_bytes() == released
    assert prompt_sha256() == hashlib.sha256(released).hexdigest()
    assert len(judge_prompt()) == 2138
    assert judge_prompt().startswith("You evaluate semantic answer equivalence")


# -- reading a verdict -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (json.dumps(GOOD), None),
        ("Verdict:\n```json\n" + json.dumps({**GOOD, "equivalent": True}) + "\n```", None),
        ("The candidate is equivalent.", NOT_JSON),
        ('{"id": "a", "equivalent": tru', NOT_JSON),
        (json.dumps({**GOOD, "equivalent": "yes"}), "invalid:equivalent: 'yes' is not of type"),
        (json.dumps({**GOOD, "core_goal": "mostly"}), "invalid:core_goal: 'mostly' is not one"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "reason"}), "invalid:object: 'reason'"),
        (json.dumps({**GOOD, "score": 1}), "invalid:object: Additional properties"),
    ],
)
def test_parse_verdict(text: str, error: str | None) -> None:
    parsed = parse_object(text, VERDICT_SCHEMA)
    if error is None:
        assert parsed.error is None and parsed.value is not None
        assert set(parsed.value) == set(GOOD)
    else:
        assert parsed.value is None and parsed.error is not None
        assert parsed.error.startswith(error)


def test_response_format_styles() -> None:
    assert response_format("json_schema", SCHEMA_NAME, VERDICT_SCHEMA) == {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAME, "schema": VERDICT_SCHEMA, "strict": True},
    }
    assert response_format("json_object", "x", VERDICT_SCHEMA) == {
        "type": "json_object",
        "schema": VERDICT_SCHEMA,
    }
    assert response_format("none", "x", VERDICT_SCHEMA) is None
    with pytest.raises(ValueError, match="allowed: json_object, json_schema, none"):
        response_format("grammar", "x", VERDICT_SCHEMA)


def test_response_format_is_in_the_cache_key_and_attempts_change_it() -> None:
    req = ChatRequest("a", "system", "user", 512)
    plain = get_reader("openai", model="m", base_url="http://127.0.0.1:9/v1")
    fmt = response_format("json_schema", SCHEMA_NAME, VERDICT_SCHEMA)
    structured = get_reader(
        "openai", model="m", base_url="http://127.0.0.1:9/v1", response_format=fmt
    )
    assert plain.decoding() == {"temperature": 0.0, "top_p": 1.0}  # old keys unchanged
    assert structured.decoding() == {"temperature": 0.0, "top_p": 1.0, "response_format": fmt}
    keys = {
        cache_key(plain, req),
        cache_key(structured, req),
        cache_key(AttemptReader(structured, 1), req),
        cache_key(AttemptReader(structured, 2), req),
    }
    assert len(keys) == 4
    assert cache_key(AttemptReader(structured, 0), req) == cache_key(structured, req)


# -- retries and error rows through a real HTTP server that never answers JSON ----------------


def scored_rows() -> list[dict[str, Any]]:
    base = {"dataset": "sgd", "seed": 42, "ratio": 0.3, "dialogue_id": "1_00001"}
    return [
        {**base, "probe_type": "P1", "probe_id": "q1", "method": "recency",
         "gold": "I want to find a restaurant in the west.", "prediction": "find a restaurant"},
        {**base, "probe_type": "P1", "probe_id": "q1", "method": "first_n",
         "gold": "I want to find a restaurant in the west.", "prediction": "find a restaurant"},
        {**base, "probe_type": "P1", "probe_id": "q2", "method": "recency",
         "gold": "Can you book me a hotel?", "prediction": None},
        {**base, "probe_type": "P2", "probe_id": "q3", "method": "recency",
         "gold": "7 pm", "prediction": "7 pm"},
    ]  # fmt: skip


def test_unparseable_verdicts_are_retried_then_kept_as_errors(tmp_path: Path) -> None:
    scores = write_jsonl(tmp_path / "scores.jsonl", scored_rows())
    rows = read_p1_rows(scores)
    assert len(rows) == 3  # the P2 row is not judged
    assert rows[0][1] == rows[1][1]  # same pair under two methods: one item
    assert rows[2][1].candidate == ""  # no extracted answer: an empty candidate
    with VerdictProxy(None, ALWAYS) as proxy, AnswerCache(tmp_path / "c.sqlite") as cache:
        judge = build_judge("m", base_url=proxy.url, style="json_schema", retries=2)
        verdicts, run = judge_p1_rows(judge, rows, cache, progress=False)
        assert len(proxy.bodies) == 2 * 3  # two distinct items, three attempts each
        assert run.stats == {
            "requests": 2, "model_calls": 6, "cache_hits": 0, "retried": 2, "errors": 2
        }  # fmt: skip
        again, rerun = judge_p1_rows(
            build_judge("m", base_url=proxy.url, retries=2), rows, cache, progress=False
        )
        assert len(proxy.bodies) == 6  # every attempt came from the cache
        assert rerun.stats["model_calls"] == 0 and rerun.stats["cache_hits"] == 6
        with_more = build_judge("m", base_url=proxy.url, retries=3)
        judge_p1_rows(with_more, rows, cache, progress=False)
        assert len(proxy.bodies) == 8  # only the new fourth attempts were asked
    assert again == verdicts
    assert [v["probe_id"] for v in verdicts] == ["q1", "q1", "q2"]
    for v in verdicts:
        assert v["error"] == NOT_JSON and v["attempts"] == 3 and v["equivalent"] is None
        assert v["raw"].startswith("I think the candidate")
    body = proxy.bodies[0]
    assert body["messages"][0] == {"role": "system", "content": judge_prompt()}
    assert body["response_format"]["json_schema"]["schema"] == VERDICT_SCHEMA
    assert body["temperature"] == 0.0 and body["max_tokens"] == 512
    sent = json.loads(body["messages"][1]["content"])
    assert list(sent) == ["id", "question", "reference", "candidate"]  # no method, no context
    assert summarize(verdicts) == {
        "n": 3,
        "equivalent_true": 0,
        "equivalent_false": 0,
        "equivalent_null": 0,
        "errors": 3,
        "id_mismatches": 0,
        "semantic_accuracy": 0.0,
    }
    assert [(g["method"], g["n"]) for g in summarize_by(verdicts)] == [
        ("recency", 2),
        ("first_n", 1),
    ]


def test_summary_arithmetic() -> None:
    rows = [
        {"equivalent": True, "error": None, "judge_id": "a", "verdict_id": "a"},
        {"equivalent": True, "error": None, "judge_id": "b", "verdict_id": "B"},
        {"equivalent": False, "error": None},
        {"equivalent": None, "error": None},
        {"equivalent": None, "error": "not-json"},
    ]
    assert summarize(rows) == {
        "n": 5,
        "equivalent_true": 2,
        "equivalent_false": 1,
        "equivalent_null": 1,
        "errors": 1,
        "id_mismatches": 1,
        "semantic_accuracy": 0.4,
    }


# -- agreement with human labels -------------------------------------------------------------


def test_agreement_reproduces_the_papers_test_figures() -> None:
    """Paper §6.1.1: tp 201, tn 297, fp 64, fn 33 -> accuracy 0.837, balanced 0.841."""
    cells = [(True, True, 201), (False, False, 297), (False, True, 64), (True, False, 33)]
    labels = [label for label, _, n in cells for _ in range(n)]
    decisions = [d for _, d, n in cells for _ in range(n)]
    out = binary_agreement(labels, decisions, [False] * len(labels))
    assert out["n_resolved"] == 595
    assert out["confusion"] == {"tp": 201, "tn": 297, "fp": 64, "fn": 33}
    assert round(out["accuracy"], 3) == 0.837
    assert round(out["balanced_accuracy"], 3) == 0.841
    assert out["cohen_kappa"] == pytest.approx(kappa_from_counts(201, 297, 64, 33), abs=1e-12)
    assert round(out["cohen_kappa"], 4) == 0.6662


def test_kappa_library_and_formula_agree() -> None:
    pytest.importorskip("sklearn")
    labels = [True, True, False, False, True, False, True]
    decisions = [True, False, False, True, True, False, True]
    assert cohen_kappa(labels, decisions) == pytest.approx(kappa_from_counts(3, 2, 1, 1))
    assert cohen_kappa([True, True], [True, True]) is None  # chance agreement 1: undefined
    assert kappa_from_counts(2, 0, 0, 0) is None


def test_agreement_counts_ties_uncertain_and_errors() -> None:
    labels = [True, False, None, True, False, True]
    decisions = [True, True, True, None, False, True]
    errors = [False, False, False, False, False, True]
    out = binary_agreement(labels, decisions, errors)
    assert out["n_unresolved"] == 1 and out["n_resolved"] == 5
    assert out["n_uncertain"] == 1 and out["n_errors"] == 1 and out["n_decided"] == 3
    assert out["confusion"] == {"tp": 1, "tn": 1, "fp": 1, "fn": 0}
    assert out["accuracy"] == 2 / 5  # uncertain and error rows get no credit
    assert out["balanced_accuracy"] == (1 / 3 + 1 / 2) / 2
    assert binary_agreement([None], [True], [False])["accuracy"] is None


# -- MLflow ----------------------------------------------------------------------------------


def test_judge_p1_command_writes_verdicts_and_logs_to_mlflow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``judge-p1 --track`` end to end against a server that never answers JSON (fast)."""
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{(tmp_path / 'mlflow.db').as_posix()}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    scores = write_jsonl(tmp_path / "scores.jsonl", scored_rows())
    out, summary_file = tmp_path / "verdicts.jsonl", tmp_path / "summary.json"
    with VerdictProxy(None, ALWAYS) as proxy:
        args = ["judge-p1", "--input", str(scores), "--output", str(out)]
        args += ["--summary", str(summary_file), "--track", "--model", "judge-m"]
        args += ["--base-url", proxy.url, "--response-format", "json_object", "--retries", "1"]
        assert cli.main([*args, "--cache", str(tmp_path / "c.sqlite")]) == 0
    assert len(proxy.bodies) == 2 * 2  # two distinct items, two attempts each
    printed = json.loads(capsys.readouterr().out)
    verdicts = [json.loads(line) for line in out.read_text().splitlines()]
    assert [v["error"] for v in verdicts] == [NOT_JSON] * 3
    assert (
        printed["overall"] == summarize(verdicts) == json.loads(summary_file.read_text())["overall"]
    )
    assert [c["method"] for c in printed["by_cell"]] == ["recency", "first_n"]
    client = MlflowClient(tracking_uri=uri)
    run = client.get_run(printed["mlflow_run_id"])
    assert run.info.status == "FINISHED"
    assert run.data.params["judge_model"] == "judge-m"
    assert run.data.params["judge_prompt_sha256"] == prompt_sha256()
    assert run.data.params["judge_response_format"] == "json_object"
    assert run.data.tags["judge.prompt_sha256"] == prompt_sha256()
    assert run.data.tags["judge.model"] == "judge-m"
    assert run.data.metrics["semantic_accuracy"] == 0.0
    assert run.data.metrics["errors"] == 3.0
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"verdicts.jsonl", "summary.json"} <= artifacts


# -- bad input -------------------------------------------------------------------------------

ITEM = {"id": "ae1", "question": "q?", "context": "c.", "reference": "r", "candidate": "c"}
LABEL = {"id": "ae1", "majority_label": True}


@pytest.mark.parametrize(
    ("inputs", "key", "expected"),
    [
        ([{**ITEM, "candidate": 3}], [LABEL], ["inputs.jsonl", "line 1", "'candidate'"]),
        ([{k: v for k, v in ITEM.items() if k != "question"}], [LABEL], ["line 1", "'question'"]),
        ([{**ITEM, "id": ""}], [LABEL], ["inputs.jsonl", "line 1", "'id'"]),
        ([ITEM, ITEM], [LABEL], ["inputs.jsonl", "line 2", "duplicate id 'ae1'"]),
        ([ITEM], [{**LABEL, "majority_label": "maybe"}], ["key.jsonl", "'majority_label'"]),
        ([ITEM], [{"id": "ae1"}], ["key.jsonl", "line 1", "'majority_label'", "missing"]),
        ([ITEM], [LABEL, {**LABEL, "id": "ae9"}], ["key.jsonl", "id ae9", "not in"]),
        ([ITEM, {**ITEM, "id": 7}], [LABEL], ["inputs.jsonl", "id 7", "no key row"]),
        ([], [LABEL], ["inputs.jsonl", "no items"]),
        ("{not json\n", [LABEL], ["inputs.jsonl", "line 1", "invalid JSON"]),
    ],
)
def test_judge_validate_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], inputs: Any, key: Any, expected: list[str]
) -> None:
    inp = tmp_path / "inputs.jsonl"
    if isinstance(inputs, str):
        inp.write_text(inputs, encoding="utf-8")
    else:
        write_jsonl(inp, inputs)
    keyf = write_jsonl(tmp_path / "key.jsonl", key)
    out = tmp_path / "out.json"
    cache = tmp_path / "cache.sqlite"
    args = ["judge-validate", "--inputs", str(inp), "--key", str(keyf), "--output", str(out)]
    # nothing listens on port 9: judging would fail loudly, so the input is rejected first
    args += ["--base-url", "http://127.0.0.1:9/v1", "--cache", str(cache)]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("compressbench judge-validate:")
    for part in expected:
        assert part in err
    assert not out.exists() and not cache.exists()


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"probe_type": "P1", "prediction": "x"}, ["line 1", "'gold'"]),
        ({"probe_type": "P1", "gold": "g", "prediction": 5}, ["line 1", "'prediction'"]),
        ({"gold": "g", "prediction": "x"}, ["line 1", "'probe_type'"]),
        ({"probe_type": "P2", "gold": "g", "prediction": "x"}, ["no P1 rows"]),
    ],
)
def test_judge_p1_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], row: dict[str, Any], expected: list[str]
) -> None:
    scores = write_jsonl(tmp_path / "scores.jsonl", [row])
    out = tmp_path / "verdicts.jsonl"
    args = ["judge-p1", "--input", str(scores), "--output", str(out)]
    args += ["--base-url", "http://127.0.0.1:9/v1", "--cache", str(tmp_path / "c.sqlite")]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "scores.jsonl" in err
    for part in expected:
        assert part in err
    assert not out.exists()
    with pytest.raises(InputError):
        read_p1_rows(scores)


def test_unknown_response_format_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["judge-validate", "--inputs", "i", "--key", "k", "--response-format", "xml"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "json_object" in err and len(err.strip().splitlines()) == 1
