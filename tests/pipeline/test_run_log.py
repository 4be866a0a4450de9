"""Run logs (pipeline/run_log.py): a stage's ``.stats.json`` keeps the facts, its run log under
``logs/`` the run's observations, which are read back only while the outputs they describe
still hold the bytes the run wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compressbench.jsonl import write_jsonl
from compressbench.pipeline.run_log import log_file, read_observations, split, write_stats

STATS = "data/answers/builtin/recency/0.3.stats.json"
ANSWERS = "data/answers/builtin/recency/0.3.jsonl"
FACTS = ("model_id", "requests")


def test_a_run_log_lives_under_logs_beside_where_its_stats_live() -> None:
    assert log_file(STATS) == Path("logs/answers/builtin/recency/0.3.json")
    assert log_file("data/deletions/sgd/answers.stats.json") == Path(
        "logs/deletions/sgd/answers.json"
    )
    assert log_file("data/keepbench/verdicts/first_n/lexical/1.0.stats.json") == Path(
        "logs/keepbench/verdicts/first_n/lexical/1.0.json"
    )
    with pytest.raises(ValueError, match=r"ends in \.stats\.json"):
        log_file("data/answers/builtin/recency/0.3.jsonl")


def test_a_key_not_named_a_fact_is_an_observation() -> None:
    facts, observed = split({"model_id": "m", "requests": 2, "new_counter": 7}, FACTS)
    assert facts == {"model_id": "m", "requests": 2}
    assert observed == {"new_counter": 7}


def _write_run(root: Path, seconds: float, pid: int) -> None:
    write_jsonl(root / ANSWERS, [{"output": "Paris"}])
    stats = {"model_id": "m", "requests": 1, "generation_seconds": seconds, "pid": pid}
    write_stats(root / STATS, stats, FACTS, describes=[root / ANSWERS])


def test_two_runs_write_the_same_stats_and_log_their_own_timings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _write_run(Path("."), seconds=1.5, pid=10)
    first = Path(STATS).read_bytes()
    assert json.loads(first) == {"model_id": "m", "requests": 1}
    assert read_observations(STATS) == {"generation_seconds": 1.5, "pid": 10}

    _write_run(Path("."), seconds=0.2, pid=11)
    assert Path(STATS).read_bytes() == first  # the declared output: the same bytes
    assert read_observations(STATS) == {"generation_seconds": 0.2, "pid": 11}
    # a project read from elsewhere (scripts/gpu_check.py reads its project folder)
    monkeypatch.chdir(tmp_path.parent)
    assert read_observations(STATS, root=tmp_path)["pid"] == 11


def test_a_log_is_ignored_once_what_it_describes_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert read_observations(STATS) == {}  # no run log (outputs pulled from a DVC remote)
    _write_run(Path("."), seconds=1.5, pid=10)
    write_jsonl(ANSWERS, [{"output": "Rome"}])  # another run's answers, pulled over these
    assert read_observations(STATS) == {}
    Path(ANSWERS).unlink()
    assert read_observations(STATS) == {}
    log_file(STATS).write_text("{not json", encoding="utf-8")
    assert read_observations(STATS) == {}
