"""The real pipeline end to end: `dvc repro` in a git clone of the repository (the
``clone_repo`` fixture) with a small grid written into its params.yaml, the default offline
reader, a real MLflow sqlite store; reruns, parameter changes and a kill -9."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from compressbench.jsonl import read_jsonl
from compressbench.tracking import read_cells
from support.clone import clone_env, run_in
from support.paths import REPO_ROOT
from support.smoke import use_smoke_reader

pytestmark = pytest.mark.slow

SMALL = {
    "n_per_cell": 4,
    "seeds": [42],
    "ratios": [0.3],
    "methods": ["full_context", "recency"],
    "reader": {"batch_size": 4, "max_new_tokens": {"P1": 24, "P2": 24, "P3": 32}},
}


def _write_params(project: Path, **changes: object) -> None:
    """The clone's params.yaml: the repository's (as on disk) with SMALL and ``changes``."""
    raw = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    for key, value in {**SMALL, **changes}.items():
        if isinstance(value, dict) and isinstance(raw.get(key), dict):
            for sub, sub_value in value.items():
                if isinstance(sub_value, dict) and isinstance(raw[key].get(sub), dict):
                    raw[key][sub].update(sub_value)
                else:
                    raw[key][sub] = sub_value
        else:
            raw[key] = value
    use_smoke_reader(raw)
    raw["tracking"]["uri"] = f"sqlite:///{project / 'mlflow.db'}"
    (project / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))


def _run(project: Path, *args: str) -> str:
    proc = run_in(project, *args)
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, clone_repo: Callable[[Path], Path]) -> Path:
    """A git clone of the repository, a small grid in its params.yaml."""
    root = clone_repo(tmp_path_factory.mktemp("project") / "repo")
    _write_params(root)
    return root


def _ran(output: str, stage: str) -> bool:
    return f"Running stage '{stage}'" in output


def test_repro_runs_every_stage_and_tracks_every_cell(project: Path) -> None:
    out = _run(project, "dvc", "repro")
    for stage in (
        "corpus_source@builtin",
        "corpora@builtin",
        "transitions@builtin",
        "answers@builtin-recency-0.3",
        "metrics",
    ):
        assert _ran(out, stage), out
    summary = (project / "reports/summary.md").read_text()
    assert "| full_context |" in summary and "| recency |" in summary
    scores = list(read_jsonl(project / "data/scores/builtin/full_context/0.3.jsonl"))
    assert {r["probe_type"] for r in scores} == {"P1", "P2", "P3"}
    runs = read_cells(f"sqlite:///{project / 'mlflow.db'}", "compressbench-tpbench")
    deletion = [c for c in runs if "condition" in c.params]
    cells = [c for c in runs if c.params["probe"] != "retention" and c not in deletion]
    # one run per (dataset, probe, seed, ratio, method, reader): 1 x 3 x 1 x 1 x 2 x 1
    assert len(cells) == 6
    # one deletion-control run per condition that had probes, each a full-context P2 cell
    summary_conditions = json.loads((project / "metrics/deletions/builtin.json").read_text())
    measured = {e["condition"] for e in summary_conditions["conditions"] if e["n"]}
    assert {c.params["condition"] for c in deletion} == measured and len(deletion) == len(measured)
    assert all(c.params["probe"] == "P2" for c in deletion)
    retention = [c for c in runs if c.params["probe"] == "retention"]
    assert len(retention) == 2 * 4  # methods x retention ratios
    assert all("p2_retention" in c.metrics for c in retention)
    for cell in cells:
        assert cell.params["dataset"] == "builtin"
        assert "model.revision" in cell.tags and len(cell.tags["model.revision"]) == 64
        assert "strict" in cell.metrics and "format_error_rate" in cell.metrics
        assert any(k.startswith("sha256.output.") for k in cell.tags)
    metrics_show = _run(project, "dvc", "metrics", "show")
    assert "builtin" in metrics_show


def test_second_repro_changes_nothing(project: Path) -> None:
    stats = project / "data/answers/builtin/recency/0.3.stats.json"
    before = stats.read_bytes()
    start = time.perf_counter()
    out = _run(project, "dvc", "repro")
    elapsed = time.perf_counter() - start
    assert not any(_ran(out, f"answers@builtin-{m}-0.3") for m in ("recency", "full_context")), out
    assert not _ran(out, "metrics"), out
    assert stats.read_bytes() == before
    print(f"no-op dvc repro: {elapsed:.1f} s")


def test_new_ratio_runs_only_its_cells(project: Path) -> None:
    _write_params(project, ratios=[0.3, 0.5])
    out = _run(project, "dvc", "repro")
    assert _ran(out, "answers@builtin-recency-0.5"), out
    assert _ran(out, "answers@builtin-full_context-0.5"), out
    assert not _ran(out, "answers@builtin-recency-0.3"), out
    assert not _ran(out, "contexts@builtin-recency-0.3"), out
    _write_params(project)


def test_a_file_named_in_method_params_reruns_its_cells_when_it_changes(
    project: Path, tmp_path: Path
) -> None:
    schema = tmp_path / "schema.json"
    services = [{"service_name": "S", "slots": [{"name": "area", "is_categorical": True}]}]
    services[0]["slots"][0]["possible_values"] = ["north"]
    schema.write_text(json.dumps(services))
    params = {"turning_point": {"schema": str(schema)}}
    _write_params(
        project, methods=["full_context", "recency", "turning_point"], method_params=params
    )
    out = _run(project, "dvc", "repro")
    assert _ran(out, "contexts@builtin-turning_point-0.3"), out
    record = json.loads((project / "data/method_files/turning_point.json").read_text())
    digest = hashlib.sha256(schema.read_bytes()).hexdigest()
    assert record["files"]["schema"] == [
        {"path": str(schema), "files": [["schema.json", schema.stat().st_size, digest]]}
    ]
    # unchanged file: fingerprinting again reruns nothing after it
    _run(project, "dvc", "repro", "-f", "-s", "method_files@turning_point")
    out = _run(project, "dvc", "repro")
    assert not _ran(out, "contexts@builtin-turning_point-0.3"), out
    # edited in place: its fingerprint changes, and so its method's cells rerun, no other's
    services[0]["slots"][0]["possible_values"] = ["north", "centre"]
    schema.write_text(json.dumps(services))
    _run(project, "dvc", "repro", "-f", "-s", "method_files@turning_point")
    out = _run(project, "dvc", "repro")
    assert _ran(out, "contexts@builtin-turning_point-0.3"), out
    assert not _ran(out, "contexts@builtin-recency-0.3"), out
    _write_params(project)


def _cache_rows(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path) as db:
            return int(db.execute("select count(*) from answers").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_killed_answers_stage_resumes_to_identical_bytes(project: Path, tmp_path: Path) -> None:
    """kill -9 the answers stage mid-run, rerun: the file equals an uninterrupted run's."""
    cell = ["--dataset", "builtin", "--method", "full_context", "--ratio", "0.3"]
    answers = project / "data/answers/builtin/full_context/0.3.jsonl"
    reference = answers.read_bytes()  # written by an uninterrupted run (first test)
    cache = tmp_path / "fresh.sqlite"
    env = {**clone_env(project), "COMPRESSBENCH_ANSWER_CACHE": str(cache)}
    answers.unlink()
    proc = subprocess.Popen(
        ["compressbench", "stage", "answers", *cell],
        cwd=project,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 600
    while _cache_rows(cache) == 0 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert proc.poll() is None, "the stage finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    stored = _cache_rows(cache)
    assert stored > 0
    assert not answers.exists(), "a killed stage must leave no half-written output"
    subprocess.run(["compressbench", "stage", "answers", *cell], cwd=project, env=env, check=True)
    assert answers.read_bytes() == reference
    # identical prompts (e.g. P1 questions of one dialogue) share one cached answer
    assert stored <= _cache_rows(cache) <= len(reference.splitlines())


@pytest.mark.corpora
def test_real_corpora_by_changing_only_parameters(
    tmp_path: Path, corpora_dir: Path, clone_repo: Callable[[Path], Path]
) -> None:
    """SGD test and the MultiWOZ 2.2 subset from ../shared/corpora through the same pipeline:
    ``dvc repro metrics``, the TPBench stages the metrics read (corpora to scores); the stages
    no dataset changes (KEEP-Bench, the deletion experiment, the viewer, the report) run on the
    built-in corpus in test_repro_runs_every_stage_and_tracks_every_cell."""
    root = clone_repo(tmp_path / "real")
    _write_params(
        root,
        datasets=["sgd", "multiwoz"],
        methods=["uniform_stride"],
        n_per_cell=2,
        corpora={
            "sgd": {"path": str(corpora_dir / "sgd")},
            "multiwoz": {"path": str(corpora_dir / "multiwoz22")},
        },
    )
    out = _run(root, "dvc", "repro", "metrics")
    assert not any(_ran(out, s) for s in ("keep_cases", "deletions@sgd", "report")), out
    for dataset in ("sgd", "multiwoz"):
        rows = list(read_jsonl(root / f"data/scores/{dataset}/uniform_stride/0.3.jsonl"))
        assert {r["probe_type"] for r in rows} == {"P1", "P2", "P3"}
        assert all(r["dataset"] == dataset for r in rows)
    metrics = yaml.safe_load((root / "metrics/tpbench.json").read_text())
    assert set(metrics) == {"sgd", "multiwoz"}
