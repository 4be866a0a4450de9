"""The method ranking against the paper's Llama-3.1-8B (Table 3): the pinned numbers against the
spec's table, ρ per column (+1 for the paper's order, −1 reversed), methods without a paper
value, and the report section."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from scipy.stats import rankdata

from compressbench.tpbench.report.document import render
from compressbench.tpbench.report.model import FIGURES, CellData, ReportInput, compute
from compressbench.tpbench.report.paper_ranking import rank_against_paper, rank_column
from compressbench.tpbench.report.paper_table3 import COLUMNS, SPEC_NAMES, TABLE3, paper_dataset
from compressbench.tpbench.report.sections_paper import TITLE, paper_ranking
from compressbench.tpbench.slot_types import slot_type
from support.paths import SHARED

SPEC = SHARED / "ref" / "tpbench_spec.md"
RATIO = 0.3
# The one-seed SGD study's methods: two of them have no paper value.
METHODS = (
    "full_context",
    "recency",
    "first_n",
    "random_seed42",
    "uniform_stride",
    "first_user_recent",
    "embedding_mmr",
    "attention_h2o",
    "turning_point",
)
OURS_ONLY = ("first_user_recent", "turning_point")


def _values(cell: str, k: int) -> list[float | None]:
    """``0.487 / 0.850`` -> [0.487, 0.850]; ``–`` -> [None] * k; parentheses dropped."""
    parts = [p.strip() for p in re.sub(r"\(.*?\)", "", cell).split("/")]
    if parts == ["–"]:
        return [None] * k
    assert len(parts) == k, cell
    return [float(p) for p in parts]


def spec_table3() -> dict[str, dict[str, dict[str, float]]]:
    """The spec's H1 table, parsed: dataset -> method (ours) -> column -> value."""
    section = SPEC.read_text(encoding="utf-8").split("#### H1.")[1].split("\n#### ")[0]
    lines = [x for x in section.splitlines() if x.startswith("| ")]
    split = [[c.strip() for c in x.strip().strip("|").split("|")] for x in lines]
    assert split[0] == [
        "method",
        "SGD P1 s/l",
        "SGD P2 strict",
        "SGD P3 loose/strict",
        "MW P1 s/l",
        "MW P2 strict",
        "MW P3 loose/strict",
    ]
    out: dict[str, dict[str, dict[str, float]]] = {"sgd": {}, "multiwoz": {}}
    for cells in split[1:]:
        name = re.sub(r"\s*\(.*\)$", "", cells[0])
        for dataset, (p1, p2, p3) in (("sgd", cells[1:4]), ("multiwoz", cells[4:7])):
            p1s, p1l = _values(p1, 2)
            p3l, p3s = _values(p3, 2)
            values = (p1s, p1l, *_values(p2, 1), p3l, p3s)
            out[dataset][SPEC_NAMES.get(name, name)] = {
                c: v for c, v in zip(COLUMNS, values, strict=True) if v is not None
            }
    return out


@pytest.mark.skipif(not SPEC.is_file(), reason=f"the spec is not here ({SPEC})")
def test_the_pinned_table3_is_the_specs_h1_table() -> None:
    spec = spec_table3()
    assert len(spec["sgd"]) == len(spec["multiwoz"]) == 9
    assert spec == TABLE3
    assert set(TABLE3["sgd"]["chunkkv"]) == {"P2-strict", "P3-loose", "P3-strict"}
    assert TABLE3["multiwoz"]["attention_h2o"]["P2-strict"] == 0.244  # a spot check by eye


@pytest.mark.parametrize(
    ("dataset", "paper"),
    [
        ("sgd", "sgd"),
        ("sgd_upstream", "sgd"),
        ("SGD", "sgd"),
        ("multiwoz", "multiwoz"),
        ("multiwoz_upstream", "multiwoz"),
        ("mw22", "multiwoz"),
        ("builtin", None),
        ("risawoz", None),
        ("sgdx", None),
    ],
)
def test_which_datasets_have_paper_values(dataset: str, paper: str | None) -> None:
    assert paper_dataset(dataset) == paper


def test_the_papers_order_gives_rho_one_and_the_reverse_minus_one() -> None:
    paper = {"a": 0.9, "b": 0.5, "c": 0.5, "d": 0.1}
    same = rank_column("P2-strict", {"a": 0.7, "b": 0.3, "c": 0.3, "d": 0.0}, paper)
    assert same.rho == pytest.approx(1.0) and same.n == 4
    expected = [1, 2.5, 2.5, 4]
    assert [m.rank for m in same.methods] == [m.paper_rank for m in same.methods] == expected
    reverse = rank_column("P2-strict", {"a": 0.0, "b": 0.3, "c": 0.3, "d": 0.7}, paper)
    assert reverse.rho == pytest.approx(-1.0)
    swap = rank_column("P2-strict", {"a": 0.9, "b": 0.1, "c": 0.5, "d": 0.3}, {**paper, "c": 0.4})
    # ranks 1, 4, 2, 3 vs 1, 2, 3, 4: 1 - 6·(0 + 4 + 1 + 1) / (4·15)
    assert swap.rho == pytest.approx(0.4)


def test_methods_without_a_paper_value_keep_their_score_and_stay_out_of_rho() -> None:
    ours = {"full_context": 0.5, "turning_point": 0.9, "chunkkv": 0.2, "recency": 0.1}
    [p1, p2] = rank_against_paper(
        {m: {"P1-strict": s, "P2-strict": s} for m, s in ours.items()},
        TABLE3["sgd"],
        ["P1-strict", "P2-strict"],
    )
    tp = next(m for m in p1.methods if m.method == "turning_point")
    assert (tp.score, tp.paper, tp.rank, tp.paper_rank) == (0.9, None, None, None)
    assert p1.compared() == ["full_context", "recency"]  # ChunkKV has no P1 in the paper
    assert p1.n == 2 and p1.rho is None  # fewer than three: no ρ
    assert p2.compared() == ["full_context", "chunkkv", "recency"]
    # ranks 1, 2, 3 here; the paper's 1, 3, 2 (0.691, 0.133, 0.254): 1 - 6·2 / (3·8)
    assert p2.rho == pytest.approx(0.5)
    assert [m.rank for m in p2.methods] == [1, None, 2, 3]
    assert [m.paper_rank for m in p2.methods] == [1, None, 3, 2]


# --- the report section on a synthetic one-seed SGD grid -------------------------------------

PROBE_METRICS = {  # probe -> (strict column, loose column)
    "P1": ("P1-strict", "P1-loose"),
    "P2": ("P2-strict", "P2-strict"),
    "P3": ("P3-strict", "P3-loose"),
}
N = 20  # answers (one dialogue each) per probe


def counts(reverse: bool) -> dict[str, dict[str, int]]:
    """Right answers per method and column: the dense rank of the paper's value among the grid's
    methods (so this run orders the methods as the paper does, ties included), or reversed;
    the two methods without a paper value get 10."""
    paper = TABLE3["sgd"]
    shared = [m for m in METHODS if m in paper]
    out: dict[str, dict[str, int]] = {m: {} for m in METHODS}
    for column in COLUMNS:
        dense = rankdata([paper[m][column] for m in shared], method="dense").astype(int)
        for m, r in zip(shared, dense, strict=True):
            out[m][column] = int(dense.max()) + 1 - int(r) if reverse else int(r)
        for m in OURS_ONLY:
            out[m][column] = 10
    return out


def grid(reverse: bool = False, dataset: str = "sgd") -> ReportInput:
    cells = {}
    for method, right in counts(reverse).items():
        rows = [
            {
                "probe_type": probe,
                "seed": 42,
                "probe_id": f"{dataset}:d{i:02d}:qa00",
                "dialogue_id": f"d{i:02d}",
                "dataset": dataset,
                "gold": "7 pm",
                "slot": "time",
                "format_error": 0,
                "error": None,
                "scores": {"strict": int(i < right[s]), "loose": int(i < right[lo])},
            }
            for probe, (s, lo) in PROBE_METRICS.items()
            for i in range(N)
        ]
        contexts = [{**r, "compressed_text_used": "USER: at 7 pm"} for r in rows]
        cells[(dataset, method, RATIO)] = CellData(dataset, method, RATIO, rows, contexts, {})
    return ReportInput(
        datasets=[dataset],
        methods=list(METHODS),
        ratios=[RATIO],
        main_ratio=RATIO,
        seeds=[42],
        reader="`llamacpp` `qwen2.5-coder-1.5b-instruct`",
        default_reader=False,
        cells=cells,
        styles={m: "full" if m == "full_context" else "positional" for m in METHODS},
        labels={"full_context": "full context", "first_n": "earliest turns"},
        slot_type=slot_type,
        retention={dataset: None},
        deletions=None,
    )


def section_text(inp: ReportInput) -> str:
    return "\n".join(paper_ranking(inp, compute(inp)))


@pytest.mark.parametrize(("reverse", "rho"), [(False, 1.0), (True, -1.0)])
def test_a_grid_in_the_papers_order_has_rho_one_reversed_minus_one(
    reverse: bool, rho: float
) -> None:
    f = compute(grid(reverse))
    assert set(f.paper_ranking) == {"sgd"}
    rankings = f.paper_ranking["sgd"]
    assert [r.column for r in rankings] == list(COLUMNS)
    for r in rankings:
        assert r.n == 7 and r.rho == pytest.approx(rho)
        assert set(r.compared()) == set(METHODS) - set(OURS_ONLY)
        assert [m.method for m in r.methods] == list(METHODS)
    p2 = {m.method: m for m in rankings[2].methods}
    # P2-strict in the paper: full 0.691 > MMR 0.309 > stride 0.283 > ... > attention 0.114
    assert p2["full_context"].paper_rank == 1 and p2["embedding_mmr"].paper_rank == 2
    assert p2["full_context"].rank == (7 if reverse else 1)
    assert p2["attention_h2o"].score == (7 if reverse else 1) / N  # the paper's last (0.114)
    text = section_text(grid(reverse))
    assert f"| P2-strict | 7 | {rho:+.2f} |" in text
    assert "| turning_point | 0.500 / – | 0.500 / – |" in text


def test_the_section_text_for_the_papers_order() -> None:
    text = section_text(grid())
    assert text.startswith(f"{TITLE}\n") and TITLE.endswith("Llama-3.1-8B")
    assert "### sgd\n" in text
    # P1-strict: uniform stride and attention tie in the paper (0.493) and here
    stride = next(x for x in text.splitlines() if x.startswith("| uniform_stride |"))
    assert stride.split(" | ")[1] == "0.300 (1.5) / 0.493 (1.5)"
    assert "| full context | 0.250 (3) / 0.487 (3) | 0.200 (4) / 0.850 (4) |" in text


def test_a_grid_without_paper_values_says_so_in_one_line() -> None:
    lines = paper_ranking(grid(dataset="builtin"), compute(grid(dataset="builtin")))
    assert lines == [
        TITLE,
        "",
        "Applies to sgd and multiwoz only (the paper's Table 3); no dataset of this run "
        "(builtin) has paper values.",
        "",
    ]


def test_the_section_follows_what_a_single_average_hides() -> None:
    inp = grid()
    figures = {name: Path("figures") / f"{name}.png" for name in FIGURES}
    text = render(inp, compute(inp), figures, Path("."))
    order = [
        "## Main results",
        "## Cell accuracies with 95% intervals",
        "## What a single average hides",
        "![rank_changes]",
        TITLE,
        "## P3 gap to full context",
    ]
    positions = [text.index(s) for s in order]
    assert positions == sorted(positions)
