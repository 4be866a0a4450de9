"""``reader.worker: true``: a ``dvc repro`` of several answer cells loads the reader once (one
long-lived worker answers them all), writes the same answers as a stage per process, and never
serves a cell with code it did not start with (a changed source file reaches a new worker).

Real DVC in a git clone, the real llama.cpp reader on SmolLM2-135M from PyPI (slow).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from compressbench.pipeline.run_log import read_observations
from support.clone import run_in

pytestmark = pytest.mark.slow
pytest.importorskip("llama_cpp")

CELLS = ("full_context", "recency", "uniform_stride")
CONFIG = {
    "reader": {"backend": "llamacpp", "model": "smollm2", "n_threads": 1,
               "max_new_tokens": {"P2": 12}},
    "probes": ["P2"],
    "n_per_cell": 2,
    "methods": list(CELLS),
    "deletions": {"enabled": False},
}  # fmt: skip
TARGETS = [f"answers@builtin-{m}-0.3" for m in CELLS]


def _stats(root: Path) -> dict[str, dict[str, int]]:
    out = {}
    for method in CELLS:
        stats = f"data/answers/builtin/{method}/0.3.stats.json"
        out[method] = read_observations(stats, root=root)["process"]  # the cell's run log
    return out


def _answers(root: Path) -> dict[str, bytes]:
    return {m: (root / "data/answers/builtin" / m / "0.3.jsonl").read_bytes() for m in CELLS}


def _configure(root: Path, worker: bool) -> None:
    config = {**CONFIG, "reader": {**CONFIG["reader"], "worker": worker}}
    (root / "cfg.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    run_in(root, "compressbench", "use-config", "cfg.yaml")


def test_one_load_for_every_cell_and_no_stale_code(
    clone_repo: Callable[[Path], Path], tmp_path: Path
) -> None:
    per_process = clone_repo(tmp_path / "per_process")
    _configure(per_process, worker=False)
    run_in(per_process, "dvc", "repro", *TARGETS)
    alone = _stats(per_process)
    assert len({s["pid"] for s in alone.values()}) == len(CELLS)  # a process (a load) per cell

    shared = clone_repo(tmp_path / "shared")
    _configure(shared, worker=True)
    try:
        run_in(shared, "dvc", "repro", *TARGETS)
        together = _stats(shared)
        assert len({s["pid"] for s in together.values()}) == 1  # one worker answered them all
        assert [s["reader_loads"] for s in together.values()] == [1, 1, 1]  # and loaded once
        assert _answers(shared) == _answers(per_process)  # the same bytes either way

        # A changed source file: the next run may not use the worker that has the old code.
        module = shared / "src" / "compressbench" / "tpbench" / "stages" / "answers.py"
        module.write_text(module.read_text() + "\n# changed\n")
        run_in(shared, "dvc", "repro", "--force", "--single-item", TARGETS[0])
        after = _stats(shared)["full_context"]["pid"]
        assert after != together["full_context"]["pid"]
    finally:
        run_in(shared, "compressbench", "worker", "stop")
        module = shared / "src" / "compressbench" / "tpbench" / "stages" / "answers.py"
        module.write_text(module.read_text().replace("\n# changed\n", ""))
        run_in(shared, "compressbench", "worker", "stop")
