"""DVC's own parameter sweep works on this project: in a git clone of the repository (the
``clone_repo`` fixture; the working tree's changes sit uncommitted in it, as in a user's
workspace), ``dvc exp run --queue -S n_per_cell=10,12`` queues a sweep aimed at the cheap first
stages (corpus_source -> corpora -> transitions, probes: no model is loaded),
``dvc exp run --run-all`` runs it, and ``dvc exp show --json`` lists each experiment with its
swept value and its metrics; each experiment's lock records the probes cell run at its value.

What DVC needs for it: a git repository with a commit (each experiment records it as its
baseline) and a git identity to commit experiments with (the fixture sets one). A queued
experiment carries the uncommitted changes of tracked files, not untracked files (``git add``
them first, or run ``dvc exp run`` without ``--queue``: in the workspace it takes everything).
Its metrics must be DVC-cached: they sit in git-ignored folders, where the experiment's commit
cannot hold them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from support.clone import run_in

pytestmark = pytest.mark.slow

SWEEP = [10, 12]
TARGETS = ("transitions", "probes")  # stage groups: every cell of each, and what they need
TRANSITIONS = "data/transitions/builtin.json"
PROBES_CELL = "probes@builtin-0.3"
READER_STAGES = ("contexts", "answers")  # the default params: the built-in corpus, r = 0.3


def _run(root: Path, *args: str) -> str:
    return run_in(root, *args, timeout=900).stdout


def _experiments(shown: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every experiment ``dvc exp show --json`` lists (under any baseline commit)."""
    return [rev for base in shown for exp in base.get("experiments") or [] for rev in exp["revs"]]


def test_a_queued_sweep_is_listed_by_exp_show_with_its_params_and_metrics(
    tmp_path: Path, clone_repo: Callable[[Path], Path]
) -> None:
    root = clone_repo(tmp_path / "repo")
    params = root / "params.yaml"
    before = params.read_bytes()
    assert yaml.safe_load(before)["n_per_cell"] not in SWEEP
    values = ",".join(map(str, SWEEP))
    _run(root, "dvc", "exp", "run", "--queue", "-S", f"n_per_cell={values}", *TARGETS)
    _run(root, "dvc", "exp", "run", "--run-all")
    assert params.read_bytes() == before  # queued experiments leave the workspace alone

    baseline = yaml.safe_load(_run(root, "git", "show", "HEAD:dvc.lock"))
    shown = json.loads(_run(root, "dvc", "exp", "show", "--json"))
    exps = _experiments(shown)
    swept = sorted(rev["data"]["params"]["params.yaml"]["data"]["n_per_cell"] for rev in exps)
    assert swept == SWEEP, json.dumps(shown, indent=1)[:4000]
    for rev in exps:
        assert rev["error"] is None, rev["error"]
        value = rev["data"]["params"]["params.yaml"]["data"]["n_per_cell"]
        stats = rev["data"]["metrics"][TRANSITIONS]["data"]  # read from the DVC cache
        assert stats and all(isinstance(n, int) for row in stats.values() for n in row.values())
        lock = yaml.safe_load(_run(root, "git", "show", f"{rev['rev']}:dvc.lock"))
        assert lock["stages"][PROBES_CELL]["params"]["params.yaml"]["n_per_cell"] == value
        # Only the targets ran: the reader's stages are as the committed dvc.lock records them.
        reader_stages = [s for s in baseline["stages"] if s.split("@")[0] in READER_STAGES]
        assert {s: lock["stages"].get(s) for s in reader_stages} == {
            s: baseline["stages"][s] for s in reader_stages
        }
