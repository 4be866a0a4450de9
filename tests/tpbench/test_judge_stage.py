"""The judge stage: off by default (a verdict file of one "not judged" row, no server contacted;
real DVC sees no empty output); on, it judges a
cell's P1 answers through a real local HTTP server, caches every verdict (a rerun asks nothing),
and logs the judge model, prompt hash and cell to a real MLflow store. One slow test runs it
against a real llama_cpp.server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import chdir
from pathlib import Path
from typing import Any

import pytest
import yaml

from compressbench import stages
from compressbench.config import Params, parse_params
from compressbench.errors import InputError
from compressbench.jsonl import read_jsonl, sha256_file, write_jsonl
from compressbench.readers.structured import NOT_JSON
from compressbench.tpbench.judge.prompt import CORE_GOALS, prompt_sha256
from compressbench.tpbench.judge.verdict_file import read_verdicts
from compressbench.tpbench.pipeline_spec import JUDGE
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.report_inputs import load_verdicts
from compressbench.tracking import read_pipeline_runs
from support.params import pipeline_params, sqlite_tracking
from support.verdict_proxy import ALWAYS, NEVER, VerdictProxy

pytest.importorskip("openai")
pytest.importorskip("jsonschema")

CELL = ("builtin", "recency", 0.3)
HOTEL = {"gold": "Can you book me a hotel in Paris?", "prediction": "book a hotel in Paris"}
FOOD = {"gold": "I want to find a restaurant in the west.", "prediction": "find a restaurant"}


def _params(tmp_path: Path, **judge: Any) -> Params:
    raw = pipeline_params(
        grid=False,
        ratios=[0.3],
        methods=["full_context", "recency"],
        judge=judge,
        tracking=sqlite_tracking(tmp_path, "judge"),
    )
    return parse_params(raw, "judge-params.yaml")


def _scores(rows: list[dict[str, Any]] | None = None) -> Path:
    """A scored cell file: two P1 answers (one repeated under another seed) and a P2 answer."""
    base = {"dataset": "builtin", "probe_type": "P1", "seed": 42, "method": "recency"}
    rows = rows or [
        {**base, **HOTEL, "probe_id": "builtin:d1:qa00", "dialogue_id": "d1"},
        {**base, **HOTEL, "probe_id": "builtin:d1:qa00", "dialogue_id": "d1", "seed": 7},
        {**base, **FOOD, "probe_id": "builtin:d2:qa00", "dialogue_id": "d2"},
        {**base, "probe_type": "P2", "probe_id": "builtin:d2:qa01", "gold": "7 pm"},
    ]
    path = paths.fill(paths.SCORES, *CELL)
    write_jsonl(path, rows)
    return path


@pytest.fixture()
def cell_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(tmp_path / "answers.sqlite"))
    return tmp_path


def test_disabled_writes_a_not_judged_row_and_asks_nobody(cell_dir: Path) -> None:
    _scores()
    params = _params(cell_dir)
    assert JUDGE.of(params).enabled is False  # the default
    with VerdictProxy(None, NEVER) as proxy:
        params = _params(cell_dir, base_url=proxy.url)
        out = stages.stage_judge(params, *CELL)
    assert out == Path("data/verdicts/builtin/recency/0.3.jsonl")
    assert list(read_jsonl(out)) == [{"not_judged": "judge.enabled is false"}]
    assert read_verdicts(out) == []  # what the report reads: not judged
    assert load_verdicts(["builtin"], ["recency"], [0.3]) == {}
    assert proxy.bodies == []
    assert not (cell_dir / "answers.sqlite").exists()


def test_dvc_status_after_a_disabled_judge_warns_about_nothing(tmp_path: Path) -> None:
    """Real DVC runs the stage through the CLI (judging off): ``dvc status`` is up to date and
    says nothing about an empty output."""
    pytest.importorskip("dvc")
    (tmp_path / "params.yaml").write_text(
        yaml.safe_dump(
            pipeline_params(grid=False, ratios=[0.3], methods=["recency"], judge={"enabled": False})
        ),
        encoding="utf-8",
    )
    with chdir(tmp_path):
        scores, out = _scores(), paths.fill(paths.VERDICTS, *CELL)
    stage = {
        "cmd": f"{sys.executable} -m compressbench.cli stage judge --dataset builtin "
        "--method recency --ratio 0.3",
        "deps": [scores.as_posix()],
        "params": ["judge"],
        "outs": [out.as_posix()],
    }
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"judge": stage}}))
    env = {**os.environ, "COMPRESSBENCH_ANSWER_CACHE": str(tmp_path / "answers.sqlite")}

    def dvc(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "dvc", *args]
        return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)

    assert dvc("init", "--no-scm", "-q").returncode == 0
    repro = dvc("repro")
    assert repro.returncode == 0, repro.stderr
    status = dvc("status")
    assert status.returncode == 0 and status.stdout.strip() == "Data and pipelines are up to date."
    assert "empty" not in status.stderr + repro.stderr, status.stderr + repro.stderr
    assert read_verdicts(tmp_path / out) == [] and (tmp_path / out).stat().st_size > 0


def test_enabled_judges_p1_caches_and_logs_to_mlflow(cell_dir: Path) -> None:
    scores = _scores()
    with VerdictProxy(None, ALWAYS) as proxy:
        params = _params(cell_dir, enabled=True, model="judge-m", base_url=proxy.url, retries=1)
        out = stages.stage_judge(params, *CELL)
        assert len(proxy.bodies) == 2 * 2  # two distinct items, two attempts each
        first = out.read_bytes()
        stages.stage_judge(params, *CELL)  # DVC reruns the stage: every verdict from the cache
        assert len(proxy.bodies) == 4
    assert out.read_bytes() == first
    verdicts = list(read_jsonl(out))
    assert [(v["probe_id"], v["seed"]) for v in verdicts] == [
        ("builtin:d1:qa00", 42),
        ("builtin:d1:qa00", 7),
        ("builtin:d2:qa00", 42),
    ]  # P1 rows only, in file order
    for v in verdicts:
        assert (v["dataset"], v["method"], v["ratio"]) == CELL
        assert v["error"] == NOT_JSON and v["attempts"] == 2 and v["equivalent"] is None
    body = proxy.bodies[0]
    assert body["model"] == "judge-m" and body["response_format"]["type"] == "json_schema"
    runs = [r for r in read_pipeline_runs(params.tracking.uri, "judge")]
    assert len(runs) == 2  # one per invocation
    run = runs[-1]
    assert run.tags["dvc.stage"] == "judge@builtin-recency-0.3"
    assert run.tags["judge.model"] == "judge-m"
    assert run.tags["judge.prompt_sha256"] == prompt_sha256()
    assert run.params["judge_prompt_sha256"] == prompt_sha256()
    assert (run.params["dataset"], run.params["method"], run.params["ratio"]) == (
        "builtin",
        "recency",
        "0.3",
    )
    assert run.tags["sha256.input.data/scores/builtin/recency/0.3.jsonl"] == sha256_file(scores)
    assert run.tags["sha256.output.data/verdicts/builtin/recency/0.3.jsonl"] == sha256_file(out)
    assert run.metrics["errors"] == 3.0 and run.metrics["semantic_accuracy"] == 0.0
    assert run.metrics["calls.model_calls"] == 0.0  # the rerun's calls: none
    assert [r.metrics["calls.model_calls"] for r in runs] == [4.0, 0.0]


def test_a_cell_without_p1_answers_judges_nothing(cell_dir: Path) -> None:
    _scores([{"dataset": "builtin", "probe_type": "P2", "probe_id": "x", "gold": "7 pm"}])
    with VerdictProxy(None, ALWAYS) as proxy:
        out = stages.stage_judge(_params(cell_dir, enabled=True, base_url=proxy.url), *CELL)
    assert proxy.bodies == []
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows == [{"not_judged": "no P1 answers in data/scores/builtin/recency/0.3.jsonl"}]
    assert read_verdicts(out) == []  # what the report reads: nothing judged


def test_bad_p1_row_is_named_before_any_judging(cell_dir: Path) -> None:
    base = {"dataset": "builtin", "probe_type": "P1", "seed": 42, "probe_id": "p"}
    _scores([{**base, **HOTEL}, {**base, "prediction": "x"}])  # line 2: no gold
    with VerdictProxy(None, ALWAYS) as proxy:
        params = _params(cell_dir, enabled=True, base_url=proxy.url)
        with pytest.raises(InputError) as err:
            stages.stage_judge(params, *CELL)
    assert str(err.value) == (
        "file data/scores/builtin/recency/0.3.jsonl, record line 2, field 'gold': "
        "expected a string, got NoneType"
    )
    assert proxy.bodies == [] and not paths.fill(paths.VERDICTS, *CELL).exists()


@pytest.mark.parametrize(
    ("judge", "field"),
    [
        ({"enabled": "yes"}, "judge.enabled"),
        ({"response_format": "xml"}, "judge.response_format"),
        ({"retries": -1}, "judge.retries"),
        ({"judges": 1}, "judge"),
    ],
)
def test_bad_judge_params_name_the_field(tmp_path: Path, judge: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError, match=rf"judge-params\.yaml.*{field}"):
        _params(tmp_path, **judge)


@pytest.mark.slow
def test_judge_stage_against_a_real_server(cell_dir: Path, llama_server: str) -> None:
    """The stage end to end on llama_cpp.server (SmolLM2: the machinery, not the verdicts)."""
    _scores()
    with VerdictProxy(llama_server, NEVER) as proxy:
        params = _params(
            cell_dir,
            enabled=True,
            model="smollm2",
            base_url=proxy.url,
            response_format="json_object",
            max_tokens=160,
        )
        out = stages.stage_judge(params, *CELL)
        asked = len(proxy.bodies)
        stages.stage_judge(params, *CELL)
        assert len(proxy.bodies) == asked  # cached: never judged twice
    verdicts = list(read_jsonl(out))
    assert len(verdicts) == 3 and 2 <= asked <= 2 * 3
    for v in verdicts:
        if v["error"] is None:
            assert v["equivalent"] in (True, False, None) and v["core_goal"] in CORE_GOALS
    assert verdicts[0]["judge_id"] == verdicts[1]["judge_id"]  # one item, one verdict
    assert json.loads(proxy.bodies[0]["messages"][1]["content"])["question"]
