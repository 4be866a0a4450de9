"""Real DVC cannot serve a stale cell: in a git clone of the repository (the ``clone_repo``
fixture: its .gitignore, .dvcignore and committed locks, the working tree's changes applied; a
small grid with a KV press and the default offline reader written into its params.yaml), change
one input at a time; ``dvc status`` lists exactly the stages that read it (for source code:
their fingerprint stages ``code_<stage>``, through which the stages read it), ``dvc repro``
reruns them, and restoring it brings the pipeline back up to date. After a complete
``dvc repro``, ``dvc status`` reads up to date (nothing always changed).

The clone carries its own ``src/`` and runs it (``PYTHONPATH`` puts the clone's ``src`` before
the editable install), so the code deps DVC hashes are the code the stages run. Run with
``-s`` to see each change's status and timings.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from compressbench.pipeline.declare import SRC_PREFIX
from compressbench.pipeline.dvc_yaml import covered, fingerprint_stages
from compressbench.pipeline.run_log import read_observations
from compressbench.stages import declaration, declarations
from support.clone import run_in
from support.smoke import use_smoke_reader

pytestmark = pytest.mark.slow

METHODS = ["full_context", "recency", "streamingllm"]
SMALL = {
    "n_per_cell": 1,
    "seeds": [42],
    "ratios": [0.3],
    "methods": METHODS,
    "method_params": {"streamingllm": {"n_sink": 4}},
    "retention": {"ratios": [0.3], "methods": ["recency"]},
    "deletions": {"enabled": False},  # its stages still declare (and are listed for) their inputs
    "keepbench": {  # KEEP-Bench on one case per subset, short compressions
        "max_per_subset": 1,
        "compressors": {"llm": {"max_new_tokens": 16}, "recomp_extractive": {}},
    },
}
SHORT_ANSWERS = {"P1": 24, "P2": 24, "P3": 32}  # reader.max_new_tokens: a faster first repro
LOOP_VALUES: dict[str, list[Any]] = {"dataset": ["builtin"], "method": METHODS, "ratio": [0.3]}
UP_TO_DATE = "Data and pipelines are up to date."


def _proc(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_in(root, *args, timeout=3600)


def _run(root: Path, *args: str) -> str:
    proc = _proc(root, *args)
    return proc.stdout + proc.stderr


def _status(root: Path) -> set[str]:
    """Stages ``dvc status`` reports as changed (its JSON is stdout; stderr holds warnings,
    e.g. that the frozen scorer stage's dependencies are not checked)."""
    return set(json.loads(_proc(root, "dvc", "status", "--json").stdout))


def _reran(output: str) -> set[str]:
    marker = "Running stage '"
    return {line.split(marker)[1].split("'")[0] for line in output.splitlines() if marker in line}


def _stages(*names: str) -> set[str]:
    """DVC's names of every cell of the named stages (``contexts@builtin-recency-0.3``)."""
    out: set[str] = set()
    for name in names:
        over = declaration(name).over
        cells = itertools.product(*(LOOP_VALUES[key] for key in over))
        out |= {"@".join([name, "-".join(map(str, cell))]) if over else name for cell in cells}
    return out


def _declared_readers(read: str) -> set[str]:
    """The stages whose declaration lists ``read``: the cells of those reading a params.yaml
    key; for a source file, the fingerprint stages of those declaring it."""
    if read.endswith(".py"):
        return {
            code.stage
            for code in fingerprint_stages(declarations())
            if covered([p.removeprefix(SRC_PREFIX) for p in code.paths], read)
        }
    return _stages(*(d.name for d in declarations() if read.split(".")[0] in d.params))


def _cells(listed: set[str]) -> set[str]:
    """The cells of the stages whose fingerprint stage is listed (they rerun after it)."""
    return _stages(*(n.removeprefix("code_") for n in listed if n.startswith("code_")))


@pytest.fixture(scope="module")
def project(
    tmp_path_factory: pytest.TempPathFactory, clone_repo: Callable[[Path], Path]
) -> Iterator[Path]:
    root = clone_repo(tmp_path_factory.mktemp("declared") / "repo")
    params = root / "params.yaml"
    raw = yaml.safe_load(params.read_text(encoding="utf-8"))
    raw.update({k: v for k, v in SMALL.items() if k != "keepbench"})
    raw["keepbench"].update(SMALL["keepbench"])  # DVC reads each keepbench key a cell declares
    use_smoke_reader(raw)  # hf: the grid has a KV press
    raw["reader"]["max_new_tokens"] = SHORT_ANSWERS
    raw["tracking"]["uri"] = f"sqlite:///{root / 'mlflow.db'}"
    params.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    start = time.perf_counter()
    _run(root, "dvc", "repro")
    print(f"\nfirst dvc repro: {time.perf_counter() - start:.0f} s")
    assert _status(root) == set()
    status = _proc(root, "dvc", "status")
    print(f"dvc status after it:\n{status.stderr}{status.stdout}")
    assert status.stdout.strip() == UP_TO_DATE
    yield root


def _params_edit(dotted: str, value: object) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        path = root / "params.yaml"
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        *parents, last = dotted.split(".")
        node = raw
        for key in parents:
            node = node[key]
        assert node[last] != value
        node[last] = value
        path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")

    return edit


def _source_edit(relpath: str, old: str, new: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        path = root / "src" / "compressbench" / relpath
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, old
        path.write_text(text.replace(old, new), encoding="utf-8")

    return edit


# judge: its P1 question; answers and deletion_answers: the structured-answer schema; metrics
# (its answers table) and viewer: a prompt's question part (split_user)
PROMPT_READERS = [
    "probes",
    "contexts",
    "answers",
    "retention",
    "deletions",
    "deletion_answers",
    "judge",
    "metrics",
    "viewer",
]
CHANGES = {
    "method_params": (
        _params_edit("method_params.streamingllm.n_sink", 8),
        _stages("method_files", "contexts", "answers", "retention", "metrics"),
    ),
    "reader": (
        _params_edit("reader.max_input_tokens", 4096),
        _stages("contexts", "answers", "retention", "deletion_answers", "metrics"),
    ),
    "tpbench/prompts.py": (
        _source_edit("tpbench/prompts.py", "Do not add markdown", "Never add markdown"),
        {f"code_{n}" for n in PROMPT_READERS},
    ),
    # A probe type is one object (sampler, question, parser, scorer): the answer parser is code
    # of every stage that samples, asks or scores probes; the answers rerun from the cache.
    "tpbench/scoring/parse.py": (
        _source_edit("tpbench/scoring/parse.py", '"n/a", "none"}', '"n/a", "none", "not sure"}'),
        {f"code_{n}" for n in (*PROMPT_READERS, "scores", "deletion_scores", "report")},
    ),
}
# Changes also reproduced (not only listed): the press one regenerates only its own answers.
REPRO = {"method_params", "tpbench/scoring/parse.py"}
# Stages a rerun may reach through changed outputs (never probes, transitions or deletions).
DOWNSTREAM = ("scores", "judge", "deletion_scores", "viewer", "metrics", "report")


@pytest.mark.parametrize("change", list(CHANGES))
def test_status_lists_exactly_the_stages_that_read_a_change(project: Path, change: str) -> None:
    edit, expected = CHANGES[change]
    assert expected == _declared_readers(change)  # the declarations say the same
    saved = {p: p.read_bytes() for p in (project / "params.yaml", *project.rglob("*.py"))}
    edit(project)
    listed = _status(project)
    print(f"\n{change}: dvc status lists {sorted(listed)}")
    assert listed == expected
    if change in REPRO:
        start = time.perf_counter()
        out = _run(project, "dvc", "repro")
        print(f"dvc repro ({time.perf_counter() - start:.0f} s) reran {sorted(_reran(out))}")
        reran = _reran(out)
        rerun_cells = expected | _cells(expected)
        assert rerun_cells <= reran <= rerun_cells | _stages(*DOWNSTREAM)
        assert _status(project) == set()
        if "answers@builtin-full_context-0.3" in expected:
            stats = "data/answers/builtin/full_context/0.3.stats.json"
            assert read_observations(stats, root=project)["model_calls"] == 0  # its run log
    for path, data in saved.items():
        path.write_bytes(data)
    if change in REPRO:
        _run(project, "dvc", "repro")
    assert _status(project) == set()


def test_warm_repro_runs_nothing(project: Path) -> None:
    start = time.perf_counter()
    out = _run(project, "dvc", "repro")
    print(f"\nwarm dvc repro: {time.perf_counter() - start:.2f} s")
    assert _reran(out) == set()
