"""Property-based checks: parsers and scorers never raise and stay in range (spec §2)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from compressbench.text.normalize import normalize_value, phrase_occurs
from compressbench.text.tokens import lme_tokens, overlap_tokens, p1_tokens, zh_tokens
from compressbench.tpbench.probe_types import PROBE_TYPES
from compressbench.tpbench.scoring.lme import score_lme, score_lme_text
from compressbench.tpbench.scoring.p1 import score_p1, score_p1_text
from compressbench.tpbench.scoring.p2 import score_p2, score_p2_text
from compressbench.tpbench.scoring.p3 import P3Scores, score_p3, score_p3_text, split_answer
from compressbench.tpbench.scoring.parse import (
    ParsedAnswer,
    extract_flat_json,
    parse_first_user_recent,
    parse_lme,
    parse_p1,
    parse_p2,
    parse_p3,
)
from compressbench.tpbench.scoring.rescore import rescore_row
from compressbench.tpbench.scoring.zh import score_p1_zh

# Text that looks like reader output: JSON punctuation, times, CJK, am/pm, stray unicode.
FRAGMENTS = [
    "{", "}", "[", "]", '"', ":", ",", ";", " ", "\n", "value", "abstain", "support", "true",
    "false", "null", "12", "45", "pm", "a.m.", "#", "-", "/", "大众", "é", "İ", "ß", "\\",
    "\u00a0", "１２", "(or ", ")",
]  # fmt: skip
texts = st.one_of(
    st.text(),
    st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=30).map("".join),
)
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)
answer_objects = st.fixed_dictionaries(
    {}, optional={"value": json_values, "abstain": json_values, "support": json_values}
)
reader_texts = st.one_of(
    texts,
    st.builds(
        lambda pre, obj, post: pre + json.dumps(obj, ensure_ascii=False) + post,
        texts,
        answer_objects,
        texts,
    ),
)
any_input = st.one_of(reader_texts, json_values)
datasets = st.sampled_from(["sgd", "multiwoz", "mw_r30", "risawoz", "lme_ku", "", "MultiWOZ"])
p3_preds = st.one_of(
    texts,
    st.builds(lambda g, lab, v: f"{g}; {lab}: {v}", texts, texts, texts),
)

PARSERS = [parse_p1, parse_p2, parse_p3, parse_lme, parse_first_user_recent]


@settings(max_examples=300)
@given(any_input)
def test_parsers_never_raise(text: object) -> None:
    for parser in PARSERS:
        answer = parser(text)
        assert isinstance(answer, ParsedAnswer)
        assert isinstance(answer.abstain, bool) and isinstance(answer.format_error, bool)
    flat = extract_flat_json(text)
    assert flat.format_error is (flat.obj is None)


brace_free = st.text().map(lambda t: t.replace("{", "").replace("}", ""))
flat_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | brace_free,
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=6,
)
flat_objects = st.dictionaries(brace_free, flat_values, max_size=4)


@given(flat_objects, texts)
def test_parsers_recover_a_trailing_flat_object(obj: dict[str, Any], prefix: str) -> None:
    text = prefix + " " + json.dumps(obj, ensure_ascii=False)
    for parser in PARSERS:
        assert parser(text).obj == obj
    assert extract_flat_json(text).obj == obj


@given(json_values)
def test_tokenisers_never_raise(value: object) -> None:
    for tokenize in (p1_tokens, overlap_tokens, lme_tokens, zh_tokens):
        assert all(isinstance(t, str) and t for t in tokenize(value))
    assert isinstance(normalize_value(value, "multiwoz"), str)


def _binary(*values: int) -> bool:
    return all(v in (0, 1) and type(v) is int for v in values)


@settings(max_examples=300)
@given(json_values, json_values, datasets, st.booleans(), st.booleans())
def test_extracted_value_scorers_stay_in_range(
    pred: object, gold: object, dataset: str, abstain: bool, error: bool
) -> None:
    for s1 in (
        score_p1(pred, gold, abstain=abstain, error=error),
        score_p1_zh(pred, gold, abstain=abstain, error=error),
    ):
        assert _binary(s1.strict, s1.loose) and s1.strict <= s1.loose
        assert 0.0 <= s1.token_f1 <= 1.0
    s2 = score_p2(pred, gold, dataset, abstain=abstain, error=error)
    assert _binary(s2.strict, s2.loose, s2.overlap_strict, s2.overlap_loose)
    assert s2.strict <= s2.loose and s2.overlap_strict <= s2.overlap_loose
    s_lme = score_lme(pred, gold, abstain=abstain, error=error)
    assert _binary(s_lme.strict, s_lme.loose) and s_lme.strict <= s_lme.loose
    if abstain or error:
        assert s1.loose == s2.loose == s_lme.loose == 0


@settings(max_examples=200)
@given(reader_texts, texts, datasets)
def test_raw_text_scorers_stay_in_range(text: str, gold: str, dataset: str) -> None:
    s1 = score_p1_text(text, gold)
    assert _binary(s1.strict, s1.loose) and 0.0 <= s1.token_f1 <= 1.0
    s2 = score_p2_text(text, gold, dataset)
    assert _binary(s2.strict, s2.loose)
    s3 = score_p3_text(text, gold, gold)
    _check_p3(s3)
    s4 = score_lme_text(text, gold)
    assert _binary(s4.strict, s4.loose)


def _check_p3(s: P3Scores) -> None:
    ints = [v for k, v in vars(s).items() if k != "whole_token_f1"]
    assert _binary(*ints)
    assert 0.0 <= s.whole_token_f1 <= 1.0
    # joint = goal AND value; strict <= loose; whole-field >= segment-local
    assert s.strict == s.goal * s.value_strict and s.loose == s.goal * s.value_loose
    assert s.value_strict <= s.value_loose and s.whole_value_strict <= s.whole_value_loose
    assert s.goal <= s.whole_goal
    assert s.value_strict <= s.whole_value_strict and s.value_loose <= s.whole_value_loose
    assert s.strict <= s.whole_strict and s.loose <= s.whole_loose
    assert max(s.goal, s.value_strict, s.value_loose) <= s.parsed


@settings(max_examples=400)
@given(p3_preds, texts, texts, st.data())
def test_p3_whole_field_dominates_segment_local(
    pred: str, goal: str, value: str, data: st.DataObject
) -> None:
    _check_p3(score_p3(pred, goal, value))
    # gold drawn from the prediction itself, so that matches actually happen
    if pred:
        i = data.draw(st.integers(0, len(pred)))
        j = data.draw(st.integers(i, len(pred)))
        _check_p3(score_p3(pred, pred[:i], pred[i:j]))


@given(json_values, json_values)
def test_p3_accepts_any_json_value(pred: object, gold: object) -> None:
    _check_p3(score_p3(pred, gold, gold))


@given(texts)
def test_split_answer_segments_are_stripped_and_non_empty(pred: str) -> None:
    seg = split_answer(pred)
    if seg is not None:
        assert pred.count(";") == 1
        for part in (seg.goal, seg.label, seg.value):
            assert part and part == part.strip()
        assert ":" not in seg.label


@given(texts)
def test_phrase_occurs_reflexive_on_normalised_text(text: str) -> None:
    norm = normalize_value(text)
    assert phrase_occurs(norm, norm) is bool(norm)


@settings(max_examples=200)
@given(
    st.sampled_from(sorted(PROBE_TYPES)),
    json_values,
    st.none() | st.text(),
    st.none() | st.text(),
    st.none() | st.booleans(),
)
def test_rescore_row_accepts_any_prediction(
    probe: str, pred: object, ref: str | None, ref2: str | None, flag: bool | None
) -> None:
    row = {
        "dataset": "sgd",
        "prediction": pred,
        "reference": ref,
        "reference_goal": ref,
        "reference_value": ref2,
        "abstain": flag,
        "error": flag,
    }
    out = rescore_row(row, probe)
    assert out["prediction"] is pred
    for key, v in out["scores"].items():
        if isinstance(v, float):
            assert 0.0 <= v <= 1.0
        elif not key.startswith("norm_"):
            assert v in (0, 1)
