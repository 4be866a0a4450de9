"""The report's analysis functions on hand-made rows with hand-computed results: what the reader
answers, retention versus reading, the paired P3 gap, ranks, Spearman and crossovers."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from compressbench.analysis import stats
from compressbench.tpbench.probe_types.p2 import P2
from compressbench.tpbench.probe_types.p3 import P3, p3_superseded
from compressbench.tpbench.probe_types.spec import KindRule
from compressbench.tpbench.report.answer_kinds import KINDS, answer_kind, kind_counts
from compressbench.tpbench.report.findings import (
    crossovers,
    gaps_to_reference,
    paired_gap,
    rank_correlation,
    rank_table,
    ranks,
)
from compressbench.tpbench.report.retention_reading import (
    by_group,
    by_seed,
    examples,
    reading,
    seed_mean,
)
from compressbench.tpbench.scoring.answers import score_answer
from compressbench.tpbench.scoring.p2 import score_p2
from compressbench.tpbench.slot_types import slot_type

assert isinstance(P2.kind_rule, KindRule)
P2_RULE: KindRule = P2.kind_rule  # P2's answer kinds: strict, superseded by P2-strict's rule


def p2(output: str, *, gold: str = "7 pm", old: str = "5 pm", error: str | None = None) -> dict:
    """A scored P2 row, scored by the project's scorer."""
    row: dict[str, Any] = {
        "probe_type": "P2",
        "dataset": "sgd",
        "gold": gold,
        "old_value": old,
        "new_value": gold,
        "output": output,
        "error": error,
    }
    return {**row, **score_answer(row)}


# --- what the reader answers -----------------------------------------------------------------

CASES = [
    (p2('{"value": "19:00", "abstain": false}'), "correct"),  # normalised: 7 pm == 19:00
    (p2('{"value": "5 PM.", "abstain": false}'), "superseded"),  # normalised old value
    (p2('{"value": "unknown", "abstain": true}'), "abstain"),
    (p2('{"value": "5 pm", "abstain": true}'), "abstain"),  # abstaining never names a value
    (p2("I think it is 7 pm"), "format_error"),  # no JSON object
    (p2("I think it is 7 pm", error="no-json"), "format_error"),  # as the readers mark it
    (p2("", error="timeout"), "reader_error"),
    (p2('{"value": "6 pm", "abstain": false}'), "other"),
    (p2('{"value": "5 pm tomorrow", "abstain": false}'), "other"),  # strict: equality only
]


@pytest.mark.parametrize(("row", "kind"), CASES)
def test_each_answer_has_one_kind(row: dict, kind: str) -> None:
    assert answer_kind(row, P2_RULE) == kind


def test_kind_counts_sum_to_n_and_keep_zeros() -> None:
    counts = kind_counts([row for row, _ in CASES], P2_RULE)
    assert counts.n == len(CASES) == sum(counts.counts.values())
    assert list(counts.counts) == list(KINDS)
    assert counts.counts == {
        "correct": 1,
        "superseded": 1,
        "abstain": 2,
        "format_error": 2,
        "reader_error": 1,
        "other": 2,
    }
    assert counts.rate("abstain") == 2 / 9
    empty = kind_counts([], P2_RULE)
    assert empty.n == 0 and set(empty.counts.values()) == {0} and empty.rate("other") is None


@pytest.mark.parametrize(
    "value", ["5 pm", "17:00", "5:00 PM", "5 p.m.", "1700", "five", "", "5 pm!", "05:00 pm"]
)
def test_superseded_is_p2_strict_against_the_old_value(value: str) -> None:
    """The analysis rule agrees with the P2 scorer run with the old value as the gold."""
    row = p2(f'{{"value": "{value}", "abstain": false}}')
    scored_as_gold = score_p2(row["prediction"], "5 pm", "sgd", abstain=bool(row["abstain"]))
    assert (answer_kind(row, P2_RULE) == "superseded") == bool(scored_as_gold.strict)


def test_p3_superseded_reads_the_value_segment() -> None:
    def p3(value: str) -> dict:
        row = {
            "probe_type": "P3",
            "dataset": "sgd",
            "gold_story_label": "book a table",
            "gold_value": "7 pm",
            "old_value": "5 pm",
            "output": value,
        }
        return {**row, **score_answer(row)}

    rule = P3.kind_rule
    assert rule is not None
    assert answer_kind(p3('{"value": "book a table; time: 7 pm"}'), rule) == "correct"
    assert answer_kind(p3('{"value": "book a table; time: 5 pm"}'), rule) == "superseded"
    # the old value outside the value segment is not a superseded answer
    assert not p3_superseded(p3('{"value": "book at 5 pm; time: 6 pm"}'))
    assert answer_kind(p3('{"value": "x", "abstain": true}'), rule) == "abstain"


# --- retention versus reading ----------------------------------------------------------------


def _ctx(pid: str, seed: int, text: str) -> dict:
    return {"probe_type": "P2", "seed": seed, "probe_id": pid, "compressed_text_used": text}


def _ans(pid: str, seed: int, gold: str, slot: str, strict: int, **extra: Any) -> dict:
    return {
        "probe_type": "P2",
        "seed": seed,
        "probe_id": pid,
        "dialogue_id": pid[:2],
        "dataset": "sgd",
        "gold": gold,
        "slot": slot,
        "scores": {"strict": strict},
        **extra,
    }


def test_retention_vs_reading_counts_by_hand() -> None:
    contexts = [
        _ctx("d1:a", 42, "USER: dinner at 7 PM please"),  # kept (normalised 19:00)
        _ctx("d1:b", 42, "USER: Paris or Parisville"),  # "paris" kept at a phrase boundary
        _ctx("d2:a", 42, "USER: somewhere in Londonderry"),  # "london" not a phrase: lost
        _ctx("d3:a", 43, "SYSTEM: the 3rd of May"),  # lost
        _ctx("d4:a", 43, "full text"),  # a KV press: the kept tokens decide
        _ctx("d5:a", 43, "full text"),  # a KV press without a record: unknown
    ]
    scored = [
        _ans("d1:a", 42, "19:00", "time", 1),
        _ans("d1:b", 42, "Paris", "city", 0),
        _ans("d2:a", 42, "London", "city", 1),
        _ans("d3:a", 43, "May 4th", "date", 0),
        _ans(
            "d4:a",
            43,
            "4",
            "number_of_seats",
            1,
            kv={"preset": "snapkv"},
            kv_record={"kept_token_text": "for 4 people"},
        ),
        _ans("d5:a", 43, "4", "number_of_seats", 0, kv={"preset": "snapkv"}, kv_record=None),
        {"probe_type": "P1", "seed": 42, "probe_id": "d1:a"},  # other probes are not examples
    ]
    items = examples(contexts, scored)
    assert [e.retained for e in items] == [True, True, False, False, True, None]
    r = reading(items)
    assert (r.n, r.n_unknown, r.n_retained, r.n_lost) == (6, 1, 3, 2)
    assert (r.correct, r.correct_retained, r.correct_lost) == (3, 2, 1)
    assert r.retention == 3 / 5 and r.accuracy == 3 / 6
    assert r.accuracy_retained == 2 / 3 and r.accuracy_lost == 1 / 2
    seeds = by_seed(items)
    assert seeds[42].retention == 2 / 3 and seeds[43].retention == 1 / 2
    assert seed_mean(list(seeds.values()), "retention") == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert seeds[42].accuracy_lost == 1.0 and seeds[43].accuracy_lost == 0.0
    groups = by_group(items, slot_type)
    assert {g: len(v) for g, v in groups.items()} == {
        "date": 1,
        "other": 2,
        "place/name": 2,
        "time": 1,
    }
    assert reading(groups["place/name"]).retention == 1 / 2


def test_an_answer_without_its_context_is_named() -> None:
    with pytest.raises(ValueError, match=r"P2\|42\|d9:a"):
        examples([], [_ans("d9:a", 42, "x", "time", 0)])


# --- P3 gap, ranks, Spearman, crossovers -----------------------------------------------------


def _p3(method_scores: list[int], pids: list[str], seed: int = 42) -> list[dict]:
    return [
        {
            "probe_type": "P3",
            "seed": seed,
            "probe_id": p,
            "dialogue_id": p.split(":")[0],
            "scores": {"strict": s, "loose": s},
        }
        for p, s in zip(pids, method_scores, strict=True)
    ]


def test_gap_interval_is_the_paired_cluster_bootstrap() -> None:
    pids = ["d1:a", "d1:b", "d2:a", "d3:a", "d3:b", "d4:a"]
    full = _p3([1, 1, 1, 0, 1, 1], pids) + _p3([1], ["d5:a"])  # d5 has no partner
    method = _p3([0, 1, 0, 0, 0, 1], pids)
    gap = paired_gap(full, method, method_name="recency", metric="strict", resamples=2000, seed=7)
    assert gap is not None
    expected = stats.paired_cluster_bootstrap(
        [0, 1, 0, 0, 0, 1],
        [1, 1, 1, 0, 1, 1],
        ["d1", "d1", "d2", "d3", "d3", "d4"],
        resamples=2000,
        seed=7,
    )
    assert (gap.gap, gap.low, gap.high) == (expected.estimate, expected.low, expected.high)
    assert gap.gap == pytest.approx(5 / 6 - 2 / 6)
    assert (gap.n_pairs, gap.n_clusters, gap.n_unpaired) == (6, 4, 1)
    assert gap.reference == pytest.approx(5 / 6) and gap.score == pytest.approx(2 / 6)
    both = gaps_to_reference({"full_context": full, "recency": method}, resamples=200)
    assert [(g.method, g.metric) for g in both] == [("recency", "strict"), ("recency", "loose")]
    assert gaps_to_reference({"recency": method}) == []


def test_ranks_average_ties_and_rank_table() -> None:
    assert ranks({"a": 0.5, "b": 0.9, "c": 0.5, "d": 0.1}) == {
        "a": 2.5,
        "b": 1.0,
        "c": 2.5,
        "d": 4.0,
    }
    table = rank_table({"a": {"x": 1.0, "y": 0.0}, "b": {"x": 0.0, "y": 1.0}}, ["x", "y"])
    assert table == {"a": [1.0, 2.0], "b": [2.0, 1.0]}


# Published seed means (spec §8 H1): P1-strict and P2-strict of the seven selectors.
SGD_P1 = {
    "recency": 0.010,
    "random": 0.145,
    "first_n": 0.480,
    "uniform": 0.493,
    "h2o": 0.493,
    "mmr": 0.178,
    "lingua": 0.193,
}
SGD_P2 = {
    "recency": 0.254,
    "random": 0.278,
    "first_n": 0.156,
    "uniform": 0.283,
    "h2o": 0.114,
    "mmr": 0.309,
    "lingua": 0.164,
}


def test_spearman_and_crossover_reproduce_the_paper() -> None:
    rho = rank_correlation(SGD_P1, SGD_P2)
    assert rho is not None and round(rho, 2) == -0.34
    cross = {(c.a, c.b): c.alpha for c in crossovers(SGD_P1, SGD_P2)}
    assert round(cross[("first_n", "mmr")], 3) == 0.336
    assert ("recency", "random") not in cross  # random leads on both probes: never crosses
    assert rank_correlation({"a": 1.0, "b": 0.0}, {"a": 0.0, "b": 1.0}) is None
    constant = rank_correlation(dict.fromkeys(SGD_P2, 0.0), SGD_P2)
    assert constant is not None and math.isnan(constant)


def test_the_gap_never_uses_the_global_generator() -> None:
    np.random.seed(1)
    pids = ["d1:a", "d2:a", "d3:a"]
    a = paired_gap(_p3([1, 1, 0], pids), _p3([0, 1, 0], pids), method_name="m", metric="strict")
    np.random.seed(2)
    b = paired_gap(_p3([1, 1, 0], pids), _p3([0, 1, 0], pids), method_name="m", metric="strict")
    assert a == b
