"""The cpu image runs what it pins: built for real (scripts/build_image.sh, Docker's layer cache
allowed), it runs one stage of the default pipeline offline as its own user, and its doctor
names a shared library the image lacks in one line.

Slow (a first build compiles llama-cpp-python: about 10 minutes on 2 cores); needs root for
dockerd (scripts/build_base_image.sh installs and starts it, as on CI).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support.paths import REPO_ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.geteuid() != 0 or shutil.which("apt-get") is None,
        reason="building images needs root and apt-get (dockerd, debootstrap), as on CI",
    ),
]

TAG = "compressbench:cpu-test"
DOCKER = "/usr/bin/docker"  # Debian's client (BuildKit); build_base_image.sh installs it
STAGE = "contexts@builtin-full_context-0.3"


def _run(*args: str, timeout: int = 3600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT)


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``compressbench:cpu-test`` built from a ``git archive`` of HEAD (the committed tree)."""
    context = tmp_path_factory.mktemp("context")
    archive = subprocess.run(
        ["git", "archive", "HEAD"], cwd=REPO_ROOT, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(context)], input=archive.stdout, check=True)
    env = {**os.environ, "CONTEXT": str(context), "TAG": TAG, "SKIP_SMOKE": "1"}
    proc = subprocess.run(
        ["scripts/build_image.sh", "cpu"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert proc.returncode == 0, f"build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return TAG


def test_one_stage_runs_offline_in_the_image(image: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    os.chown(data, 10001, 10001)  # the image's user writes the stage outputs
    proc = _run(DOCKER, "run", "--rm", "--network", "none", "-v", f"{data}:/workspace/data",
                image, "dvc", "repro", STAGE)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = (data / "contexts" / "builtin" / "full_context" / "0.3.jsonl").read_text().splitlines()
    assert len(rows) > 0
    probes = (data / "probes" / "builtin" / "0.3.jsonl").read_text().splitlines()
    assert len(rows) == len(probes)  # one context per probe


def test_doctor_passes_in_the_image(image: str) -> None:
    proc = _run(DOCKER, "run", "--rm", "--network", "none", image,
                "compressbench", "doctor", "--only", "libraries", "--only", "reader")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [["PASS", "libraries"], ["PASS", "reader"]]
    assert "llamacpp loads" in lines[0] and "hf loads" in lines[0]


def test_doctor_names_a_missing_shared_library_in_one_line(image: str) -> None:
    """The image with OpenMP's runtime deleted (what it lacked before libgomp1 was installed):
    the reader check and the build's gate (check ``libraries``, which loads torch too, whose
    wheel carries a libgomp.so.1 of its own) both fail in one line naming it."""
    for check, head in (("reader", "reader llamacpp:"), ("libraries", "llamacpp:")):
        script = (
            "rm -f /usr/lib/x86_64-linux-gnu/libgomp.so.1* && "
            f"exec compressbench doctor --only {check}"
        )
        proc = _run(DOCKER, "run", "--rm", "--network", "none", "--user", "root", image,
                    "sh", "-c", script)  # fmt: skip
        assert proc.returncode == 1, proc.stdout + proc.stderr
        lines = proc.stdout.splitlines()
        assert len(lines) == 1, proc.stdout
        assert lines[0].startswith(f"FAIL  {check}")
        assert f"{head} cannot load llama_cpp:" in lines[0]
        assert "libgomp.so.1: cannot open shared object file" in lines[0]
        assert "Traceback" not in proc.stderr
