"""Resumable retention runs: the outcome log is reused, survives kill -9, and rejects damage."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from compressbench.cli import main
from compressbench.compress.registry import get_method
from compressbench.corpora.loaders import load_corpus
from compressbench.errors import InputError
from compressbench.tpbench.retention import method_kept_text, retention_rows
from compressbench.tpbench.retention_log import RetentionLog
from support.paths import REPO_ROOT

METHODS = ["recency", "uniform_stride"]
RATIOS = [0.3, 0.7]


def without_seconds(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def counting(method: str, calls: list[str]) -> Any:
    fn = method_kept_text(get_method(method))

    def kept(dialogue: Any, t: Any, ratio: float) -> str:
        calls.append(dialogue.dialogue_id)
        return fn(dialogue, t, ratio)

    return kept


def test_log_gives_the_same_rows_and_is_never_recomputed(tmp_path: Path) -> None:
    plain = retention_rows(load_corpus("builtin"), METHODS, RATIOS)
    log_path = tmp_path / "ret.events.jsonl"
    calls: list[str] = []
    fns = {m: counting(m, calls) for m in METHODS}
    first = retention_rows(
        load_corpus("builtin"), METHODS, RATIOS, kept_text_fns=fns, log=RetentionLog(log_path)
    )
    assert without_seconds(first) == without_seconds(plain)
    n_calls = len(calls)
    assert n_calls > 0
    records = [json.loads(line) for line in log_path.read_text().splitlines()]
    dialogues_with_events = {r["dialogue_id"] for r in records}
    assert len(records) == len(dialogues_with_events) * len(METHODS) * len(RATIOS)
    assert all(len(r["dialogue_sha"]) == 64 and r["events"] for r in records)

    again = retention_rows(
        load_corpus("builtin"), METHODS, RATIOS, kept_text_fns=fns, log=RetentionLog(log_path)
    )
    assert len(calls) == n_calls  # everything came from the log
    assert again == first  # seconds too: they are the measured ones


def test_changed_parameters_or_ratio_are_measured_again(tmp_path: Path) -> None:
    log = RetentionLog(tmp_path / "log.jsonl")
    retention_rows(load_corpus("builtin"), ["random_seed42"], [0.3], log=log)
    n = len(log.records)
    retention_rows(load_corpus("builtin"), ["random_seed42"], [0.3, 0.5], log=log)
    assert len(log.records) == 2 * n  # only the new ratio was added
    calls: list[str] = []
    retention_rows(
        load_corpus("builtin"),
        ["random_seed42"],
        [0.3],
        kept_text_fns={"random_seed42": counting("random_seed42", calls)},
        method_params={"random_seed42": {"feature_model": "other"}},
        log=log,
    )
    assert len(log.records) == 3 * n  # other parameters: another fingerprint
    assert len({*calls}) == n


def test_a_torn_last_line_is_dropped_and_measured_again(tmp_path: Path) -> None:
    log_path = tmp_path / "log.jsonl"
    full = retention_rows(load_corpus("builtin"), METHODS, RATIOS, log=RetentionLog(log_path))
    lines = log_path.read_bytes().splitlines(keepends=True)
    # Keep 5 whole records and half of the 6th, as a kill -9 mid-write would.
    log_path.write_bytes(b"".join(lines[:5]) + lines[5][: len(lines[5]) // 2])
    log = RetentionLog(log_path)
    assert len(log.records) == 5
    assert log_path.read_bytes() == b"".join(lines[:5])  # the torn bytes are gone
    resumed = retention_rows(load_corpus("builtin"), METHODS, RATIOS, log=log)
    assert without_seconds(resumed) == without_seconds(full)
    assert len(log_path.read_text().splitlines()) == len(lines)


def test_a_damaged_line_inside_the_log_is_an_error_naming_it(tmp_path: Path) -> None:
    log_path = tmp_path / "log.jsonl"
    retention_rows(load_corpus("builtin"), ["recency"], [0.3], log=RetentionLog(log_path))
    lines = log_path.read_text().splitlines(keepends=True)
    lines[2] = '{"dataset": "builtin"}\n'
    log_path.write_text("".join(lines))
    with pytest.raises(InputError) as err:
        RetentionLog(log_path)
    assert str(log_path) in str(err.value) and "line 3" in str(err.value)


def test_cli_keeps_the_log_beside_the_output(tmp_path: Path) -> None:
    out = tmp_path / "ret.jsonl"
    args = ["retention", "--corpus", "builtin", "--methods", "recency", "--ratios", "0.3"]
    assert main([*args, "--output", str(out)]) == 0
    assert (tmp_path / "ret.events.jsonl").stat().st_size > 0
    assert main([*args, "--output", str(tmp_path / "b.jsonl"), "--no-log"]) == 0
    assert not (tmp_path / "b.events.jsonl").exists()
    assert without_seconds(read(out)) == without_seconds(read(tmp_path / "b.jsonl"))


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_killed_retention_run_resumes_to_the_same_table(tmp_path: Path) -> None:
    """kill -9 a real `compressbench retention` run mid-way; the rerun finishes from its log."""
    argv = ["--corpus", "builtin", "--methods", "embedding_mmr", "--ratios", "0.1,0.3,0.5,0.7"]
    whole = tmp_path / "whole.jsonl"
    assert main(["retention", *argv, "--output", str(whole), "--no-log"]) == 0

    out = tmp_path / "ret.jsonl"
    log_path = tmp_path / "ret.events.jsonl"
    run_cli = "import sys; from compressbench.cli import main; sys.exit(main(sys.argv[1:]))"
    cmd = [sys.executable, "-c", run_cli, "retention", *argv, "--output", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if log_path.exists() and len(log_path.read_bytes().splitlines()) >= 8:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not out.exists(), "a killed run must leave no output table"
    done_before = len(RetentionLog(log_path).records)
    assert 8 <= done_before < 48 * 4

    assert main(["retention", *argv, "--output", str(out)]) == 0
    assert without_seconds(read(out)) == without_seconds(read(whole))
    assert len(RetentionLog(log_path).records) > done_before


@pytest.mark.slow
def test_cli_params_file_reaches_the_selector_and_the_fingerprint(tmp_path: Path) -> None:
    import yaml

    project = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    project["method_params"] = {"embedding_mmr": {"trade_off": 1.0}}
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(project), encoding="utf-8")
    argv = ["retention", "--corpus", "builtin", "--methods", "embedding_mmr", "--ratios", "0.3"]
    assert main([*argv, "--output", str(tmp_path / "d.jsonl")]) == 0
    assert main([*argv, "--output", str(tmp_path / "p.jsonl"), "--params", str(params)]) == 0
    logged = read(tmp_path / "p.events.jsonl")
    assert {r["fingerprint"] for r in logged} == {'embedding_mmr{"trade_off":1.0}'}
    assert {r["fingerprint"] for r in read(tmp_path / "d.events.jsonl")} == {"embedding_mmr{}"}
    # Pure relevance (trade_off 1) keeps other turns than the published 0.5.
    assert without_seconds(read(tmp_path / "p.jsonl")) != without_seconds(
        read(tmp_path / "d.jsonl")
    )
