"""A fresh clone's cold ``dvc repro`` reproduces the committed ``dvc.lock`` byte for byte.

Real DVC, real git clones, a real MLflow sqlite store. Clone A (the ``clone_repo`` fixture:
the repository with the working tree's changes) runs a small grid (built-in corpus, two
methods, one probe per cell, the deletion experiment on one probe, KEEP-Bench's ``first_n`` on
one case per subset, the SmolLM2 smoke reader through llama.cpp) and commits ``dvc.lock``.
Clone B is a ``git clone`` of A with A's answer cache and no outputs: its cold ``dvc repro``
runs every stage again, in other processes at other times, so every run log holds other
timings and other MLflow run ids, and yet ``dvc.lock`` is A's and ``git status`` is clean
(run logs, data, the store and the cache are ignored; the report names no run id). The
timings still reach MLflow: B's store has each cell's model calls (none: the cache answered),
its compute times and KEEP-Bench's compression seconds, as B's run logs say.
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from compressbench.pipeline.run_log import LOGS, read_observations
from compressbench.tracking.query import read_cells
from support.clone import run_in
from support.smoke import use_smoke_reader

pytestmark = pytest.mark.slow
pytest.importorskip("llama_cpp")

SMALL = {
    "n_per_cell": 1,
    "seeds": [42],
    "ratios": [0.3],
    "methods": ["full_context", "recency"],
    "retention": {"ratios": [0.3], "methods": ["recency"]},
    "deletions": {"max_probes": 1, "max_new_tokens": 16},
}
KEEP_SMALL = {"max_per_subset": 1, "compressors": {"first_n": {}}}  # no model in KEEP-Bench
SHORT_ANSWERS = {"P1": 16, "P2": 16, "P3": 16}
CELL_STATS = "data/answers/builtin/full_context/0.3.stats.json"
DELETION_STATS = "data/deletions/builtin/answers.stats.json"
KEEP_STATS = "data/keepbench/compressed/first_n/1.0.stats.json"
REPORT = "reports/tpbench.md"
RUN_ID = re.compile(r"`[0-9a-f]{32}`")  # an MLflow run id as the report stage's runs.md prints it
RUN_IDS = "logs/report/runs.md"  # the run log naming them (and the report run's artifact)


def _small_params(root: Path) -> None:
    path = root / "params.yaml"
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key, value in SMALL.items():
        raw[key] = {**raw[key], **value} if isinstance(value, dict) else value
    raw["keepbench"].update(KEEP_SMALL)
    use_smoke_reader(raw, backend="llamacpp")
    raw["reader"]["max_new_tokens"] = SHORT_ANSWERS
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")


def _git(root: Path, *args: str) -> str:
    return run_in(root, "git", *args).stdout


def _changed_lines(old: Path, new: Path) -> list[str]:
    diff = difflib.unified_diff(
        old.read_text(encoding="utf-8").splitlines(), new.read_text(encoding="utf-8").splitlines()
    )
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def _logs(root: Path) -> dict[str, dict]:
    return {
        p.relative_to(root).as_posix(): json.loads(p.read_text(encoding="utf-8"))["observed"]
        for p in sorted((root / LOGS).rglob("*.json"))
    }


def test_a_fresh_clones_cold_repro_keeps_the_committed_lock(
    tmp_path: Path, clone_repo: Callable[[Path], Path]
) -> None:
    a = clone_repo(tmp_path / "a")
    _small_params(a)
    _git(a, "add", "-A")  # the working tree's changes and the small grid, committed
    _git(a, "commit", "-q", "-m", "a small grid")
    run_in(a, "dvc", "repro")
    # run logs, data, MLflow, the answer cache: all ignored; only the lock is new
    assert _git(a, "status", "--porcelain").splitlines() == [" M dvc.lock"]
    _git(a, "commit", "-q", "-m", "its lock", "dvc.lock")
    a_logs = _logs(a)
    assert {
        "logs/answers/builtin/full_context/0.3.json",
        "logs/answers/builtin/recency/0.3.json",
        "logs/deletions/builtin/answers.json",
        "logs/keepbench/compressed/first_n/1.0.json",
        "logs/keepbench/verdicts/first_n/lexical/1.0.json",
    } <= set(a_logs)
    # the declared stats hold facts only: nothing a rerun changes
    facts = json.loads((a / CELL_STATS).read_text(encoding="utf-8"))
    assert facts["model_id"] and facts["requests"] > 0 and "decoding" in facts
    assert not {"generation_seconds", "process", "compute_started_at", "hits"} & set(facts)

    b = tmp_path / "b"
    subprocess.run(["git", "clone", "-q", str(a), str(b)], check=True)
    (b / ".cache").mkdir()
    shutil.copy2(a / ".cache" / "answers.sqlite", b / ".cache" / "answers.sqlite")
    run_in(b, "dvc", "repro")  # cold: no output in B, every stage runs

    b_logs = _logs(b)
    assert set(b_logs) == set(a_logs)
    cell_log = "logs/answers/builtin/full_context/0.3.json"
    assert a_logs[cell_log]["model_calls"] > 0 and b_logs[cell_log]["model_calls"] == 0
    assert a_logs[cell_log]["process"]["pid"] != b_logs[cell_log]["process"]["pid"]
    keep_log = "logs/keepbench/compressed/first_n/1.0.json"
    assert a_logs[keep_log]["started_at"] != b_logs[keep_log]["started_at"]

    # Every stage's lock entry is A's, the report's md5 included: the report names no MLflow
    # run id (random); runs.md, the report run's artifact and a run log, names them
    assert (b / "dvc.lock").read_bytes() == (a / "dvc.lock").read_bytes()
    assert (b / REPORT).read_bytes() == (a / REPORT).read_bytes()
    assert not RUN_ID.search((b / REPORT).read_text(encoding="utf-8"))
    changed = _changed_lines(a / RUN_IDS, b / RUN_IDS)
    assert changed and all("MLflow run" in line or RUN_ID.search(line) for line in changed)
    assert _git(b, "status", "--porcelain") == ""
    for stats in (CELL_STATS, DELETION_STATS, KEEP_STATS):
        assert (b / stats).read_bytes() == (a / stats).read_bytes(), stats

    # the run's timings reach B's MLflow store (params.yaml: sqlite:///mlflow.db in the repo)
    uri = f"sqlite:///{b / 'mlflow.db'}"
    observed = read_observations(CELL_STATS, root=b)
    started = datetime.fromtimestamp(observed["compute_started_at"], tz=UTC)
    runs = [
        r for r in read_cells(uri, "compressbench-tpbench") if r.params["method"] == "full_context"
    ]
    cells = [
        r for r in runs if r.params["probe"] in ("P1", "P2", "P3") and "condition" not in r.params
    ]
    assert len(cells) == 3  # one per probe type
    for run in cells:
        assert run.metrics["cell_model_calls"] == 0
        assert run.metrics["cell_wall_seconds"] == pytest.approx(observed["generation_seconds"])
        assert run.tags["compute.started_at"] == started.isoformat(timespec="milliseconds")
    deletion = read_observations(DELETION_STATS, root=b)["compute_started_at"]
    deleted = [r for r in runs if "condition" in r.params]
    assert deleted and all(
        r.tags["compute.started_at"]
        == datetime.fromtimestamp(deletion, tz=UTC).isoformat(timespec="milliseconds")
        for r in deleted
    )
    (keep,) = read_cells(uri, "compressbench-keepbench")
    keep_observed = read_observations(KEEP_STATS, root=b)
    assert keep.metrics["compress_seconds"] == pytest.approx(keep_observed["compress_seconds"])
