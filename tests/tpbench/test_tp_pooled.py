"""``benchmarks/tp_pooled.py`` (issue #31's pooled table): per-sample and pooled paired gaps to
full context and "read | kept", on scores and contexts files written the pipeline's way."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from compressbench.tpbench.report.findings import paired_gap
from compressbench.tpbench.stages import paths
from support.scripts import load_script


def _pooled() -> ModuleType:
    return load_script("tp_pooled", "benchmarks")


# (dataset, seed, probe id, dialogue, gold, full context right, method right, method keeps value)
PROBES = [
    ("sgd", 42, "a", "d1", "Joseph", 1, 1, True),
    ("sgd", 42, "b", "d1", "6 pm", 1, 0, True),
    ("sgd", 42, "c", "d2", "March 3rd", 0, 0, False),
    ("sgd", 43, "a", "d1", "Joseph", 1, 1, True),
    ("sgd", 43, "e", "d3", "Cambridge", 1, 0, False),
    ("multiwoz", 42, "m", "w1", "cheap", 0, 1, True),
]


def _write(root: Path, dataset: str, method: str, template: str, rows: list[dict]) -> None:
    path = root / paths.fill(template, dataset=dataset, method=method, ratio=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


@pytest.fixture
def run_root(tmp_path: Path) -> Path:
    for ds, seed, pid, dlg, gold, fc, tp, kept in PROBES:
        for method, right, text in (
            ("full_context", fc, f"USER: it is {gold}."),
            ("turning_point", tp, f"USER: it is {gold}." if kept else "USER: hello."),
        ):
            score = {
                "probe_id": pid,
                "probe_type": "P2",
                "seed": seed,
                "dialogue_id": dlg,
                "gold": gold,
                "scores": {"strict": right},
            }
            _write(tmp_path, ds, method, paths.SCORES, [score])
            if seed == 42 or ds == "multiwoz":  # contexts are per probe, not per seed
                _write(
                    tmp_path,
                    ds,
                    method,
                    paths.CONTEXTS,
                    [{"probe_id": pid, "compressed_text_used": text}],
                )
    # seed 43's probe "e" has its own context
    _write(
        tmp_path,
        "sgd",
        "turning_point",
        paths.CONTEXTS,
        [{"probe_id": "e", "compressed_text_used": "USER: hello."}],
    )
    _write(
        tmp_path,
        "sgd",
        "full_context",
        paths.CONTEXTS,
        [{"probe_id": "e", "compressed_text_used": "USER: Cambridge."}],
    )
    return tmp_path


def test_samples_and_pool(run_root: Path) -> None:
    rows = _pooled().table(
        run_root,
        ["sgd", "multiwoz"],
        ["turning_point"],
        0.3,
        ["P2"],
        pool=[("sgd", 42), ("sgd", 43), ("multiwoz", 42)],
    )
    by = {r["sample"]: r for r in rows}
    assert set(by) == {
        "sgd seed 42",
        "sgd seed 43",
        "multiwoz seed 42",
        "multiwoz seed 43",
        "pooled: sgd 42 + sgd 43 + multiwoz 42",
    } - {"multiwoz seed 43"}  # a sample with no probe has no row
    sgd42 = by["sgd seed 42"]
    assert (sgd42["n"], sgd42["full_context"], sgd42["score"]) == (3, 2 / 3, 1 / 3)
    assert (sgd42["kept"], sgd42["read_kept"]) == (2, 0.5)
    pooled = by["pooled: sgd 42 + sgd 43 + multiwoz 42"]
    assert (pooled["n"], pooled["dialogues"]) == (6, 4)
    assert pooled["full_context"] == pytest.approx(4 / 6) and pooled["score"] == pytest.approx(
        3 / 6
    )
    assert (pooled["kept"], pooled["read_kept"]) == (4, 0.75)
    # the pooled interval is the report's own paired, dialogue-clustered gap
    score_rows = {
        m: [
            json.loads(line)
            for ds in ("sgd", "multiwoz")
            for line in (run_root / paths.fill(paths.SCORES, dataset=ds, method=m, ratio=0.3))
            .read_text()
            .splitlines()
        ]
        for m in ("full_context", "turning_point")
    }
    gap = paired_gap(
        score_rows["full_context"],
        score_rows["turning_point"],
        method_name="turning_point",
        metric="strict",
        probe_type="P2",
    )
    assert gap is not None
    assert (pooled["gap"], pooled["low"], pooled["high"]) == (gap.gap, gap.low, gap.high)
    assert "| sgd seed 42 | turning_point | P2 | 3 (2) | 0.667 | 0.333 |" in _pooled().markdown(
        rows, "strict"
    )
