"""docker/images.lock (the published images), its agreement with compose.yaml and the
Dockerfile (scripts/images_lock.py), the release workflow and the Renovate config."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from compressbench.errors import InputError
from compressbench.published_images import load_images_lock, match_image
from support.paths import REPO_ROOT
from support.scripts import load_script

DIGEST = "sha256:" + "ab" * 32
LOCK_SHA = "cd" * 32
BASE = "docker.io/library/debian:bookworm-slim@sha256:" + "ef" * 32
WORKFLOWS = REPO_ROOT / ".github" / "workflows"
IMAGES_SCRIPT = load_script("images_lock")


@pytest.fixture
def docker_copy(tmp_path: Path) -> Path:
    """A copy of the three files the script keeps in agreement."""
    (tmp_path / "docker").mkdir()
    for name in ("images.lock", "compose.yaml", "Dockerfile"):
        shutil.copy(REPO_ROOT / "docker" / name, tmp_path / "docker" / name)
    return tmp_path


def _write_lock(root: Path, **cpu: object) -> Path:
    path = root / "docker" / "images.lock"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["images"]["cpu"].update(cpu)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_repository_agrees() -> None:
    assert IMAGES_SCRIPT.problems() == []
    run = subprocess.run(
        [sys.executable, "scripts/images_lock.py", "check"], cwd=REPO_ROOT, capture_output=True
    )
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"digest": "sha256:123"}, "digest"),
        ({"lock_sha256": "xyz"}, "lock_sha256"),
        ({"name": ""}, "name"),
        ({"digest": 7}, "digest"),
    ],
)
def test_a_bad_entry_names_its_field(docker_copy: Path, change: dict, field: str) -> None:
    path = _write_lock(docker_copy, **change)
    with pytest.raises(InputError) as err:
        load_images_lock(path)
    assert err.value.field == field and err.value.record == "images.cpu"
    assert str(path) in str(err.value)


def test_unknown_keys_and_unreadable_files_are_one_line(docker_copy: Path) -> None:
    with pytest.raises(InputError, match=r"unknown keys \['tag'\]"):
        load_images_lock(_write_lock(docker_copy, tag="latest"))
    (docker_copy / "broken.lock").write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="cannot read the images lock"):
        load_images_lock(docker_copy / "broken.lock")


def test_record_pins_compose_by_digest_and_check_sees_drift(docker_copy: Path) -> None:
    name = "ghcr.io/acme/compressbench/cpu"
    pushed = {"name": name, "digest": DIGEST, "version": "0.2.0", "commit": "c" * 40}
    IMAGES_SCRIPT.record(docker_copy, "cpu", {**pushed, "base": BASE, "lock_sha256": LOCK_SHA})
    image = load_images_lock(docker_copy / "docker" / "images.lock")["cpu"]
    assert (image.ref, image.base, image.lock_sha256) == (f"{name}@{DIGEST}", BASE, LOCK_SHA)
    compose = yaml.safe_load((docker_copy / "docker" / "compose.yaml").read_text())
    assert (
        compose["services"]["mlflow"]["image"] == f"${{COMPRESSBENCH_CPU_IMAGE:-{name}@{DIGEST}}}"
    )
    assert IMAGES_SCRIPT.problems(docker_copy) == []

    compose_path = docker_copy / "docker" / "compose.yaml"
    compose_path.write_text(compose_path.read_text().replace(DIGEST, "sha256:" + "00" * 32))
    (found,) = IMAGES_SCRIPT.problems(docker_copy)
    assert found.startswith("docker/compose.yaml: service mlflow pins") and "sync" in found
    assert IMAGES_SCRIPT.sync(docker_copy) and IMAGES_SCRIPT.problems(docker_copy) == []


def test_check_names_a_target_the_dockerfile_lacks(docker_copy: Path) -> None:
    path = docker_copy / "docker" / "images.lock"
    data = json.loads(path.read_text())
    data["images"]["rocm"] = dict(data["images"]["cpu"], name="ghcr.io/acme/x/rocm")
    path.write_text(json.dumps(data))
    assert IMAGES_SCRIPT.problems(docker_copy) == [
        "docker/images.lock: images.rocm: docker/Dockerfile has no stage 'rocm'"
    ]


def test_match_image_names_the_published_image_a_process_runs_in(docker_copy: Path) -> None:
    pushed = {"name": "ghcr.io/a/b/cpu", "digest": DIGEST, "version": "0.2.0", "commit": "c"}
    IMAGES_SCRIPT.record(docker_copy, "cpu", {**pushed, "base": BASE, "lock_sha256": LOCK_SHA})
    images = load_images_lock(docker_copy / "docker" / "images.lock")
    inside = {"image.lock_sha256": LOCK_SHA, "image.base_digest": BASE}
    found = match_image(inside, images)
    assert found is not None and found.target == "cpu"
    assert match_image({**inside, "image.lock_sha256": "0" * 64}, images) is None
    assert match_image({"image.lock_sha256": "host", "image.base_digest": "host"}, images) is None


# ------------------------------------------------------------------ workflows and Renovate


def _workflow(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def test_every_action_is_pinned_by_commit_sha() -> None:
    for path in WORKFLOWS.glob("*.yml"):
        for uses in re.findall(r"uses: (\S+)", path.read_text(encoding="utf-8")):
            if uses.startswith("./"):
                continue  # a workflow of this repository
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", uses), f"{path.name}: {uses}"


def test_ci_workflow_runs_ci_run() -> None:
    ci = _workflow("ci.yml")
    steps = ci["jobs"]["checks"]["steps"]
    assert any(step.get("run") == "bash .ci/run" for step in steps)
    assert "workflow_call" in ci[True]  # PyYAML reads the key `on` as True


def test_release_builds_every_compose_target_with_sbom_and_provenance() -> None:
    release = _workflow("release.yml")
    assert release[True]["push"]["tags"] == ["v*"]
    images = release["jobs"]["images"]
    assert images["needs"] == "checks"
    assert sorted(images["strategy"]["matrix"]["target"]) == sorted(
        set(IMAGES_SCRIPT.SERVICES.values())
    )
    build = next(s for s in images["steps"] if s.get("id") == "build")["with"]
    assert build["push"] is True and build["sbom"] is True
    assert build["provenance"] == "mode=max" and build["file"] == "docker/Dockerfile"
    assert "SOURCE_DATE_EPOCH" in build["build-args"] and "LOCK_SHA256" in build["build-args"]
    lock_job = " ".join(s.get("run", "") for s in release["jobs"]["images-lock"]["steps"])
    assert "scripts/images_lock.py record" in lock_job and "images_lock.py check" in lock_job


def test_renovate_refreshes_the_base_digest_actions_and_locks() -> None:
    config = json.loads((REPO_ROOT / "renovate.json").read_text(encoding="utf-8"))
    assert {"custom.regex", "github-actions", "pip_requirements"} <= set(config["enabledManagers"])
    (manager,) = config["customManagers"]
    # Renovate's regex (JavaScript named groups) finds the Dockerfile's base and its digest.
    pattern = re.compile(manager["matchStrings"][0].replace("(?<", "(?P<"))
    found = pattern.search((REPO_ROOT / "docker" / "Dockerfile").read_text(encoding="utf-8"))
    assert found and found.group("depName") == "docker.io/library/debian"
    assert found.group("currentValue") == "bookworm-slim"
    lock_match = re.compile(config["pip_requirements"]["fileMatch"][0])
    for target in ("cpu", "cuda"):
        assert lock_match.search(f"docker/requirements-{target}.lock")
    assert "docker/compose.yaml" in config["ignorePaths"]  # written from images.lock
