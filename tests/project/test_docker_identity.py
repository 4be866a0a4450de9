"""A run made inside an image names the image: the variables docker/Dockerfile sets reach every
MLflow run (parent and cells) as ``image.*`` tags, read from a real sqlite store."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from compressbench.readers.image_env import IMAGE_ENV_VARS
from support.paths import REPO_ROOT

mlflow = pytest.importorskip("mlflow")
from mlflow.tracking import MlflowClient  # noqa: E402

from compressbench.tracking import log_cell, start_pipeline_run  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

LOCK_SHA = "5" * 64
BASE = "localhost:5000/compressbench/bookworm-minbase@sha256:" + "e" * 64


def _image_env(target: str) -> dict[str, str]:
    """ENV assignments of one Dockerfile target (continuation lines joined)."""
    text = (REPO_ROOT / "docker" / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    body = text.split(f"FROM runtime AS {target}", 1)[1].split("\nFROM ", 1)[0]
    env: dict[str, str] = {}
    for line in body.splitlines():
        if line.startswith("ENV "):
            env.update(re.findall(r"(\w+)=(\S+)", line))
    return env


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_images_set_the_variables_tracking_reads(target: str) -> None:
    env = _image_env(target)
    for var in IMAGE_ENV_VARS.values():
        assert env.get(var, "").startswith("${"), f"{target} image does not set {var}"


def test_runs_inside_an_image_log_its_lock_and_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "dvc.yaml").write_text("stages: {}\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    uri = f"sqlite:///{(tmp_path / 'mlflow.db').as_posix()}"
    monkeypatch.setenv("COMPRESSBENCH_IMAGE_LOCK_SHA256", LOCK_SHA)
    monkeypatch.setenv("COMPRESSBENCH_BASE_DIGEST", BASE)
    with start_pipeline_run("in-image", {"seed": 0}, tracking_uri=uri, repo_root=repo) as parent:
        cell = log_cell(parent, {"dataset": "builtin", "method": "recency"}, metrics={"p2": 0.5})
    monkeypatch.delenv("COMPRESSBENCH_IMAGE_LOCK_SHA256")
    monkeypatch.delenv("COMPRESSBENCH_BASE_DIGEST")
    with start_pipeline_run("on-host", tracking_uri=uri, repo_root=repo) as host:
        pass

    client = MlflowClient(uri)
    for run_id in (parent.run_id, cell):
        tags = client.get_run(run_id).data.tags
        assert tags["image.lock_sha256"] == LOCK_SHA
        assert tags["image.base_digest"] == BASE
    host_tags = client.get_run(host.run_id).data.tags
    assert host_tags["image.lock_sha256"] == "host"
    assert host_tags["image.base_digest"] == "host"
