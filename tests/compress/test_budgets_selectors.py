"""Budgets (spec §3.10) and positional selectors (§3.11), pinned to the spec's check values."""

from __future__ import annotations

import pytest

from compressbench.compress.budgets import budget_k, floor_budget, round_budget
from compressbench.compress.selectors import SELECTORS, get_selector
from compressbench.compress.selectors.positional import (
    POSITIONAL_SELECTORS,
    random_seed_for,
    uniform_stride_indices,
)
from compressbench.corpora.model import SYSTEM, USER, Turn


def turns(n: int) -> list[Turn]:
    return [Turn(i, (USER, SYSTEM)[i % 2], f"t{i}") for i in range(n)]


@pytest.mark.parametrize(
    ("n", "r", "k"),
    [
        (15, 0.3, 4),
        (25, 0.3, 8),
        (5, 0.1, 1),
        (30, 0.3, 9),
        (24, 0.3, 7),
        (8, 0.3, 2),
        (534, 0.3, 160),
        (540, 0.3, 162),
        (530, 0.3, 159),
        (563, 0.3, 169),
        (0, 0.3, 1),
    ],
)
def test_round_budget_bankers_rounding(n: int, r: float, k: int) -> None:
    assert round_budget(n, r) == k
    assert budget_k(n, r, "round") == k


@pytest.mark.parametrize(
    ("n", "round_k", "floor_k"), [(32, 10, 9), (22, 7, 6), (16, 5, 4), (12, 4, 3), (28, 8, 8)]
)
def test_floor_vs_round_published_k_turns(n: int, round_k: int, floor_k: int) -> None:
    assert budget_k(n, 0.3, "round") == round_k
    assert budget_k(n, 0.3, "floor") == floor_k == floor_budget(n, 0.3)


def test_floor_budget_minimum_one() -> None:
    assert floor_budget(3, 0.1) == 1


def test_unknown_budget_rule() -> None:
    with pytest.raises(KeyError, match="unknown budget rule"):
        budget_k(10, 0.3, "ceil")


@pytest.mark.parametrize(
    ("probe_id", "n", "k", "expected"),
    [
        ("v20_sgd_66_00065__qa_02", 30, 9, [0, 1, 3, 5, 10, 16, 18, 21, 25]),
        ("v20_multiwoz_MUL0084.json__qa_00", 30, 9, [0, 1, 10, 11, 14, 15, 18, 21, 24]),
        ("v20_sgd_100_00083__qa_00", 24, 7, [2, 3, 12, 14, 15, 18, 19]),
    ],
)
def test_random_seed42_check_values(probe_id: str, n: int, k: int, expected: list[int]) -> None:
    assert get_selector("random_seed42").select(turns(n), k, probe_id) == expected


def test_random_selector_seed_is_a_parameter() -> None:
    pid = "v20_sgd_66_00065__qa_02"
    assert (
        random_seed_for(42, pid)
        == int(__import__("hashlib").sha256(b"42|" + pid.encode()).hexdigest()[:16], 16) % 2**32
    )
    s43 = get_selector("random_seed43")
    assert s43.name == "random_seed43"
    assert get_selector("random", seed=43).select(turns(30), 9, pid) == s43.select(
        turns(30), 9, pid
    )
    assert s43.select(turns(30), 9, pid) != get_selector("random_seed42").select(turns(30), 9, pid)
    for seed in range(42, 47):
        assert f"random_seed{seed}" in SELECTORS


@pytest.mark.parametrize(
    ("n", "k", "expected"),
    [
        (30, 9, [0, 3, 7, 10, 13, 17, 20, 23, 27]),
        (24, 7, [0, 3, 7, 10, 14, 17, 21]),
        (28, 8, [0, 4, 7, 10, 14, 18, 21, 24]),
        (5, 9, [0, 1, 2, 3, 4]),
        (0, 3, []),
        (5, 0, []),
    ],
)
def test_uniform_stride_check_values(n: int, k: int, expected: list[int]) -> None:
    assert uniform_stride_indices(n, k) == expected
    assert get_selector("uniform_stride").select(turns(n), k, "x") == expected


def test_recency_first_n_full_context() -> None:
    ts = turns(30)
    assert get_selector("recency").select(ts, 9, "x") == list(range(21, 30))
    assert get_selector("first_n").select(ts, 9, "x") == list(range(9))
    assert get_selector("full_context").select(ts, 9, "x") == list(range(30))
    assert get_selector("recency").select(turns(3), 9, "x") == [0, 1, 2]
    assert get_selector("first_n").select(turns(3), 9, "x") == [0, 1, 2]


def test_first_user_recent() -> None:
    sel = get_selector("first_user_recent")
    assert sel.select(turns(30), 9, "x") == [0, *range(22, 30)]
    assert sel.select(turns(30), 1, "x") == [0]
    assert sel.select(turns(3), 9, "x") == [0, 1, 2]


def test_unknown_selector() -> None:
    with pytest.raises(KeyError, match="unknown turn selector"):
        get_selector("no_such_selector")


def test_positional_names_are_registered() -> None:
    assert set(POSITIONAL_SELECTORS) <= set(SELECTORS)


# One parametrized check that every positional selector honours the protocol (content-aware
# selectors load models and are checked by their own tests).
@pytest.mark.parametrize("name", POSITIONAL_SELECTORS)
@pytest.mark.parametrize(("n", "k"), [(1, 1), (8, 2), (24, 7), (30, 9), (31, 31)])
def test_every_positional_selector(name: str, n: int, k: int) -> None:
    sel = get_selector(name)
    assert sel.budget_rule == "round"
    assert sel.published_render == "markers"
    ts = turns(n)
    out = sel.select(ts, k, "probe:1:qa00")
    assert out == sorted(set(out))
    assert all(0 <= i < n for i in out)
    assert out, "a non-empty dialogue keeps at least one turn"
    if name != "full_context":
        assert len(out) <= k
    assert sel.select(ts, k, "probe:1:qa00") == out  # deterministic
