"""The ``turning_point_scorer`` stage: turning_point's mention scorer is fitted on SGD train by a
frozen DVC stage kept apart (``dvc-stages/turning_point_scorer/``), whose committed ``dvc.lock``
records the hash of ``models/turning_point/scorer.json`` (outside ``src/``, shipped as data); the
default offline ``dvc repro`` neither runs nor fails on it when ../shared is absent (real DVC in
a git clone of the repository)."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from compressbench.cli import main
from compressbench.compress.turning_point.scorer import FEATURES, MODEL_FILE, packaged_scorer
from compressbench.pipeline.code_hash import code_stages
from compressbench.pipeline.declare import BASE_MODELS
from compressbench.pipeline.dvc_yaml import render
from compressbench.stages import declaration, declarations
from compressbench.tpbench.stages.turning_point_scorer import SCORER
from support.paths import REPO_ROOT

APART = "dvc-stages/turning_point_scorer/dvc.yaml"
DVC_NAME = f"{APART}:turning_point_scorer"


def _entry() -> dict[str, object]:
    entry: dict[str, object] = yaml.safe_load(render(declarations())[APART])["stages"][
        "turning_point_scorer"
    ]
    return entry


def test_the_stage_is_frozen_apart_with_sgd_train_as_param_and_dep() -> None:
    entry = _entry()
    assert entry["frozen"] is True
    assert entry["params"] == ["corpora"]
    assert entry["outs"] == [{SCORER: {"cache": False}}]  # git carries the file, DVC its hash
    deps = entry["deps"]
    assert isinstance(deps, list) and deps[0] == "${corpora.sgd.path}/train"
    assert "src/compressbench/compress" in deps  # the train module and its features
    # no dep holds the output (DVC refuses a stage that depends on its own out)
    assert not [d for d in deps if d == SCORER or SCORER.startswith(d.rstrip("/") + "/")]
    assert "turning_point_scorer" not in render(declarations())["dvc.yaml"]


def test_the_scorer_lies_outside_src_and_every_stage_reads_it_through_code_base() -> None:
    assert SCORER == MODEL_FILE and not SCORER.startswith("src/") and SCORER in BASE_MODELS
    assert packaged_scorer() == REPO_ROOT / SCORER  # a source checkout loads its own models/
    (base, *_) = code_stages(declarations())
    assert base.stage == "code_base" and SCORER in base.paths
    # the stage that writes it lists its code itself, never the file
    assert SCORER not in declaration("turning_point_scorer").code


@pytest.mark.slow
def test_a_wheel_ships_the_scorer_as_data(tmp_path: Path) -> None:
    """A real wheel of the checkout carries the file under its data scheme (installed to
    ``<prefix>/share/compressbench/models/...``, where :func:`packaged_scorer` finds it)."""
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    build = subprocess.run(
        [*pip_wheel, "-w", str(tmp_path), str(REPO_ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp_path.glob("compressbench-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        shipped = [n for n in zf.namelist() if n.endswith(SCORER)]
        assert shipped == [f"compressbench-0.1.0.data/data/share/compressbench/{SCORER}"]
        assert zf.read(shipped[0]) == (REPO_ROOT / SCORER).read_bytes()
        assert not [n for n in zf.namelist() if n.endswith("scorer.json") and n not in shipped]


def test_the_committed_lock_records_the_shipped_scorer() -> None:
    lock = yaml.safe_load((REPO_ROOT / APART).with_name("dvc.lock").read_text(encoding="utf-8"))
    stage = lock["stages"]["turning_point_scorer"]
    assert stage["deps"][0]["path"] == "../shared/corpora/sgd/train"
    (out,) = stage["outs"]
    assert out["path"] == SCORER
    assert out["md5"] == hashlib.md5((REPO_ROOT / SCORER).read_bytes()).hexdigest()


def _params_file(tmp_path: Path, sgd: Path) -> Path:
    raw = yaml.safe_load((REPO_ROOT / "params.yaml").read_text(encoding="utf-8"))
    raw["corpora"]["sgd"]["path"] = str(sgd)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


def test_a_missing_sgd_train_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    params = _params_file(tmp_path, tmp_path / "no_sgd")
    monkeypatch.chdir(tmp_path)
    assert main(["stage", "turning_point_scorer", "--params", str(params)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "corpora.sgd.path" in err and "train" in err
    assert not (tmp_path / SCORER).exists()


@pytest.mark.corpora
def test_the_stage_writes_only_the_scorer_fitted_on_sgd_train(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corpora_dir: Path
) -> None:
    """One SGD train file (128 dialogues) in a folder of its own; the stage runs in an empty
    directory and writes exactly its declared output."""
    sgd = tmp_path / "sgd"
    (sgd / "train").mkdir(parents=True)
    first = corpora_dir / "sgd" / "train" / "dialogues_001.json.gz"
    shutil.copy(first, sgd / "train" / first.name)
    params = _params_file(tmp_path, sgd)
    box = tmp_path / "box"
    box.mkdir()
    monkeypatch.chdir(box)
    assert main(["stage", "turning_point_scorer", "--params", str(params)]) == 0
    assert [p.relative_to(box).as_posix() for p in box.rglob("*") if p.is_file()] == [SCORER]
    fitted = json.loads((box / SCORER).read_text(encoding="utf-8"))
    assert fitted["features"] == list(FEATURES) and len(fitted["coef"]) == len(FEATURES)
    with gzip.open(first) as fh:
        assert fitted["n_dialogues"] == len(json.load(fh))  # all 128 (< 3000)
    assert (fitted["units"], fitted["c"]) == ("phrase", 1.0)


@pytest.mark.slow
@pytest.mark.corpora
def test_the_refit_on_sgd_train_is_byte_identical_to_the_shipped_scorer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corpora_dir: Path
) -> None:
    params = _params_file(tmp_path, corpora_dir / "sgd")
    monkeypatch.chdir(tmp_path)
    assert main(["stage", "turning_point_scorer", "--params", str(params)]) == 0
    assert (tmp_path / SCORER).read_bytes() == (REPO_ROOT / SCORER).read_bytes()


def _dvc(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(root / "src")  # the clone's code
    return subprocess.run(
        ["dvc", *args], cwd=root, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_default_dvc_repro_without_sgd_train_skips_the_frozen_stage(
    tmp_path: Path, clone_repo: Callable[[Path], Path]
) -> None:
    """A git clone of the repository with no ../shared beside it: DVC builds the graph (no
    cycle through ``compress/``), reproduces a stage downstream of the frozen one without
    running or failing on it, and ``dvc status`` flags a hand-edited scorer.json against the
    lock."""
    root = clone_repo(tmp_path / "project")  # tmp_path/shared does not exist
    assert (root / APART).with_name("dvc.lock").exists()  # a frozen stage's lock is committed
    dag = _dvc(root, "dag", "corpora@builtin")
    assert dag.returncode == 0 and "turning_point_scorer" in dag.stdout, dag.stderr
    repro = _dvc(root, "repro", "corpora@builtin")
    assert repro.returncode == 0, repro.stderr
    assert "Running stage 'corpora@builtin'" in repro.stdout
    assert "Running stage 'dvc-stages/turning_point_scorer" not in repro.stdout
    status = _dvc(root, "status", "--json")
    assert status.returncode == 0 and DVC_NAME not in json.loads(status.stdout)
    scorer = root / SCORER
    scorer.write_text(scorer.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    changed = json.loads(_dvc(root, "status", "--json", DVC_NAME).stdout)
    assert changed == {DVC_NAME: [{"changed outs": {SCORER: "modified"}}]}
