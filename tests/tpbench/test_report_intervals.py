"""Cell accuracies with dialogue-clustered bootstrap intervals: the pooled mean, the report's
bootstrap settings, intervals that narrow with more dialogues, the report section's rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compressbench.analysis.stats import cluster_bootstrap
from compressbench.tpbench.report.cell_intervals import cell_intervals, dialogue_of
from compressbench.tpbench.report.document import render
from compressbench.tpbench.report.model import FIGURES, CellData, ReportInput, compute
from compressbench.tpbench.report.sections_intervals import TITLE
from compressbench.tpbench.report.sections_intervals import cell_intervals as section
from compressbench.tpbench.slot_types import slot_type

RATIO = 0.3


def row(probe: str, seed: int, dialogue: str, strict: int, loose: int, **extra: Any) -> dict:
    return {
        "probe_type": probe,
        "seed": seed,
        "probe_id": f"builtin:{dialogue}:qa00",
        "dialogue_id": dialogue,
        "dataset": "builtin",
        "gold": "7 pm",
        "slot": "time",
        "format_error": 0,
        "abstain": 0,
        "error": None,
        "scores": {"strict": strict, "loose": loose},
        **extra,
    }


def alternating(n_dialogues: int, probe: str = "P2") -> list[dict]:
    """One answer per dialogue, right in every other dialogue: mean 0.5."""
    return [row(probe, 42, f"d{i:03d}", i % 2, 1) for i in range(n_dialogues)]


def test_the_estimate_is_the_pooled_mean_over_seeds_clustered_by_dialogue() -> None:
    # two seeds ask about the same 6 dialogues; seed 43 asks dialogue d0 twice
    strict = {42: [1, 1, 0, 0, 1, 0], 43: [1, 0, 0, 1, 1, 1]}
    rows = [row("P1", s, f"d{i}", v, 1) for s, vs in strict.items() for i, v in enumerate(vs)]
    rows.append(row("P1", 43, "d0", 0, 0, probe_id="builtin:d0:qa01"))
    ci = cell_intervals(rows)
    assert set(ci) == {("P1", "strict"), ("P1", "loose")}
    s = ci[("P1", "strict")]
    assert s.estimate == pytest.approx(7 / 13)  # every answer counts once, seeds pooled
    assert (s.n, s.n_clusters, s.resamples, s.level) == (13, 6, 5000, 0.95)
    assert s.low <= s.estimate <= s.high
    assert ci[("P1", "loose")].estimate == pytest.approx(12 / 13)
    # the report's P3-gap settings: 5,000 resamples from default_rng(20260928)
    values = [r["scores"]["strict"] for r in rows]
    same = cluster_bootstrap(
        values, [r["dialogue_id"] for r in rows], resamples=5000, seed=20260928
    )
    assert (s.low, s.high) == (same.low, same.high)


def test_the_interval_contains_the_mean_and_narrows_with_more_dialogues() -> None:
    widths = []
    for n in (20, 80, 320):
        ci = cell_intervals(alternating(n))[("P2", "strict")]
        assert ci.estimate == 0.5 and ci.low < 0.5 < ci.high
        assert ci.n == ci.n_clusters == n
        widths.append(ci.high - ci.low)
    assert widths[0] > widths[1] > widths[2]
    assert widths[2] == pytest.approx(widths[0] / 4, rel=0.25)  # about 1/sqrt(n)


def test_a_cell_all_right_has_a_zero_width_interval_and_probes_without_rows_are_absent() -> None:
    ci = cell_intervals([row("P3", 42, f"d{i}", 1, 1) for i in range(5)])
    assert set(ci) == {("P3", "strict"), ("P3", "loose")}
    assert (ci[("P3", "strict")].low, ci[("P3", "strict")].high) == (1.0, 1.0)


def test_the_dialogue_comes_from_the_probe_id_when_the_row_lacks_it() -> None:
    assert dialogue_of({"dialogue_id": "d7", "probe_id": "sgd:x:qa00"}) == "d7"
    assert dialogue_of({"probe_id": "sgd:1_00012:qa03"}) == "1_00012"
    assert dialogue_of({"dialogue_id": "", "probe_id": "mw:a:b:qa01"}) == "a:b"
    with pytest.raises(ValueError, match="no dialogue_id"):
        dialogue_of({"probe_id": "q17"})


def cell(method: str, rows: list[dict]) -> CellData:
    contexts = [
        {
            "probe_type": r["probe_type"],
            "seed": r["seed"],
            "probe_id": r["probe_id"],
            "compressed_text_used": "USER: at 7 pm",
        }
        for r in rows
    ]
    return CellData("builtin", method, RATIO, rows, contexts, {"kv": None})


def report_input(cells: dict[str, list[dict]], dataset: str = "builtin") -> ReportInput:
    styles = {"full_context": "full", "recency": "positional", "first_n": "positional"}
    return ReportInput(
        datasets=[dataset],
        methods=list(cells),
        ratios=[RATIO],
        main_ratio=RATIO,
        seeds=[42],
        reader="`llamacpp` `qwen2.5-coder-1.5b-instruct`",
        default_reader=False,
        cells={(dataset, m, RATIO): cell(m, rows) for m, rows in cells.items()},
        styles={m: styles.get(m, "content") for m in cells},
        labels={"full_context": "full context", "first_n": "earliest turns"},
        slot_type=slot_type,
        retention={dataset: None},
        deletions=None,
    )


def grid() -> ReportInput:
    full = [row(p, 42, f"d{i}", 1, 1) for p in ("P1", "P2", "P3") for i in range(5)]
    recency = [row("P1", 42, f"d{i}", 0, i % 2) for i in range(5)] + alternating(40)
    first_n = [row("P2", 42, f"d{i}", int(i < 3), 1) for i in range(5)]
    return report_input({"full_context": full, "recency": recency, "first_n": first_n})


def test_findings_hold_every_cell_at_the_main_ratio_and_the_section_shows_them() -> None:
    inp = grid()
    f = compute(inp)
    assert len(f.intervals) == 6 + 4 + 2
    recency_p2 = f.intervals[("builtin", "recency", RATIO, "P2", "strict")]
    assert (recency_p2.estimate, recency_p2.n, recency_p2.n_clusters) == (0.5, 40, 40)
    lines = section(inp, f)
    assert lines[0] == TITLE
    text = "\n".join(lines)
    one = "1.000 [1.000, 1.000]"
    assert f"| full context | {' | '.join([one] * 6)} | 5 (5) / 5 (5) / 5 (5) |" in text
    low, high = recency_p2.low, recency_p2.high
    p1 = f.intervals[("builtin", "recency", RATIO, "P1", "loose")]
    assert (
        f"| recency | 0.000 [0.000, 0.000] | {p1.estimate:.3f} [{p1.low:.3f}, {p1.high:.3f}] | "
        f"0.500 [{low:.3f}, {high:.3f}] | 1.000 [1.000, 1.000] | – | – | 5 (5) / 40 (40) / – |"
    ) in text
    assert "| earliest turns | – | – | 0.600 [" in text


def test_the_section_follows_main_results_in_the_report() -> None:
    inp = grid()
    figures = {name: Path("figures") / f"{name}.png" for name in FIGURES}
    text = render(inp, compute(inp), figures, Path("."))
    assert text.index("## Main results") < text.index(TITLE) < text.index("## What a single")
