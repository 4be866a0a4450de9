"""A probe type owns its rules and joins the report by being registered: a throwaway probe type
``PX``, registered for one test and removed after it, shows in every per-probe table of the
report (main results, answer kinds, MLflow runs) and in the metrics stage's summary, and its own
budget, ratio rule and retention field are what the pipeline reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compressbench.tpbench.probe_types import PROBE_TYPES, get_probe_type, pipeline_probe_types
from compressbench.tpbench.probe_types.spec import KindRule, ProbeType, score_is_one
from compressbench.tpbench.report.document import render
from compressbench.tpbench.report.model import (
    FIGURES,
    CellData,
    ReportInput,
    RunRef,
    compute,
    kind_table_probes,
)
from compressbench.tpbench.report.retention_reading import examples
from compressbench.tpbench.report.summary import SummaryGrid, summary_markdown
from compressbench.tpbench.slot_types import slot_type

RATIO = 0.3
PX = ProbeType(
    name="PX",
    title="throwaway",
    rescore_references=("reference",),
    rescore=lambda answer: {},
    sample=lambda pool, seed, n: [],  # a sampler: the pipeline asks it
    output_tokens=7,
    main_ratio_only=True,
    kind_rule=KindRule(correct=score_is_one("strict"), superseded=lambda row: False),
    retention_field="gold",
)


@pytest.fixture
def px(monkeypatch: pytest.MonkeyPatch) -> Iterator[ProbeType]:
    """PX registered for one test; the registry as it was afterwards."""
    before = list(PROBE_TYPES)
    monkeypatch.setitem(PROBE_TYPES, "PX", PX)
    yield PX
    monkeypatch.undo()
    assert list(PROBE_TYPES) == before


def _row(probe: str, i: int, strict: int) -> dict[str, Any]:
    return {
        "probe_type": probe,
        "seed": 42,
        "probe_id": f"d{i}:{probe}",
        "dialogue_id": f"d{i}",
        "dataset": "builtin",
        "gold": "7 pm",
        "old_value": "5 pm",
        "slot": "time",
        "prediction": "7 pm" if strict else "nothing",
        "abstain": 0,
        "format_error": 0,
        "error": None,
        "scores": {"strict": strict, "loose": strict},
    }


def _input() -> ReportInput:
    # PX right on 3 of 4 answers, P2 on 1 of 4, under both methods
    rows = [_row("PX", i, int(i < 3)) for i in range(4)] + [
        _row("P2", i, int(i < 1)) for i in range(4)
    ]
    contexts = [
        {
            "probe_type": r["probe_type"],
            "seed": 42,
            "probe_id": r["probe_id"],
            "compressed_text_used": "USER: at 7 pm",
        }
        for r in rows
    ]
    methods = ("full_context", "recency")
    return ReportInput(
        datasets=["builtin"],
        methods=list(methods),
        ratios=[RATIO],
        main_ratio=RATIO,
        seeds=[42],
        reader="`hf` `tiny`",
        default_reader=False,
        cells={
            ("builtin", m, RATIO): CellData("builtin", m, RATIO, rows, contexts, {"kv": None})
            for m in methods
        },
        styles={"full_context": "full", "recency": "positional"},
        labels={},
        slot_type=slot_type,
        retention={"builtin": None},
        deletions=None,
        runs={
            ("builtin", p, 42, RATIO, m): RunRef(f"run-{p}-{m}")
            for p in ("P2", "PX")
            for m in methods
        },
    )


def _table_after(text: str, title: str) -> list[str]:
    """The markdown table rows of the section titled ``title`` (its first table)."""
    lines = text[text.index(title) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return lines[start:end]


def test_a_registered_probe_type_shows_in_every_per_probe_table_of_the_report(
    px: ProbeType,
) -> None:
    assert [p.name for p in pipeline_probe_types()] == ["P1", "P2", "P3", "PX"]
    inp = _input()
    findings = compute(inp)
    text = render(inp, findings, {n: Path(f"{n}.png") for n in FIGURES}, Path("."))

    main = _table_after(text, "## Main results")
    assert main[0].startswith("| method | P1 strict | P1 loose | P2 strict | P2 loose |")
    assert "| PX strict | PX loose | fmt err P1 / P2 / P3 / PX | n P1 / P2 / P3 / PX |" in main[0]
    # recency: P1 and P3 absent, P2 0.25, PX 0.75 (strict and loose), 4 answers each
    recency = next(r for r in main if r.startswith("| recency "))
    assert "| 0.250 | 0.250 |" in recency and recency.count("| 0.750 ") == 2
    assert recency.endswith("| – / 4 / – / 4 |")

    kinds = _table_after(text, "## What the reader answers")
    px_rows = [r for r in kinds if "| PX |" in r]
    assert len(px_rows) == 2  # one per method
    assert all("| 4 | 0.750 (3) |" in r for r in px_rows)  # n, correct

    runs = _table_after(text, "## Where every number comes from")
    assert runs[0] == "| dataset | method | r | seed | P1 run | P2 run | P3 run | PX run |"
    assert any(r.endswith(" | logged |") for r in runs)  # PX's run: no id in the report
    assert not any("run-PX-recency" in r for r in runs)


def test_the_summary_has_a_column_for_a_registered_probe_type(px: ProbeType) -> None:
    headline = {"builtin": {"recency": {"0.3": {"PX": {"strict": 0.75, "loose": 1.0, "n": 4}}}}}
    text = summary_markdown(SummaryGrid(["builtin"], ["recency"], ["0.3"], "About."), headline)
    assert "| method | P1 | P2 | P3 | PX |" in text
    assert "| recency | – | – | – | 0.750 / 1.000 (n=4) |" in text


def test_a_probe_type_owns_its_budget_ratio_rule_and_retention_field(px: ProbeType) -> None:
    found = get_probe_type("px")
    assert found.output_budget({}) == 7
    assert found.output_budget({"PX": 12, "P1": 3}) == 12
    assert [found.built_at(r, 0.3) for r in (0.1, 0.3)] == [False, True]
    assert get_probe_type("P1").built_at(0.1, 0.3)
    assert "PX" in [p.name for p in kind_table_probes()]
    rows = [_row("PX", 0, 1)]
    contexts = [{**rows[0], "compressed_text_used": "nothing kept"}]
    (example,) = examples(contexts, rows, "PX")
    assert example.retained is False and example.correct


def test_the_published_probe_types_keep_their_rules() -> None:
    """The paper's budgets (spec §6), P3 only at ``p3_ratio``, and the answer-kind table of
    P2 and P3 (P1's kinds are the viewer's only)."""
    budgets = {p.name: p.output_budget({}) for p in pipeline_probe_types()}
    assert budgets == {"P1": 96, "P2": 96, "P3": 128}
    assert [p.name for p in pipeline_probe_types() if p.main_ratio_only] == ["P3"]
    assert [p.name for p in kind_table_probes()] == ["P2", "P3"]
    assert "PX" not in PROBE_TYPES
