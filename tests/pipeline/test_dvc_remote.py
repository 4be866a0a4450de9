"""Results anyone can pull (docs/sharing.md): every output of the root ``dvc.yaml`` is
DVC-cached, so ``dvc push`` carries it to a remote and ``dvc pull`` restores it.

The slow test is the loop itself, with real DVC, real git clones and a real local remote: clone A
(the ``clone_repo`` fixture: the repository with the working tree's changes) runs a small grid
(built-in corpus, two methods, one probe per cell, the SmolLM2 smoke reader through llama.cpp),
pushes to a remote folder in ``tmp_path`` and commits ``dvc.lock``; clone B is a ``git clone`` of
A that only pulls. B then holds A's bytes, ``dvc status`` is clean, ``dvc repro`` runs no stage
and never opens an answer cache (no model call), and ``dvc metrics show`` reads A's figures.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from compressbench.pipeline.declare import Out
from compressbench.pipeline.dvc_yaml import problems
from compressbench.stages import declaration
from support.clone import run_in
from support.paths import REPO_ROOT
from support.smoke import use_smoke_reader

SMALL = {
    "n_per_cell": 1,
    "seeds": [42],
    "ratios": [0.3],
    "methods": ["full_context", "recency"],
    "retention": {"ratios": [0.3], "methods": ["recency"]},
    "deletions": {"enabled": False},
}
KEEP_SMALL = {"max_per_subset": 1, "compressors": {"first_n": {}}}  # no model in KEEP-Bench
SHORT_ANSWERS = {"P1": 16, "P2": 16, "P3": 16}
REMOTE = "machine"  # the default remote .dvc/config names
OUTPUT_DIRS = ("data", "metrics", "reports")  # every root dvc.yaml output lies under these


def _outs(body: dict) -> list[object]:
    return [o for key in ("outs", "metrics", "plots") for o in body.get(key) or []]


def test_every_root_output_is_cached_and_pushed() -> None:
    """Nothing in the root dvc.yaml is ``cache: false`` or ``push: false`` (a pull could not
    restore it); the frozen stage's uncached output is tracked by git instead."""
    stages = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    outs = [o for body in stages.values() for o in _outs(body.get("do", body))]
    assert outs and all(isinstance(o, str) for o in outs), [o for o in outs if isinstance(o, dict)]
    assert all(str(o).split("/")[0] in OUTPUT_DIRS for o in outs)  # what the slow test compares
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for apart in REPO_ROOT.glob("dvc-stages/*/dvc.yaml"):
        for body in yaml.safe_load(apart.read_text(encoding="utf-8"))["stages"].values():
            for out in _outs(body.get("do", body)):
                if isinstance(out, dict) and next(iter(out.values())).get("cache") is False:
                    assert next(iter(out)) in tracked, apart


def test_the_generator_refuses_an_uncached_root_output() -> None:
    scores = declaration("scores")
    uncached = dataclasses.replace(scores, outs=(Out("data/scores/x.jsonl", cache=False),))
    assert problems([uncached]) == [
        "stage scores: output 'data/scores/x.jsonl' is declared cache=False: `dvc pull` could "
        "not restore it (only a frozen stage's git-tracked output may be)"
    ]


def test_the_default_remote_is_a_folder_outside_the_repository() -> None:
    dvc = str(Path(sys.executable).parent / "dvc")
    proc = subprocess.run(
        [dvc, "remote", "list"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    name, url, *flags = proc.stdout.split()
    assert (name, flags) == (REMOTE, ["(default)"])
    assert Path(url) == Path.home() / ".cache" / "compressbench" / "dvc-remote"


# -- the loop: clone A runs and pushes, clone B pulls ------------------------------------------


def _small_params(root: Path) -> None:
    path = root / "params.yaml"
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    raw.update(SMALL)
    raw["keepbench"].update(KEEP_SMALL)
    use_smoke_reader(raw, backend="llamacpp")
    raw["reader"]["max_new_tokens"] = SHORT_ANSWERS
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")


def _output_files(root: Path) -> dict[str, str]:
    """sha256 of every file under the output folders (each one a DVC output's or inside one)."""
    files = sorted(p for d in OUTPUT_DIRS for p in (root / d).rglob("*") if p.is_file())
    return {
        f.relative_to(root).as_posix(): hashlib.sha256(f.read_bytes()).hexdigest() for f in files
    }


@pytest.mark.slow
def test_a_pulled_clone_has_the_same_bytes_and_reruns_nothing(
    tmp_path: Path, clone_repo: Callable[[Path], Path]
) -> None:
    remote = tmp_path / "remote"
    a = clone_repo(tmp_path / "a")
    _small_params(a)
    # the remote's folder overridden in the git-ignored config.local (where credentials go)
    run_in(a, "dvc", "remote", "modify", "--local", REMOTE, "url", str(remote))
    start = time.perf_counter()
    run_in(a, "dvc", "repro")
    print(f"\nclone A: dvc repro {time.perf_counter() - start:.0f} s")
    assert (a / ".cache" / "answers.sqlite").exists()  # A asked the reader
    run_in(a, "dvc", "push")
    assert json.loads(run_in(a, "dvc", "status", "--cloud", "--json").stdout) == {}
    run_in(a, "git", "add", "-A")
    run_in(a, "git", "commit", "-q", "-m", "a run: dvc.lock")
    assert "dvc.lock" in run_in(a, "git", "ls-files").stdout.split()

    b = tmp_path / "b"
    subprocess.run(["git", "clone", "-q", str(a), str(b)], check=True)
    run_in(b, "dvc", "remote", "modify", "--local", REMOTE, "url", str(remote))
    start = time.perf_counter()
    run_in(b, "dvc", "pull")
    print(f"clone B: dvc pull {time.perf_counter() - start:.1f} s")

    produced = _output_files(a)
    assert any(p.startswith("data/answers/") for p in produced)
    assert any(p.startswith("reports/") for p in produced)
    assert _output_files(b) == produced
    assert json.loads(run_in(b, "dvc", "status", "--json").stdout) == {}
    repro = run_in(b, "dvc", "repro")
    assert "Running stage" not in repro.stdout + repro.stderr
    assert not (b / ".cache").exists()  # no answer cache opened: no model call
    assert not (b / "mlflow.db").exists()  # no stage logged a run
    assert run_in(b, "git", "status", "--porcelain").stdout == ""  # dvc.lock as committed
    metrics = run_in(b, "dvc", "metrics", "show", "--json").stdout
    assert json.loads(metrics) == json.loads(run_in(a, "dvc", "metrics", "show", "--json").stdout)
