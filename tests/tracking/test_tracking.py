"""MLflow tracking and provenance, against a real sqlite MLflow store (no mocks)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compressbench.jsonl import sha256_file
from compressbench.tracking import (
    DEFAULT_EXPERIMENT,
    ENVIRONMENT_ARTIFACT,
    ENVIRONMENT_HASH_TAG,
    DatasetFile,
    TrackingError,
    cell_run_name,
    default_tracking_uri,
    git_info,
    log_cell,
    path_digest,
    read_cell_table,
    read_cells,
    read_manifest,
    read_pipeline_runs,
    resolve_tracking_uri,
    software_env,
    start_pipeline_run,
    verify_manifest,
    write_manifest,
)

mlflow = pytest.importorskip("mlflow")
from mlflow.tracking import MlflowClient  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

GIT = shutil.which("git")


def _git(repo: Path, *args: str) -> str:
    assert GIT is not None
    return subprocess.run(
        [GIT, "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repo with one commit, a probes input and a folder for scored outputs."""
    if GIT is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    (root / "data" / "probes").mkdir(parents=True)
    (root / "data" / "scores").mkdir(parents=True)
    (root / "data" / "probes" / "probes.jsonl").write_text('{"id": "sgd:1:0"}\n')
    (root / "params.yaml").write_text("seed: 0\n")
    _git(root, "init", "-q")
    _git(root, "add", "params.yaml")
    _git(root, "commit", "-q", "-m", "init")
    return root


@pytest.fixture(autouse=True)
def _no_env_uri(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)


def _cells() -> list[dict[str, object]]:
    return [
        {
            "dataset": "sgd",
            "probe": probe,
            "seed": 0,
            "ratio": ratio,
            "method": "recency",
            "reader": "smollm2",
        }
        for probe in ("P1", "P2")
        for ratio in (0.25, 0.5)
    ]


def _write_scores(repo: Path, i: int) -> Path:
    out = repo / "data" / "scores" / f"cell{i}.jsonl"
    out.write_text(json.dumps({"id": f"sgd:1:{i}", "correct": i % 2}) + "\n")
    return out


def _all_runs(client: MlflowClient, experiment: str = DEFAULT_EXPERIMENT) -> list:
    exp = client.get_experiment_by_name(experiment)
    assert exp is not None
    return client.search_runs([exp.experiment_id], max_results=1000)


def test_parent_and_cells_round_trip(repo: Path, store_uri: str) -> None:
    probes = repo / "data" / "probes" / "probes.jsonl"
    outputs: dict[str, Path] = {}
    with start_pipeline_run(
        "tpbench-default",
        {"seed": 0, "reader": {"model": "smollm2", "max_new_tokens": 32}},
        tracking_uri=store_uri,
        repo_root=repo,
        stage="score",
    ) as parent:
        for i, cell in enumerate(_cells()):
            scored = _write_scores(repo, i)
            name = cell_run_name(cell)
            outputs[name] = scored
            log_cell(
                parent,
                cell,
                params={"max_new_tokens": 32, "prompt": {"template": "v1"}},
                tags={"note": "unit"},
                metrics={
                    "P1": 0.5 + i / 10,
                    "format_error_rate": 0.0,
                    "tokens_in": 1200,
                    "tokens_per_s": 33.3,
                    "abstained": True,
                },
                artifacts=[scored],
                model_id="HuggingFaceTB/SmolLM2-135M-Instruct",
                model_revision="abc123",
                stage="score",
                inputs=[probes],
            )
        parent.log_metrics({"cells": 4})
        parent_id = parent.run_id

    client = MlflowClient(tracking_uri=store_uri)
    runs = {r.info.run_id: r for r in _all_runs(client)}
    assert len(runs) == 5
    p = runs[parent_id]
    assert p.info.status == "FINISHED"
    assert p.info.run_name == "tpbench-default"
    assert p.data.params["seed"] == "0"
    assert p.data.params["reader.model"] == "smollm2"
    assert p.data.params["reader.max_new_tokens"] == "32"
    assert p.data.tags["dvc.stage"] == "score"
    assert p.data.metrics["cells"] == 4.0
    assert "mlflow.parentRunId" not in p.data.tags

    head = _git(repo, "rev-parse", "HEAD")
    children = [r for rid, r in runs.items() if rid != parent_id]
    assert sorted(r.info.run_name for r in children) == sorted(outputs)
    for r in children:
        t, prm, m = r.data.tags, r.data.params, r.data.metrics
        assert r.info.status == "FINISHED"
        assert t["mlflow.parentRunId"] == parent_id
        assert t["model.id"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
        assert t["model.revision"] == "abc123"
        assert t["env.python"] == ".".join(map(str, sys.version_info[:3]))
        assert t["env.mlflow"] == importlib.metadata.version("mlflow")
        assert t["git.commit"] == head
        assert t["git.dirty"] == "false"
        assert t["mlflow.source.git.commit"] == head
        assert t["dvc.stage"] == "score"
        assert t["note"] == "unit"
        assert t["sha256.input.data/probes/probes.jsonl"] == sha256_file(probes)
        scored = outputs[r.info.run_name]
        assert t[f"sha256.output.data/scores/{scored.name}"] == sha256_file(scored)
        assert prm["dataset"] == "sgd"
        assert prm["seed"] == "0"
        assert prm["ratio"] in {"0.25", "0.5"}
        assert prm["method"] == "recency"
        assert prm["reader"] == "smollm2"
        assert prm["max_new_tokens"] == "32"
        assert prm["prompt.template"] == "v1"
        assert m["format_error_rate"] == 0.0
        assert m["tokens_in"] == 1200.0
        assert m["tokens_per_s"] == pytest.approx(33.3)
        assert m["abstained"] == 1.0
        assert 0.5 <= m["P1"] <= 0.8
        arts = [a.path for a in client.list_artifacts(r.info.run_id)]
        assert arts == [scored.name]
        local = client.download_artifacts(r.info.run_id, scored.name, str(repo.parent / "dl"))
        assert sha256_file(local) == sha256_file(scored)

    # The reader sees the same cells, with artifacts, and can filter by parent.
    cells = read_cells(store_uri, with_artifacts=True)
    assert len(cells) == 4
    assert {c.parent_run_id for c in cells} == {parent_id}
    assert all(c.artifacts and c.artifacts[0].startswith("cell") for c in cells)
    assert cells[0].params["dataset"] == "sgd" and "P1" in cells[0].metrics
    assert [r.run_id for r in read_pipeline_runs(store_uri)] == [parent_id]
    assert read_cells(store_uri, parent_run_id="nope") == []


def test_artifacts_stay_beside_the_sqlite_store(
    repo: Path, store_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with start_pipeline_run("p", tracking_uri=store_uri, repo_root=repo) as parent:
        log_cell(parent, {"dataset": "sgd"}, artifacts=[_write_scores(repo, 0)])
    assert not (elsewhere / "mlruns").exists()
    assert list((tmp_path / "store" / "mlartifacts").rglob("cell0.jsonl"))


def test_rerun_makes_a_new_parent(repo: Path, store_uri: str) -> None:
    for _ in range(2):
        with start_pipeline_run("same", tracking_uri=store_uri, repo_root=repo) as parent:
            log_cell(parent, {"dataset": "sgd", "seed": 1}, metrics={"P2": 1.0})
    parents = read_pipeline_runs(store_uri)
    assert len(parents) == 2 and parents[0].run_id != parents[1].run_id
    cells = read_cells(store_uri)
    assert {c.parent_run_id for c in cells} == {p.run_id for p in parents}


def test_tracking_uri_precedence(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    default = default_tracking_uri(repo)
    assert default == f"sqlite:///{(repo / 'mlflow.db').as_posix()}"
    assert resolve_tracking_uri(None, repo) == default

    env_uri = f"sqlite:///{(tmp_path / 'env' / 'mlflow.db').as_posix()}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", env_uri)
    assert resolve_tracking_uri(None, repo) == env_uri
    with start_pipeline_run("via-env", repo_root=repo) as parent:
        log_cell(parent, {"dataset": "sgd"})
        assert parent.tracking_uri == env_uri
    assert not (repo / "mlflow.db").exists()
    assert [r.run_name for r in read_pipeline_runs(env_uri)] == ["via-env"]
    assert len(read_cells()) == 1  # the reader follows the variable too

    explicit = f"sqlite:///{(tmp_path / 'explicit.db').as_posix()}"
    assert resolve_tracking_uri(explicit, repo) == explicit
    with start_pipeline_run("explicit", tracking_uri=explicit, repo_root=repo, experiment="x"):
        pass
    assert [r.run_name for r in read_pipeline_runs(explicit, "x")] == ["explicit"]

    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    with start_pipeline_run("default", repo_root=repo):
        pass
    assert (repo / "mlflow.db").is_file()
    assert [r.run_name for r in read_pipeline_runs(default)] == ["default"]


def test_failure_marks_parent_failed_and_propagates(repo: Path, store_uri: str) -> None:
    with (
        pytest.raises(ZeroDivisionError),
        start_pipeline_run("boom", tracking_uri=store_uri, repo_root=repo),
    ):
        _ = 1 / 0
    (run,) = read_pipeline_runs(store_uri)
    assert run.status == "FAILED"


def test_errors_are_loud(repo: Path, store_uri: str) -> None:
    with start_pipeline_run("errs", tracking_uri=store_uri, repo_root=repo) as parent:
        with pytest.raises(TrackingError, match="metric 'P1' is not a number"):
            log_cell(parent, {"dataset": "sgd"}, metrics={"P1": "high"})
        with pytest.raises(TrackingError, match="does not exist"):
            log_cell(parent, {"dataset": "sgd"}, artifacts=[repo / "missing.jsonl"])
        with pytest.raises(TrackingError, match="param 'seed'"):
            log_cell(parent, {"dataset": "sgd", "seed": 0}, params={"seed": 1})
        with pytest.raises(TrackingError, match="over MLflow"):
            log_cell(parent, {"dataset": "sgd"}, params={"huge": "x" * 7000})
        log_cell(parent, {"dataset": "sgd"})
        with pytest.raises(TrackingError, match="already logged"):
            log_cell(parent, {"dataset": "sgd"})
    with pytest.raises(TrackingError, match="no experiment"):
        read_cells(store_uri, "does-not-exist")
    bad = "sqlite:////proc/no/such/dir/mlflow.db"
    with pytest.raises(TrackingError), start_pipeline_run("x", tracking_uri=bad, repo_root=repo):
        pass


def test_large_batches_are_chunked(repo: Path, store_uri: str) -> None:
    params = {f"p{i}": i for i in range(250)}
    tags = {f"t{i}": i for i in range(150)}
    metrics = {f"m{i}": float(i) for i in range(1200)}
    with start_pipeline_run("big", tracking_uri=store_uri, repo_root=repo) as parent:
        log_cell(parent, {"dataset": "sgd"}, params=params, tags=tags, metrics=metrics)
    (cell,) = read_cells(store_uri)
    assert len(cell.params) == 251 and cell.params["p249"] == "249"
    assert cell.tags["t149"] == "149"
    assert len(cell.metrics) == 1200 and cell.metrics["m1199"] == 1199.0


def test_hundred_cells_are_all_logged(repo: Path, store_uri: str) -> None:
    scored = _write_scores(repo, 0)
    with start_pipeline_run("many", tracking_uri=store_uri, repo_root=repo) as parent:
        for i in range(100):
            log_cell(
                parent,
                {"dataset": "sgd", "seed": i},
                params={"max_new_tokens": 32},
                metrics={"P1": 0.1, "P2": 0.2, "P3": 0.3, "tokens_in": 100.0, "wall_s": 1.0},
                artifacts=[scored],
                model_id="m",
                model_revision="r",
                stage="score",
            )
    cells = read_cells(store_uri)
    assert sorted(int(c.params["seed"]) for c in cells) == list(range(100))  # speed: benchmarks/


def test_git_info_and_dirty_flag(repo: Path, tmp_path: Path) -> None:
    info = git_info(repo)
    assert info.commit == _git(repo, "rev-parse", "HEAD") and info.dirty is False
    (repo / "untracked.txt").write_text("new")  # untracked files do not make a tree dirty
    assert git_info(repo).dirty is False
    (repo / "params.yaml").write_text("seed: 1\n")
    assert git_info(repo).dirty is True
    outside = tmp_path / "plain"
    outside.mkdir()
    assert git_info(outside).commit is None


def test_software_env_is_cheap_and_complete() -> None:
    env = software_env()
    assert env["python"] == ".".join(map(str, sys.version_info[:3]))
    assert env["mlflow"] == importlib.metadata.version("mlflow")
    assert "platform" in env
    # Reading versions imports neither torch nor mlflow.
    code = (
        "import sys; from compressbench.tracking import software_env; e = software_env(); "
        "assert 'torch' not in sys.modules and 'mlflow' not in sys.modules, sorted(sys.modules); "
        "print(e['python'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    if importlib.util.find_spec("torch") is not None:
        # With torch already imported, CUDA facts are read (CPU here: cuda_available only).
        code = (
            "import json, torch; from compressbench.tracking import software_env; "
            "e = software_env(); print(json.dumps(e))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        env_t = json.loads(out.stdout.strip().splitlines()[-1])
        assert env_t["cuda_available"] in {"true", "false"}
        assert env_t["torch"] == importlib.metadata.version("torch")
        if env_t["cuda_available"] == "true":
            assert env_t["cuda_device"] and env_t["cuda_device_count"] != "0"


def test_manifest(tmp_path: Path) -> None:
    stage = tmp_path / "data" / "scores"
    (stage / "sub").mkdir(parents=True)
    (stage / "a.jsonl").write_text('{"x": 1}\n')
    (stage / "sub" / "b.jsonl").write_text('{"y": 2}\n')
    (stage / ".a.jsonl.123.tmp").write_text("half-written")
    src = tmp_path / "data" / "probes.jsonl"
    src.write_text("{}\n")
    target = stage / "manifest.json"
    m = write_manifest(target, [stage], stage="score", inputs=[src], root=tmp_path)
    on_disk = read_manifest(target)
    assert on_disk == m
    assert on_disk["stage"] == "score"
    assert on_disk["outputs"] == {
        "data/scores/a.jsonl": {"sha256": sha256_file(stage / "a.jsonl"), "bytes": 9},
        "data/scores/sub/b.jsonl": {"sha256": sha256_file(stage / "sub" / "b.jsonl"), "bytes": 9},
    }
    assert on_disk["inputs"] == {"data/probes.jsonl": {"sha256": sha256_file(src), "bytes": 3}}
    first = target.read_bytes()
    write_manifest(target, [stage], stage="score", inputs=[src], root=tmp_path)
    assert target.read_bytes() == first  # deterministic: same outputs, same bytes
    assert sorted(p.name for p in stage.iterdir() if p.name.endswith(".tmp")) == [
        ".a.jsonl.123.tmp"
    ]  # no temp file of our own left behind
    assert verify_manifest(target, root=tmp_path) == []
    (stage / "a.jsonl").write_text('{"x": 2}\n')
    assert verify_manifest(target, root=tmp_path) == ["data/scores/a.jsonl"]

    # Default root: the manifest's folder.
    m2 = write_manifest(target, [stage])
    assert sorted(m2["outputs"]) == ["a.jsonl", "sub/b.jsonl"]


def test_path_digest_of_folder_tracks_names_and_content(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "a").write_text("1")
    first = path_digest(d)
    (d / "a").rename(d / "b")
    second = path_digest(d)
    assert first != second
    (d / "b").write_text("2")
    assert path_digest(d) != second
    assert path_digest(d / "b") == sha256_file(d / "b")


def _probe_rows(n: int) -> list[dict[str, object]]:
    return [
        {"probe_id": f"sgd:d{i}:0", "probe_type": "P2", "seed": 0, "gold": f"v{i}", "n": i}
        for i in range(n)
    ]


def test_cell_table_dataset_input_and_compute_times(repo: Path, store_uri: str) -> None:
    probes = repo / "data" / "probes" / "probes.jsonl"
    probes.write_text("".join(json.dumps(r) + "\n" for r in _probe_rows(3)))
    table = [
        {
            "probe_id": f"sgd:d{i}:0",
            "question": "Question: city?",
            "output": '{"value": "x"}',
            "prediction": "x",
            "gold": f"v{i}",
            "abstain": 0,
            "score_strict": float(i == 1),
            "kept_turn_ids": [0, 2],
        }
        for i in range(3)
    ]
    started, ended = 1_700_000_000.1234, 1_700_000_042.5  # answers computed long ago (cache)
    before = int(time.time() * 1000)
    with start_pipeline_run("p", tracking_uri=store_uri, repo_root=repo) as parent:
        run_id = log_cell(
            parent,
            {"dataset": "sgd", "probe": "P2", "seed": 0},
            metrics={"strict": 1 / 3},
            table=table,
            datasets=[DatasetFile(probes)],
            started_at=started,
            ended_at=ended,
        )
    client = MlflowClient(tracking_uri=store_uri)
    run = client.get_run(run_id)
    after = int(time.time() * 1000)
    # the run is this invocation's (MLflow's "created" and duration); the compute is a tag
    assert before <= run.info.start_time <= run.info.end_time <= after
    assert run.data.tags["compute.started_at"] == "2023-11-14T22:13:20.123+00:00"
    assert run.data.tags["compute.ended_at"] == "2023-11-14T22:14:02.500+00:00"
    (point,) = client.get_metric_history(run_id, "strict")
    assert run.info.start_time <= point.timestamp <= run.info.end_time
    assert run.info.run_name == "sgd/P2/seed=0"  # no method in the cell

    assert [a.path for a in client.list_artifacts(run_id)] == ["answers.json"]
    logged = json.loads(run.data.tags["mlflow.loggedArtifacts"])
    assert logged == [{"path": "answers.json", "type": "table"}]
    local = client.download_artifacts(run_id, "answers.json", str(repo.parent / "dl"))
    raw = json.loads(Path(local).read_text(encoding="utf-8"))
    assert raw["columns"] == list(table[0]) and len(raw["data"]) == 3
    df = read_cell_table(run_id, store_uri)
    assert list(df.columns) == list(table[0])
    assert len(df) == 3
    assert df["probe_id"].tolist() == [r["probe_id"] for r in table]
    assert df["kept_turn_ids"].tolist() == ["[0, 2]"] * 3  # nested values stored as JSON text
    assert df["score_strict"].tolist() == [0.0, 1.0, 0.0]

    assert run.inputs is not None
    (inp,) = run.inputs.dataset_inputs
    sha = sha256_file(probes)
    assert inp.dataset.name == "data/probes/probes.jsonl"
    assert inp.dataset.digest == sha[:36]
    assert inp.dataset.source_type == "local"
    assert json.loads(inp.dataset.source) == {"uri": "data/probes/probes.jsonl"}
    assert json.loads(str(inp.dataset.profile))["num_rows"] == 3
    assert {t.key: t.value for t in inp.tags} == {"mlflow.data.context": "eval", "sha256": sha}
    (cell,) = read_cells(store_uri)
    assert cell.start_time == run.info.start_time and cell.end_time == run.info.end_time
    assert [(d.name, d.digest) for d in cell.datasets] == [(inp.dataset.name, sha[:36])]


def test_cell_times_default_to_logging_time_and_are_checked(repo: Path, store_uri: str) -> None:
    with start_pipeline_run("p", tracking_uri=store_uri, repo_root=repo) as parent:
        before = int(time.time() * 1000)
        log_cell(parent, {"dataset": "sgd"})
        after = int(time.time() * 1000)
        with pytest.raises(TrackingError, match="before started_at"):
            log_cell(parent, {"dataset": "sgd", "seed": 1}, started_at=20.0, ended_at=10.0)
        with pytest.raises(TrackingError, match=r"dataset input .* does not exist"):
            log_cell(parent, {"dataset": "sgd", "seed": 2}, datasets=[DatasetFile(repo / "x")])
    (cell,) = read_cells(store_uri)
    assert cell.start_time is not None and cell.end_time is not None
    assert before <= cell.start_time <= cell.end_time <= after


def test_pipeline_run_carries_the_complete_environment(repo: Path, store_uri: str) -> None:
    with start_pipeline_run("env", tracking_uri=store_uri, repo_root=repo) as parent:
        log_cell(parent, {"dataset": "sgd"})
        parent_id = parent.run_id
    client = MlflowClient(tracking_uri=store_uri)
    run = client.get_run(parent_id)
    assert ENVIRONMENT_ARTIFACT in [a.path for a in client.list_artifacts(parent_id)]
    local = client.download_artifacts(parent_id, ENVIRONMENT_ARTIFACT, str(repo.parent / "env"))
    env = json.loads(Path(local).read_text(encoding="utf-8"))
    dists = env["distributions"]

    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    names = [norm(d["name"]) for d in dists]
    assert names == sorted(names) and len(names) == len(set(names))
    installed = {norm(d.metadata["Name"]) for d in importlib.metadata.distributions()}
    assert set(names) == installed
    versions = {norm(d["name"]): d["version"] for d in dists}
    for dist in ("mlflow", "pytest", "pandas", "compressbench"):
        assert versions[dist] == importlib.metadata.version(dist)
    canonical = json.dumps(dists, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    assert env["distributions_sha256"] == digest
    assert run.data.tags[ENVIRONMENT_HASH_TAG] == digest
    (cell,) = read_cells(store_uri)
    assert cell.tags[ENVIRONMENT_HASH_TAG] == digest
