"""KEEP-Bench metrics: All-Rec / Para-Rec / Cond-Rec rules, the case-weighted overall of
Table 3, Rate as a ratio of averages (o200k), and the §5.4 error analysis."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compressbench.errors import InputError
from compressbench.keepbench.cases import KeepCase
from compressbench.keepbench.loader import builtin_cases, evaluation_cases
from compressbench.keepbench.metrics import (
    CaseScore,
    compression_rate,
    failure_scope,
    group_retention,
    metrics_by_subset,
    overall_all_rec,
    percent,
    preserved,
    score_case,
)
from compressbench.keepbench.rate import count_tokens, rate_by_subset
from compressbench.keepbench.subsets import SUBSETS

PUBLISHED_COUNTS = {s.name: s.published_cases for s in SUBSETS}


def weighted_overall(values: dict[str, float], counts: dict[str, int]) -> float:
    """Case-weighted mean of per-subset All-Rec values: Table 3's overall A from its columns
    (what :func:`overall_all_rec`, the mean over all cases, equals)."""
    return sum(values[s] * counts[s] for s in values) / sum(counts[s] for s in values)


@pytest.fixture(scope="module")
def cases() -> dict[str, KeepCase]:
    return {c.case_id: c for c in evaluation_cases(builtin_cases())}


def _all(case: KeepCase, value: Any = True, **overrides: Any) -> dict[str, Any]:
    return {p.id: overrides.get(p.id, value) for p in case.propositions}


def test_all_rec_needs_every_proposition(cases: dict[str, KeepCase]) -> None:
    case = cases["sample:parallel:04"]  # 3 hops, 6 propositions
    assert score_case(case, _all(case)).all_rec is True
    one_chain = score_case(case, _all(case, c2h3=False))
    assert one_chain.all_rec is False and one_chain.n_missing == 1
    # a complete chain and nothing from the other is not enough (App. B)
    half = score_case(case, _all(case, c2h1=False, c2h2=False, c2h3=False))
    assert (half.all_rec, half.para_rec, half.groups_retained, half.n_groups) == (
        False,
        False,
        1,
        2,
    )


def test_para_rec_is_the_product_over_referent_pairs(cases: dict[str, KeepCase]) -> None:
    case = cases["sample:parallel:05"]  # two mentions: pairs (c1h1, c2h1), (c1h2, c2h2)
    assert score_case(case, _all(case)).para_rec is True
    assert score_case(case, _all(case, c2h2=False)).para_rec is False
    assert score_case(case, _all(case, c1h1="no")).para_rec is False
    one_pair = cases["sample:parallel:01"]  # pair (c1h1, c2h1) only
    s = score_case(one_pair, _all(one_pair, c1h2=False, c2h2=False))
    assert (s.para_rec, s.all_rec, s.cond_rec) == (True, False, None)


def test_cond_rec_is_the_condition_proposition(cases: dict[str, KeepCase]) -> None:
    case = cases["sample:conditional:01"]
    s = score_case(case, _all(case, cond=False))
    assert (s.cond_rec, s.all_rec, s.para_rec) == (False, False, None)
    s = score_case(case, _all(case, h2=False))
    assert (s.cond_rec, s.all_rec) == (True, False)


def test_labels_and_judge_errors(cases: dict[str, KeepCase]) -> None:
    assert [preserved(x) for x in (True, "yes", " No ", "error", None)] == [
        True,
        True,
        False,
        None,
        None,
    ]
    with pytest.raises(InputError, match="unknown verdict label 'maybe'"):
        preserved("maybe")
    case = cases["sample:science:02"]
    s = score_case(case, _all(case, dust=None))
    assert (s.all_rec, s.errors, s.n_missing) == (False, 1, 1)
    with pytest.raises(InputError, match="field 'proposition dust': no verdict"):
        score_case(case, {"air": True, "ocean": True})
    with pytest.raises(InputError, match=r"unknown propositions \['zz'\]"):
        score_case(case, {**_all(case), "zz": True})


def _verdicts(cases: dict[str, KeepCase], failing: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {cid: _all(c, **failing.get(cid, {})) for cid, c in cases.items()}


def test_metrics_by_subset_and_weighted_overall(cases: dict[str, KeepCase]) -> None:
    failing = {
        "sample:parallel:01": {"c1h2": False},  # para kept, all lost
        "sample:parallel:02": {"c2h1": False},  # both lost
        "sample:conditional:03": {"cond": False},
        "sample:science:01": {"mineral": "error"},
        "sample:policy:05": {"ostmark": False, "calvane": False},
    }
    verdicts = _verdicts(cases, failing)
    scores = [score_case(c, verdicts[c.case_id]) for c in cases.values()]
    table = metrics_by_subset(scores)
    assert list(table) == ["parallel", "conditional", "science", "policy"]
    par, cond, sci, pol = table.values()
    assert (par.n, par.all_rec, par.para_rec, par.cond_rec) == (5, 60.0, 80.0, None)
    assert (cond.all_rec, cond.cond_rec, cond.para_rec) == (80.0, 80.0, None)
    assert (sci.all_rec, sci.errors, sci.excluded, sci.para_rec) == (80.0, 1, 0, None)
    assert pol.all_rec == 80.0
    assert overall_all_rec(scores) == pytest.approx(100 * 15 / 20)
    counts = {k: v.n for k, v in table.items()}
    values = {k: v.all_rec for k, v in table.items() if v.all_rec is not None}
    assert weighted_overall(values, counts) == pytest.approx(overall_all_rec(scores))
    # errors="exclude" drops the case with a judge error everywhere
    excl = metrics_by_subset(scores, errors="exclude")["science"]
    assert (excl.n, excl.all_rec, excl.excluded) == (4, 100.0, 1)
    assert overall_all_rec(scores, errors="exclude") == pytest.approx(100 * 15 / 19)
    pooled = [s for s in scores if s.subset in ("science", "policy")]  # Table 10's pooling
    assert overall_all_rec(pooled) == 80.0
    with pytest.raises(InputError, match="allowed: no, exclude"):
        overall_all_rec(scores, errors="skip")


# Table 3 (per-subset All-Rec: parallel, conditional, science, policy) and the printed overall
# A (derived in the research notes, §5, as the case-weighted mean over 4,102 cases).
TABLE3 = {
    "RECOMP (abstractive)": ((0.0, 1.4, 0.2, 0.0), 0.51),
    "BRIEF-Pro": ((0.0, 19.9, 0.4, 0.0), 6.72),
    "RECOMP (extractive)": ((1.4, 2.5, 11.4, 4.0), 4.75),
    "EXIT": ((3.0, 4.5, 10.5, 7.6), 6.27),
    "Llama-3.2-1B-Instruct": ((0.0, 0.1, 0.2, 1.1), 0.30),
    "Llama-3.2-3B-Instruct": ((2.8, 6.7, 1.5, 8.6), 4.95),
    "Llama-3.1-8B-Instruct": ((13.0, 23.5, 4.1, 34.5), 18.64),
    "Qwen3-4B": ((14.4, 26.6, 14.4, 21.0), 19.79),
    "Qwen3-8B": ((23.8, 29.3, 15.2, 29.8), 24.72),
    "Qwen3-14B": ((33.0, 43.1, 23.2, 32.4), 33.82),
    "Qwen3-32B": ((42.1, 44.6, 31.3, 40.5), 39.95),
    "Gemma-4-E2B-it": ((2.3, 8.3, 5.9, 4.1), 5.54),
    "Gemma-4-E4B-it": ((24.6, 27.9, 22.1, 24.4), 25.04),
    "Gemma-4-12B-it": ((43.9, 54.5, 63.2, 52.1), 53.83),
    "Gemma-4-31B-it": ((57.6, 71.2, 69.9, 65.8), 66.81),
    "GPT-5.4-mini": ((31.9, 37.0, 60.3, 22.6), 38.71),
    "Claude-Haiku-4.5": ((63.8, 70.0, 45.5, 65.0), 61.60),
}


@pytest.mark.parametrize("method", sorted(TABLE3))
def test_table3_overall_all_rec_is_weighted_by_cases(method: str) -> None:
    columns, overall = TABLE3[method]
    values = dict(zip(SUBSET_ORDER, columns, strict=True))
    assert weighted_overall(values, PUBLISHED_COUNTS) == pytest.approx(overall, abs=0.005)


SUBSET_ORDER = ("parallel", "conditional", "science", "policy")


def _row_values(method: str) -> dict[str, float]:
    return dict(zip(SUBSET_ORDER, TABLE3[method][0], strict=True))


def test_gemma_31b_overall_is_66_8_and_not_the_unweighted_mean() -> None:
    values = _row_values("Gemma-4-31B-it")
    assert round(weighted_overall(values, PUBLISHED_COUNTS), 1) == 66.8
    assert round(sum(values.values()) / 4, 1) == 66.1  # the unweighted mean would print 66.1
    assert round(weighted_overall(_row_values("Claude-Haiku-4.5"), PUBLISHED_COUNTS), 1) == 61.6


def test_rate_is_a_ratio_of_averages() -> None:
    # sources 100 and 10 tokens, compressions 10 and 5: 110/15, not mean(10, 2) = 6
    assert compression_rate([100, 10], [10, 5]) == pytest.approx(110 / 15)
    assert compression_rate([100, 10], [0, 0]) == math.inf
    with pytest.raises(ValueError):
        compression_rate([1], [1, 2])


def test_rate_counts_o200k_tokens_offline(cases: dict[str, KeepCase]) -> None:
    # o200k_base ids are fixed: these counts are the encoding's, not an approximation
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0
    assert count_tokens("<|endoftext|>") > 1  # special tokens are plain text here
    chosen = [cases["sample:parallel:01"], cases["sample:parallel:02"], cases["sample:science:01"]]
    comps = {c.case_id: c.propositions[0].text for c in chosen}
    rates = rate_by_subset(chosen, comps)
    src = sum(count_tokens(c.context) for c in chosen[:2])
    comp = sum(count_tokens(comps[c.case_id]) for c in chosen[:2])
    assert rates["parallel"] == pytest.approx(src / comp)
    assert rates["science"] > 10
    with pytest.raises(InputError, match="no compression"):
        rate_by_subset(chosen, {})


def _score(cid: str, subset: str, missing: int, groups: int, retained: int) -> CaseScore:
    return CaseScore(cid, subset, missing == 0, None, None, 4, missing, groups, retained, 0)


def test_failure_scope_table5_buckets() -> None:
    scores = [
        _score("a", "parallel", 1, 2, 2),
        _score("b", "parallel", 2, 2, 1),
        _score("c", "science", 5, 4, 0),
        _score("d", "science", 4, 4, 0),
        _score("e", "policy", 0, 4, 4),  # preserved: not a failure
    ]
    assert failure_scope(scores) == {"1": 25.0, "2": 25.0, "3": 0.0, ">=4": 50.0}
    assert failure_scope([]) == {}


def test_group_retention() -> None:
    run_a = [
        _score("x", "parallel", 1, 2, 2),
        _score("y", "science", 2, 3, 1),
        _score("z", "policy", 0, 4, 4),
    ]
    run_b = [
        _score("x", "parallel", 2, 2, 1),
        _score("y", "science", 0, 3, 3),
        _score("z", "policy", 4, 4, 0),
    ]
    both = [*run_a, *run_b, _score("c", "conditional", 1, 1, 1)]  # single-group cases skipped
    assert group_retention(both) == {"none": 1, "single": 2, "multi": 1}


def test_error_analysis_shares_of_the_paper() -> None:
    # §5.4: 991 shared Gemma-4 failures = 290 + 302 + 399; of 2,540 shared EXIT/BRIEF-Pro
    # failures EXIT keeps several groups in 1,782 (70.2%), BRIEF-Pro one group in 1,581 (62.2%)
    assert 290 + 302 + 399 == 991
    assert round(percent(1782, 2540), 1) == 70.2
    assert round(percent(1581, 2540), 1) == 62.2
    with pytest.raises(ValueError):
        percent(1, 0)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_overall_equals_case_weighted_subsets_and_all_rec_implies_the_rest(data: Any) -> None:
    sample = evaluation_cases(builtin_cases())
    verdicts = {
        c.case_id: {
            p.id: data.draw(st.sampled_from([True, True, True, False, "error"]))
            for p in c.propositions
        }
        for c in sample
    }
    scores = [score_case(c, verdicts[c.case_id]) for c in sample]
    for s in scores:
        if s.all_rec:
            assert s.para_rec in (None, True) and s.cond_rec in (None, True)
            assert s.n_missing == 0 and s.groups_retained == s.n_groups
    for policy in ("no", "exclude"):
        table = metrics_by_subset(scores, errors=policy)
        values = {k: v.all_rec for k, v in table.items() if v.all_rec is not None}
        counts = {k: v.n for k, v in table.items()}
        overall = overall_all_rec(scores, errors=policy)
        if values:
            assert overall == pytest.approx(weighted_overall(values, counts))
        else:
            assert overall is None
