"""The KEEP-Bench case model: budgets (paper C.2), structure checks, JSON form, built-in sample."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from compressbench.errors import InputError
from compressbench.keepbench.cases import (
    BUDGET_SCALES,
    budget_for,
    case_from_dict,
    case_to_dict,
    sentence_budget,
)
from compressbench.keepbench.loader import builtin_cases, demonstration_cases, evaluation_cases
from compressbench.keepbench.sentences import count_sentences, split_sentences
from compressbench.keepbench.subsets import SUBSET_NAMES


@pytest.mark.parametrize(
    ("setting", "count", "scale", "k"),
    [
        # default K = 2h (parallel, conditional), 2n+1 (imbalanced)
        ("parallel", 2, 1.0, 4),  # the two-hop case study allows 4 sentences
        ("parallel", 3, 1.0, 6),
        ("conditional", 4, 1.0, 8),
        ("imbalanced", 4, 1.0, 9),
        ("imbalanced", 3, 1.0, 7),
        # 0.5x / 2x scale the hop or perspective term: h or 4h, n+1 or 4n+1
        ("parallel", 2, 0.5, 2),
        ("conditional", 3, 0.5, 3),
        ("parallel", 4, 2.0, 16),
        ("imbalanced", 4, 0.5, 5),
        ("imbalanced", 3, 2.0, 13),
        # not a published scale: the term rounds up (documented choice)
        ("parallel", 3, 0.25, 2),
        ("imbalanced", 3, 0.1, 2),
    ],
)
def test_sentence_budget_rule(setting: str, count: int, scale: float, k: int) -> None:
    assert budget_for(setting, count, scale) == k


def test_published_scales() -> None:
    assert BUDGET_SCALES == (0.5, 1.0, 2.0)


@pytest.mark.parametrize("scale", [0, -1, "1", True])
def test_bad_budget_scale_is_input_error(scale: Any) -> None:
    with pytest.raises(InputError, match="budget scale"):
        budget_for("parallel", 2, scale)


def test_unknown_setting_budget() -> None:
    with pytest.raises(InputError, match="allowed: parallel, conditional, imbalanced"):
        budget_for("ambiguous", 2)


def test_every_builtin_case_round_trips_through_json() -> None:
    for case in builtin_cases():
        row = json.loads(json.dumps(case_to_dict(case)))
        assert case_from_dict(row) == case


def _row(case_id: str) -> dict[str, Any]:
    case = next(c for c in builtin_cases() if c.case_id == case_id)
    return json.loads(json.dumps(case_to_dict(case)))


def _set(row: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    obj: Any = row
    for p in parents:
        obj = obj[int(p)] if p.isdigit() else obj[p]
    if value is _DELETE:
        del obj[last]
    elif last.isdigit():
        obj[int(last)] = value
    else:
        obj[last] = value


_DELETE = object()
P1, C1, S1, PO1 = (
    "sample:parallel:01",
    "sample:conditional:01",
    "sample:science:01",
    "sample:policy:01",
)


@pytest.mark.parametrize(
    ("case_id", "path", "value", "field", "message"),
    [
        (P1, "setting", "ambiguous", "setting", "allowed: parallel, conditional, imbalanced"),
        (P1, "domain", "science", "domain", "allowed: musique"),
        (S1, "domain", "musique", "domain", "allowed: science, policy"),
        (P1, "query", _DELETE, "query", "missing required field"),
        (P1, "query", "  ", "query", "empty query"),
        (P1, "paragraphs", "one text", "paragraphs", "expected list"),
        (P1, "hops", True, "hops", "expected int"),
        (P1, "hops", 3, "propositions", "expected 2h = 6"),
        (P1, "propositions.0.role", "dominant", "propositions[0].role", "allowed: evidence"),
        (P1, "propositions.1.id", "c1h1", "propositions", "duplicate proposition ids"),
        (P1, "propositions.0.paragraph", 99, "propositions[0].paragraph", "out of range"),
        (P1, "propositions.2.text", 7, "propositions[2].text", "expected str"),
        (P1, "chains.1", ["c2h1"], "chains", "two chains of 2"),
        (P1, "referent_pairs", [], "referent_pairs", "at least one referent pair"),
        (P1, "referent_pairs.0", ["c2h1", "c1h1"], "referent_pairs[0]", "chain 1 then"),
        (P1, "referent_pairs.0", ["c1h1"], "referent_pairs[0]", "expected 2 proposition ids"),
        (P1, "answers", ["Calvask"], "answers", "2 answers"),
        (C1, "condition", None, "condition", "need a condition"),
        (C1, "condition.proposition_id", "h2", "condition.proposition_id", "role 'condition'"),
        (C1, "condition.proposition_id", "nope", "condition.proposition_id", "no proposition"),
        (C1, "condition.conditioned_hop_id", "cond", "condition.conditioned_hop_id", "no hop"),
        (C1, "propositions.2.role", "evidence", "condition.proposition_id", "role 'condition'"),
        (S1, "perspectives", 3, "propositions", "expected n = 3"),
        (S1, "propositions.1.group", "bio", "propositions", "own group id"),
        (S1, "propositions.0.role", "evidence", "propositions[0].role", "dominant, minority"),
        (PO1, "propositions.3.jurisdiction", "", "propositions[3].jurisdiction", "jurisdiction"),
    ],
)
def test_structure_errors_name_case_and_field(
    case_id: str, path: str, value: Any, field: str, message: str
) -> None:
    row = _row(case_id)
    _set(row, path, value)
    with pytest.raises(InputError, match=re.escape(message)) as err:
        case_from_dict(row, file="cases.json")
    assert err.value.file == "cases.json"
    assert err.value.record == case_id
    assert err.value.field == field
    assert str(err.value).startswith(f"file cases.json, record {case_id}, field '{field}'")


def test_case_helpers() -> None:
    case = next(c for c in builtin_cases() if c.case_id == P1)
    assert case.subset == "parallel" and sentence_budget(case) == 4
    assert case.groups == ("chain1", "chain2")
    assert case.proposition("c2h2").text == "Tamsin Roe was born in Medrith."
    assert case.context.count("\n\n") == len(case.paragraphs) - 1
    with pytest.raises(KeyError):
        case.proposition("zz")
    policy = next(c for c in builtin_cases() if c.case_id == PO1)
    assert policy.subset == "policy" and sentence_budget(policy) == 9
    assert sentence_budget(policy, 0.5) == 5 and sentence_budget(policy, 2) == 17


# ---- the built-in sample -------------------------------------------------------------------

_STOPWORDS = "a an the of in on at to is was were be by and or for its it as that this with"
_STOP = frozenset(_STOPWORDS.split())


def _tokens(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP}


def _coverage(prop: str, text: str) -> float:
    want = _tokens(prop)
    return len(want & _tokens(text)) / len(want)


def test_sample_has_five_cases_per_subset_and_marked_demonstrations() -> None:
    cases = builtin_cases()
    evaluated = evaluation_cases(cases)
    for subset in SUBSET_NAMES:
        assert sum(c.subset == subset for c in evaluated) >= 5, subset
        demos = demonstration_cases(cases, subset)
        assert len(demos) == 1, subset
        assert all(c.case_id.startswith("sample-demo:") for c in demos)
    assert {c.hops for c in evaluated if c.setting == "parallel"} >= {2, 3}
    assert {c.perspectives for c in evaluated if c.subset == "science"} == {3, 4}
    assert any(len(c.referent_pairs) == 2 for c in evaluated)  # two underspecified mentions


def test_demonstration_answers_follow_their_own_budget_and_cover_the_evidence() -> None:
    for demo in demonstration_cases(builtin_cases()):
        n = count_sentences(demo.reference_compression)
        assert 1 <= n <= sentence_budget(demo), demo.case_id
        for p in demo.propositions:
            assert _coverage(p.text, demo.reference_compression) >= 0.75, (demo.case_id, p.id)


def test_every_proposition_is_stated_in_the_context() -> None:
    for case in builtin_cases():
        for p in case.propositions:
            assert _coverage(p.text, case.context) >= 0.85, (case.case_id, p.id)
            if case.setting != "imbalanced":
                assert p.paragraph is not None
                assert _coverage(p.text, case.paragraphs[p.paragraph]) >= 0.85, p.id


def test_contexts_have_distractors_so_compression_matters() -> None:
    for case in evaluation_cases(builtin_cases()):
        assert len(split_sentences(case.context)) > 2 * sentence_budget(case), case.case_id
        if case.setting != "imbalanced":
            used = {p.paragraph for p in case.propositions}
            if case.condition is not None:
                used.add(case.condition.disambiguating_paragraph)
            assert len(case.paragraphs) - len(used) >= 2, case.case_id


def test_minority_perspectives_are_one_sentence_and_conditions_are_disambiguated() -> None:
    for case in evaluation_cases(builtin_cases()):
        if case.setting == "conditional":
            cond = case.condition
            assert cond is not None and cond.disambiguating_paragraph is not None
            assert cond.key.lower() in case.query.lower()
            assert (
                _coverage(cond.disambiguation, case.paragraphs[cond.disambiguating_paragraph])
                >= 0.8
            )
        for p in case.propositions:
            if p.role == "minority":
                hits = [s for s in split_sentences(case.context) if _coverage(p.text, s) >= 0.85]
                assert len(hits) == 1, (case.case_id, p.id)
                if case.domain == "policy":
                    assert p.jurisdiction in hits[0]


def test_mutating_a_copy_does_not_touch_the_sample() -> None:
    row = _row(P1)
    before = copy.deepcopy(row)
    _set(row, "query", "changed")
    assert _row(P1) == before
