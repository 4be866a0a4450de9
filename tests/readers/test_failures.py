"""A cell whose model calls raised fails its stage: one line naming the cell, the count and the
cause, exit 1, no traceback, nothing written. The real setup: the ``openai`` reader (and KEEP's
``llm`` compressor on it) pointed at a loopback port nothing listens on, driven through the CLI
as DVC runs it; below the threshold a cell is written with its error rows and a warning."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from compressbench import stages
from compressbench.config import parse_params
from compressbench.errors import ModelCallsFailed
from compressbench.keepbench.stages import keep_paths
from compressbench.readers.failures import MAX_FAILED_FRACTION, check_model_calls
from compressbench.tpbench.stages import paths
from support.http_server import free_port
from support.params import RATIO, pipeline_params, sqlite_tracking

REFUSED = "exception:APIConnectionError:Connection error."


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``compressbench ARGS`` as DVC runs it (a fresh process in the project folder)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MLFLOW_"))}
    env["COMPRESSBENCH_ANSWER_CACHE"] = str(cwd / "answers.sqlite")
    cmd = [str(Path(sys.executable).parent / "compressbench"), *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _error_line(stderr: str) -> str:
    """The command's one error line (stderr also carries the stages' INFO log lines)."""
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("compressbench ")]
    assert len(errors) == 1, stderr
    return errors[0]


def test_the_threshold_counts_only_calls_that_raised(caplog: pytest.LogCaptureFixture) -> None:
    ten = [None] * 9 + ["exception:KeyError:'cache_position'"]
    with caplog.at_level(logging.WARNING):
        check_model_calls("answers cell c", ten)  # 1 of 10 = the threshold: kept, warned
    assert "answers cell c: 1 of 10 answers failed: exception:KeyError:'cache_position'" in (
        caplog.text
    )
    check_model_calls("answers cell c", [None, "format: no JSON object", None])  # not raised
    check_model_calls("answers cell c", [])
    mixed = ["exception:KeyError:'cache_position'"] * 2 + ["exception:RuntimeError:out\nof memory"]
    with pytest.raises(ModelCallsFailed) as err:
        check_model_calls("answers cell c", [*mixed, None])
    assert str(err.value) == (
        "answers cell c: 3 of 4 answers failed: exception:KeyError:'cache_position' "
        "(most common, 2 of them; 2 distinct); nothing written (more than 10% failed)"
    )
    with pytest.raises(ModelCallsFailed, match="1 of 1 verdicts failed: exception:X:y"):
        check_model_calls("judge", ["exception:X:y"], noun="verdicts", max_fraction=1.0)
    assert MAX_FAILED_FRACTION == 0.1


def test_answers_cell_against_a_dead_server_fails_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    raw = pipeline_params(
        n_per_cell=3,
        methods=["recency"],
        deletions={"enabled": False},
        reader={
            "backend": "openai",
            "model": "served-model",
            "base_url": f"http://127.0.0.1:{free_port()}/v1",  # nothing listens there
            "max_retries": 0,
            "concurrency": 1,
        },
        tracking=sqlite_tracking(tmp_path, "failures"),
    )
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    params = parse_params(raw, "params.yaml")
    stages.stage_corpora(params, "builtin")
    stages.stage_probes(params, "builtin", RATIO)
    stages.stage_contexts(params, "builtin", "recency", RATIO)
    cell = paths.CellFiles("builtin", "recency", RATIO)
    n = sum(1 for _ in cell.contexts.open(encoding="utf-8"))
    assert n >= 3

    proc = _cli(tmp_path, "stage", "answers", "--dataset", "builtin", "--method", "recency",
                "--ratio", str(RATIO))  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert _error_line(proc.stderr) == (
        f"compressbench stage: error: answers cell builtin recency r={RATIO}: {n} of {n} "
        f"answers failed: {REFUSED}; nothing written (more than 10% failed)"
    )
    assert not cell.answers.exists() and not cell.answer_stats.exists()
    assert not list(cell.answers.parent.glob(".*.tmp"))  # no temp file left either


def test_keep_llm_compressor_against_a_dead_server_fails_in_one_line(tmp_path: Path) -> None:
    raw = yaml.safe_load((Path(__file__).parents[2] / "params.yaml").read_text())
    llm = {
        "backend": "openai",
        "model": "served-model",
        "max_new_tokens": 16,
        "reader_options": {"base_url": f"http://127.0.0.1:{free_port()}/v1", "max_retries": 0},
    }
    raw["keepbench"].update(compressors={"llm": llm}, max_per_subset=1)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    assert _cli(tmp_path, "stage", "keep_cases").returncode == 0
    proc = _cli(tmp_path, "stage", "keep_compressed", "--compressor", "llm")
    assert proc.returncode == 1, proc.stderr
    line = _error_line(proc.stderr)
    assert line.startswith("compressbench stage: error: keep_compressed llm x1.0: "), line
    n = line.split(": ")[3].split(" of ")[0]
    assert line.endswith(
        f"{n} of {n} compressions failed: {REFUSED}; nothing written (more than 10% failed)"
    ), line
    assert not (tmp_path / keep_paths.COMPRESSED_CELL.format(compressor="llm")).exists()
