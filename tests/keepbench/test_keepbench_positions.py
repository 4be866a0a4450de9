"""§5.3 position analysis: the 14 block arrangements per two-hop parallel case and Table 4."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from compressbench.errors import InputError
from compressbench.keepbench.cases import KeepCase
from compressbench.keepbench.loader import builtin_cases, evaluation_cases
from compressbench.keepbench.positions import (
    arrange,
    arrangements,
    branch_blocks,
    middle_gap,
    position_summary,
    position_variants,
)


@pytest.fixture(scope="module")
def case() -> KeepCase:
    return next(c for c in builtin_cases() if c.case_id == "sample:parallel:01")


def test_fourteen_arrangements(case: KeepCase) -> None:
    arrs = arrangements(case)
    assert len(arrs) == 2 * 3 * 2 + 2 == 14
    assert Counter(a.distance for a in arrs) == {"adjacent": 6, "middle": 6, "distant": 2}
    assert len({a.name for a in arrs}) == 14
    assert len({a.paragraph_order for a in arrs}) == 14  # all distinct for this case
    assert arrangements(case) == arrs  # deterministic


def test_blocks_stay_whole_in_reasoning_order_and_others_keep_their_order(case: KeepCase) -> None:
    b1, b2 = branch_blocks(case)
    assert (b1, b2) == ((1, 3), (4, 6))
    others = [0, 2, 5, 7]
    for a in arrangements(case):
        seq = list(a.paragraph_order)
        assert sorted(seq) == list(range(8))
        for block in (b1, b2):
            i = seq.index(block[0])
            assert seq[i + 1] == block[1], a.name
        assert [p for p in seq if p in others] == others, a.name
        first = b1 if a.order == (1, 2) else b2
        assert seq.index(first[0]) < seq.index((b2 if first == b1 else b1)[0])


def _gap(seq: tuple[int, ...], first: tuple[int, int], second: tuple[int, int]) -> int:
    return seq.index(second[0]) - seq.index(first[1]) - 1


def test_distances_and_placements(case: KeepCase) -> None:
    b1, b2 = branch_blocks(case)
    by_name = {a.name: a.paragraph_order for a in arrangements(case)}
    assert by_name["adjacent-front-12"] == (1, 3, 4, 6, 0, 2, 5, 7)
    assert by_name["adjacent-end-21"] == (0, 2, 5, 7, 4, 6, 1, 3)
    assert by_name["adjacent-center-12"] == (0, 2, 1, 3, 4, 6, 5, 7)
    assert middle_gap(8) == 2
    assert by_name["middle-front-12"] == (1, 3, 0, 2, 4, 6, 5, 7)
    assert by_name["middle-center-21"] == (0, 4, 6, 2, 5, 1, 3, 7)
    # distant: the blocks at opposite ends of the context
    assert by_name["distant-ends-12"] == (1, 3, 0, 2, 5, 7, 4, 6)
    assert by_name["distant-ends-21"][:2] == b2 and by_name["distant-ends-21"][-2:] == b1
    for name, seq in by_name.items():
        first, second = (b1, b2) if name.endswith("12") else (b2, b1)
        expected = {"adjacent": 0, "middle": 2, "distant": 4}[name.split("-")[0]]
        assert _gap(seq, first, second) == expected, name


@pytest.mark.parametrize(("n", "gap"), [(4, 0), (5, 1), (6, 1), (8, 2), (20, 8), (21, 9), (40, 18)])
def test_middle_gap_is_about_half_the_context(n: int, gap: int) -> None:
    assert middle_gap(n) == gap


def test_arrange_moves_paragraphs_and_proposition_indices(case: KeepCase) -> None:
    a = arrangements(case)[-1]  # distant-ends-21
    moved = arrange(case, a)
    assert moved.case_id == "sample:parallel:01@distant-ends-21"
    for p_old, p_new in zip(case.propositions, moved.propositions, strict=True):
        assert p_old.paragraph is not None and p_new.paragraph is not None
        assert moved.paragraphs[p_new.paragraph] == case.paragraphs[p_old.paragraph]
    assert moved.proposition("c2h1").paragraph == 0
    assert moved.proposition("c1h2").paragraph == 7


def test_only_two_hop_parallel_cases_qualify() -> None:
    cases = evaluation_cases(builtin_cases())
    variants = position_variants(cases)
    two_hop = [c for c in cases if c.setting == "parallel" and c.hops == 2]
    assert len(variants) == 14 * len(two_hop) == 56
    three_hop = next(c for c in cases if c.hops == 3 and c.setting == "parallel")
    with pytest.raises(InputError, match="two-hop parallel"):
        arrangements(three_hop)
    shared = replace(
        two_hop[0],
        propositions=tuple(
            replace(p, paragraph=1) if p.id == "c2h1" else p for p in two_hop[0].propositions
        ),
    )
    with pytest.raises(InputError, match="four distinct paragraphs"):
        arrangements(shared)


def test_position_summary_table4(case: KeepCase) -> None:
    results = []
    for moved, a in position_variants([case]):
        # the later block's first proposition is lost except in adjacent arrangements
        later_first = moved.chains[a.order[1] - 1][0]
        lost = a.distance != "adjacent"
        verdicts = {p.id: not (lost and p.id == later_first) for p in moved.propositions}
        results.append((moved, a, verdicts))
    table = position_summary(results)
    assert list(table) == ["adjacent", "middle", "distant"]
    adj, mid, dist = table["adjacent"], table["middle"], table["distant"]
    assert (adj["n"], mid["n"], dist["n"]) == (6, 6, 2)
    assert (adj["para_rec"], adj["all_rec"], adj["earlier_rec"], adj["later_rec"]) == (
        100,
        100,
        100,
        100,
    )
    assert (mid["para_rec"], mid["all_rec"], mid["earlier_rec"], mid["later_rec"]) == (0, 0, 100, 0)
    assert (mid["delta"], mid["para_rec_change"], mid["all_rec_change"]) == (100, -100, -100)
    assert (adj["para_rec_change"], dist["all_rec_change"]) == (0, -100)
