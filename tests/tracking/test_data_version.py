"""Every run records its data version: the dvc.lock it found and its stage's dependencies hashed
as DVC hashes them, so a run matches the dvc.lock entry of its stage (real DVC throughout)."""

from __future__ import annotations

import collections
import hashlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from compressbench.config import load_params
from compressbench.pipeline.declare import cells_of
from compressbench.pipeline.stage_deps import cell_deps
from compressbench.stages import declarations
from compressbench.tracking import read_cells, read_pipeline_runs, start_pipeline_run
from compressbench.tracking.data_version import data_version_tags, dvc_md5, stage_deps

DVC = str(Path(sys.executable).with_name("dvc"))


def _env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(root / "src")  # the clone's code
    env["COMPRESSBENCH_ANSWER_CACHE"] = str(root / ".cache" / "answers.sqlite")
    for var in ("MLFLOW_TRACKING_URI", "DVC_STAGE", "DVC_ROOT"):
        env.pop(var, None)
    return env


def _dvc(root: Path, *args: str) -> str:
    proc = subprocess.run(
        [DVC, *args], cwd=root, env=_env(root), capture_output=True, text=True, timeout=1800
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _locked(lock: Path, stage: str) -> dict[str, str]:
    entry = yaml.safe_load(lock.read_text(encoding="utf-8"))["stages"][stage]
    return {d["path"]: d["md5"] for d in entry["deps"]}


def test_dep_hashes_are_the_md5s_dvc_locks(tmp_path: Path) -> None:
    """A file, a folder (CRLF text, a file .dvcignore hides, a nested folder): after a real
    ``dvc repro``, dvc.lock lists exactly :func:`dvc_md5`'s values; nothing is written."""
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "a.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "d" / "sub" / "b.txt").write_bytes(b"b\r\nc\r\n")
    (tmp_path / "d" / "__pycache__").mkdir()
    (tmp_path / "d" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (tmp_path / "f.txt").write_bytes(b"f\r\n")
    _dvc(tmp_path, "init", "--no-scm", "-q")
    (tmp_path / ".dvcignore").write_text("__pycache__/\n", encoding="utf-8")
    stage = {"cmd": "cp f.txt out.txt", "deps": ["d", "f.txt"], "outs": ["out.txt"]}
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"s": stage}}), "utf-8")
    before = sorted(p for p in tmp_path.rglob("*") if ".dvc" not in p.parts)
    assert dvc_md5(["d", "f.txt", "nope"], tmp_path) == {
        "d": dvc_md5(["d"], tmp_path)["d"],
        "f.txt": hashlib.md5(b"f\r\n").hexdigest(),  # DVC 3: plain md5 of the bytes
        "nope": "missing",
    }
    assert sorted(p for p in tmp_path.rglob("*") if ".dvc" not in p.parts) == before
    _dvc(tmp_path, "repro", "-q")
    locked = _locked(tmp_path / "dvc.lock", "s")
    assert locked["d"].endswith(".dir")
    assert dvc_md5(["d", "f.txt"], tmp_path) == locked

    with stage_deps(["d", "f.txt"]):
        tags = data_version_tags(tmp_path)
    lock_sha = hashlib.sha256((tmp_path / "dvc.lock").read_bytes()).hexdigest()
    lines = "".join(f"{k}\t{v}\n" for k, v in sorted(locked.items()))
    assert tags == {
        "dvc.lock_file": "dvc.lock",
        "dvc.lock_sha256": lock_sha,
        "dvc.dep.d": locked["d"],
        "dvc.dep.f.txt": locked["f.txt"],
        "dvc.deps_digest": hashlib.sha256(lines.encode()).hexdigest(),
    }
    assert data_version_tags(tmp_path / "d") == {
        "dvc.lock_file": "dvc.lock",
        "dvc.lock_sha256": "none",
    }


def test_runs_outside_a_stage_record_the_lock(store_uri: str, tmp_path: Path) -> None:
    (tmp_path / "dvc.lock").write_text("schema: '2.0'\n", encoding="utf-8")
    opts = {"tracking_uri": store_uri, "experiment": "dv", "repo_root": tmp_path}
    with start_pipeline_run("plain", **opts) as parent:  # type: ignore[arg-type]
        pass
    (run,) = read_pipeline_runs(store_uri, "dv")
    assert run.run_id == parent.run_id
    assert run.tags["dvc.lock_sha256"] == hashlib.sha256(b"schema: '2.0'\n").hexdigest()
    assert not [k for k in run.tags if k.startswith("dvc.dep")]


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory, clone_repo: Callable[[Path], Path]) -> Path:
    return clone_repo(tmp_path_factory.mktemp("data-version") / "repo")


def test_cell_deps_are_the_deps_dvc_resolves_for_every_stage(clone: Path) -> None:
    """:func:`cell_deps` of every cell of every declared stage == the deps (and lock file) DVC
    itself resolves from the repository's dvc.yaml files and params.yaml (params.yaml's keys,
    a section of their own in dvc.lock, are the parent run's params)."""
    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo

    params = load_params(clone / "params.yaml")
    ours = collections.Counter(
        (d.name, cell_deps(d, dict(zip(d.over, cell, strict=True)), clone / "params.yaml"))
        for d in declarations()
        for cell in cells_of(d.over, params)
    )
    with Repo(str(clone)) as repo:
        theirs = collections.Counter(
            (
                s.name.split("@")[0],
                (
                    tuple(d.def_path for d in s.deps if not isinstance(d, ParamsDependency)),
                    Path(s.dvcfile.path).relative_to(clone).with_name("dvc.lock").as_posix(),
                ),
            )
            for s in repo.index.stages
            if not s.name.startswith("code_")
        )
    assert sum(ours.values()) > 20
    assert {(n, d.deps, d.lock_file) for n, d in ours} == {(n, *v) for n, v in theirs}
    assert sum(ours.values()) == sum(theirs.values())


@pytest.mark.slow
def test_a_stage_run_matches_its_dvc_lock_entry(clone: Path) -> None:
    """``dvc repro retention@builtin`` in a clone: the stage's MLflow runs record the md5 of
    each dependency dvc.lock then lists for it, its address and the lock it found."""
    _dvc(clone, "repro", "retention@builtin")
    uri = f"sqlite:///{clone / 'mlflow.db'}"
    experiment = yaml.safe_load((clone / "params.yaml").read_text("utf-8"))["tracking"]
    (parent,) = read_pipeline_runs(uri, experiment["experiment"])
    locked = _locked(clone / "dvc.lock", "retention@builtin")
    assert set(locked) == {
        "data/corpora/builtin.jsonl.gz",
        "data/code/base.json",
        "data/code/retention.json",
    }
    cells = read_cells(uri, experiment["experiment"], parent_run_id=parent.run_id)
    assert cells
    for run in (parent, *cells):
        assert {
            k.removeprefix("dvc.dep."): v for k, v in run.tags.items() if k.startswith("dvc.dep.")
        } == locked
        assert run.tags["dvc.stage_address"] == "retention@builtin"
        assert run.tags["dvc.lock_file"] == "dvc.lock"
        assert len(run.tags["dvc.lock_sha256"]) == 64  # the lock of the stages before it
        assert run.tags["git.commit"] != "unknown"
