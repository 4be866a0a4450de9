"""Checks ``versions`` and ``image``: installed versions against a lock, and the image identity
(the variables an image sets) against the checkout's lock and a published-images lock, all
written in the test's own project folder."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compressbench.doctor.base import Context, Options, Result
from compressbench.doctor.checks import run_one

BASE = "docker.io/library/debian:bookworm-slim@sha256:" + "3" * 64
DIGEST = "sha256:" + "d" * 64


def run(name: str, params: Path, **options: object) -> Result:
    return run_one(name, Context(Options(params=params, **options)))  # type: ignore[arg-type]


def installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def write_lock(root: Path, target: str, **override: str) -> Path:
    """``docker/requirements-<target>.lock`` pinning what is installed (or ``override``)."""
    pins = {p: installed(p) for p in ("torch", "transformers", "vllm", "kvpress")}
    pins.update(override)
    lines = [f"{name}=={version} \\\n    --hash=sha256:{'0' * 64}" for name, version in
             pins.items() if version]  # fmt: skip
    path = root / "docker" / f"requirements-{target}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# test lock\n" + "\n".join(lines) + "\n")
    return path


def test_versions_as_locked_pass_and_a_difference_fails(
    write_params: Callable[..., Path], tmp_path: Path
) -> None:
    params = write_params()
    write_lock(tmp_path, "cpu")
    result = run("versions", params)
    assert result.status == "PASS", result.summary
    assert result.summary.startswith("host (held to the cpu lock): as requirements-cpu.lock:")
    write_lock(tmp_path, "cpu", torch="0.0.1")
    result = run("versions", params)
    assert result.status == "FAIL"
    assert f"torch {installed('torch')} (lock 0.0.1)" in result.summary
    assert "--image-target cuda" in result.summary


def test_versions_follow_the_image_target(
    write_params: Callable[..., Path], tmp_path: Path
) -> None:
    params = write_params()
    write_lock(tmp_path, "cuda", vllm="0.23.0")
    result = run("versions", params, environ={"COMPRESSBENCH_IMAGE_TARGET": "cuda"})
    assert result.status == "FAIL" and result.summary.startswith("image target cuda: differs")
    expected = f"vllm {installed('vllm') or 'not installed'} (lock 0.23.0)"
    assert expected in result.summary
    write_lock(tmp_path, "cuda")
    assert run("versions", params, image_target="cuda").status == "PASS"


def identity(lock: Path) -> dict[str, str]:
    return {
        "COMPRESSBENCH_IMAGE_LOCK_SHA256": hashlib.sha256(lock.read_bytes()).hexdigest(),
        "COMPRESSBENCH_BASE_DIGEST": BASE,
        "COMPRESSBENCH_IMAGE_TARGET": "cuda",
    }


def images_lock(path: Path, lock_sha256: str | None, digest: str | None = DIGEST) -> Path:
    entry = {
        "name": "ghcr.io/compressbench/compressbench/cuda",
        "digest": digest,
        "version": "0.1.0",
        "commit": "abc1234",
        "base": BASE,
        "lock_sha256": lock_sha256,
    }
    path.write_text(json.dumps({"images": {"cuda": entry}}))
    return path


def test_image_on_the_host_skips(write_params: Callable[..., Path]) -> None:
    result = run("image", write_params(), environ={})
    assert result.status == "SKIP" and result.summary.endswith(": host")


def test_image_matching_a_published_digest_names_it(
    write_params: Callable[..., Path], tmp_path: Path
) -> None:
    params = write_params()
    env = identity(write_lock(tmp_path, "cuda"))
    sha = env["COMPRESSBENCH_IMAGE_LOCK_SHA256"]
    published = images_lock(tmp_path / "images.lock", sha)
    result = run("image", params, environ=env, images_lock=published)
    assert result.status == "PASS", result.summary
    assert result.summary == (
        f"lock {sha[:12]}, base {BASE}; published ghcr.io/compressbench/compressbench/cuda@"
        f"{DIGEST} (version 0.1.0, commit abc1234)"
    )
    unreleased = images_lock(tmp_path / "unreleased.lock", sha, digest=None)
    result = run("image", params, environ=env, images_lock=unreleased)
    assert result.status == "PASS" and "not a published image" in result.summary


def test_image_not_matching_and_image_of_another_lock(
    write_params: Callable[..., Path], tmp_path: Path
) -> None:
    params = write_params()
    env = identity(write_lock(tmp_path, "cuda"))
    other = images_lock(tmp_path / "images.lock", "e" * 64)
    result = run("image", params, environ=env, images_lock=other)
    assert result.status == "PASS"
    assert "not a published image in images.lock (a local build or unreleased)" in result.summary
    write_lock(tmp_path, "cuda", torch="9.9.9")  # this checkout's lock is not the image's
    result = run("image", params, environ=env, images_lock=other)
    assert result.status == "FAIL"
    assert "the image installed another lock than this checkout's requirements-cuda.lock" in (
        result.summary
    )


@pytest.mark.parametrize("digest", ["sha256:short", "latest"])
def test_a_bad_images_lock_fails_naming_the_field(
    write_params: Callable[..., Path], tmp_path: Path, digest: str
) -> None:
    env = identity(write_lock(tmp_path, "cuda"))
    bad = images_lock(tmp_path / "images.lock", None, digest=digest)
    result = run("image", write_params(), environ=env, images_lock=bad)
    assert result.status == "FAIL"
    assert "images.cuda" in result.summary and "'digest'" in result.summary


def test_versions_are_compared_as_versions_through_the_cli(
    doctor: Callable[..., Any], write_params: Callable[..., Path], tmp_path: Path
) -> None:
    """A pin without a local label accepts any local build of it (``2.11.0`` vs an installed
    ``2.11.0+cu130``); a pin with another local label does not; extras and markers in the lock
    are read; each image target reads its own lock."""
    from packaging.version import Version

    torch = installed("torch")
    assert torch is not None
    public = Version(torch).public
    params = str(write_params())
    lock = write_lock(tmp_path, "cuda", torch=public)
    with lock.open("a") as fh:  # lines as scripts/lock.py writes them for the CUDA image
        fh.write(f"fsspec[http, tqdm]==2026.6.0 \\\n    --hash=sha256:{'1' * 64}\n")
        fh.write('pywin32==311 ; sys_platform == "win32"\n')
    proc = doctor("--params", params, "--only", "versions", "--image-target", "cuda")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("PASS  versions"), proc.stdout
    assert f"image target cuda: as requirements-cuda.lock: torch {torch}" in proc.stdout

    write_lock(tmp_path, "cpu", torch=f"{public}+cu130")  # the cpu target: its own lock
    proc = doctor("--params", params, "--only", "versions", "--image-target", "cpu")
    assert proc.returncode == 1
    assert f"torch {torch} (lock {public}+cu130)" in proc.stdout, proc.stdout
    assert len(proc.stdout.splitlines()) == 1 and proc.stderr == ""


def test_a_lock_line_that_is_not_a_pin_fails_naming_the_line(
    write_params: Callable[..., Path], tmp_path: Path
) -> None:
    lock = write_lock(tmp_path, "cpu")
    with lock.open("a") as fh:
        fh.write("numpy>=1.26\n")
    result = run("versions", write_params())
    assert result.status == "FAIL"
    number = len(lock.read_text().splitlines())
    assert f"file {lock}, record {number}: 'numpy>=1.26' is not pinned with ==" in result.summary
