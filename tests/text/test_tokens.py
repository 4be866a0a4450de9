"""Pins the content tokenisers of spec §1.3, §1.4, §1.6, §1.7."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compressbench.text.tokens import (
    OVERLAP_STOPWORDS,
    P1_STOPWORDS,
    ZH_LATIN_STOPWORDS,
    lme_norm,
    lme_tokens,
    overlap_tokens,
    p1_tokens,
    set_f1,
    zh_tokens,
)


def _spec_list(ref_dir: Path, heading: str) -> list[str]:
    """The first backticked comma-separated word list after ``heading`` in the spec."""
    spec = (ref_dir / "tpbench_spec.md").read_text(encoding="utf-8")
    section = spec[spec.index(heading) :]
    match = re.search(r"`([a-z]+(?:, [a-z]+)+)`", section)
    assert match is not None
    return match.group(1).split(", ")


def test_p1_stopwords_match_spec(ref_dir: Path) -> None:
    words = _spec_list(ref_dir, "P1 stopword list")
    assert len(words) == 64
    assert frozenset(words) == P1_STOPWORDS
    assert len(P1_STOPWORDS) == 64


def test_overlap_stopwords_match_spec(ref_dir: Path) -> None:
    words = _spec_list(ref_dir, "### 1.4")
    assert frozenset(words) == OVERLAP_STOPWORDS
    assert len(OVERLAP_STOPWORDS) == 62


def test_zh_latin_stoplist(ref_dir: Path) -> None:
    assert frozenset(_spec_list(ref_dir, "### 1.7")) == ZH_LATIN_STOPWORDS
    assert len(ZH_LATIN_STOPWORDS) == 29
    assert {"please", "want", "need", "the"} <= ZH_LATIN_STOPWORDS


@pytest.mark.parametrize(
    "word", ["find", "looking", "search", "want", "need", "like", "please", "user", "is"]
)
def test_p1_stopwords(word: str) -> None:
    assert word in P1_STOPWORDS
    assert p1_tokens(word) == frozenset()


@pytest.mark.parametrize(
    "word", ["book", "get", "help", "hi", "hello", "am", "pm", "go", "place", "hotel", "restaurant"]
)
def test_p1_non_stopwords(word: str) -> None:
    assert word not in P1_STOPWORDS
    assert p1_tokens(word.upper()) == {word}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Could you help me find a doctor", {"help", "doctor"}),
        ("find a doctor", {"doctor"}),
        ("I want to find an events in SD", {"events", "sd"}),
        ("find an event", {"event"}),
        (
            "I'm in the mood to go do something in Vancouver",
            {"mood", "go", "something", "vancouver"},
        ),
        ("find things to do", {"things"}),
        ("Hi", {"hi"}),
        ("I'm", set()),  # i, m: stopword and too short
        ("10:45", {"10", "45"}),
        ("high-end", {"high", "end"}),
        ("noddles noodles noodles", {"noddles", "noodles"}),
        ("café", {"caf"}),  # accented letters separate
        ("大众CC", {"cc"}),
        ("a b c 1 2", set()),
        ("", set()),
        (None, set()),
    ],
)
def test_p1_tokens(text: str | None, expected: set[str]) -> None:
    assert p1_tokens(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Italian food!", {"italian", "food"}),
        ("The Blue-Car, please", {"blue", "car"}),
        ("I'd like it", {"like"}),
        ("yes okay thanks", set()),
        ("find a hotel", {"find", "hotel"}),  # §1.4 has no "find"
        ("大众CC", {"cc"}),
        ("x 1 ab", {"ab"}),
        (None, set()),
    ],
)
def test_overlap_tokens(text: str | None, expected: set[str]) -> None:
    assert overlap_tokens(text) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("9 a.m. tomorrow", "09:00 tomorrow"),  # permissive suffix, unlike §1.1
        ("9 a.m.", "09:00"),
        ("9 a.m", "09:00"),
        ("9 am.", "09:00"),
        ("2:30 P.M.", "14:30"),
        ("12 am", "00:00"),
        ("12 pm", "12:00"),
        ("9:50", "09:50"),
        ("1130", "1130"),  # no bare-digit rule
        ("the centre", "the centre"),  # no aliases
        ("P.F. Chang's", "p f chang s"),
        ("  Under  my BED. ", "under my bed"),
        (None, ""),
        (True, ""),
        (False, ""),
        (25, "25"),
        (2.5, "2 5"),
    ],
)
def test_lme_norm(value: object, expected: str) -> None:
    assert lme_norm(value) == expected


def test_lme_tokens_use_normalized_text() -> None:
    assert lme_tokens("9 a.m. at the Park") == {"09", "00", "park"}
    assert lme_tokens(None) == frozenset()
    assert lme_tokens("I was there, thanks") == {"there"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("大众CC", {"大", "众", "cc"}),
        ("我想找一个餐厅", {"我", "想", "找", "一", "个", "餐", "厅"}),
        ("the ABC please", {"abc"}),
        ("ＡＢＣ", {"abc"}),  # NFKC
        ("a 1 x", set()),
        ("\u3400\u4dbf\ufa0e\ufaff", {"\u3400", "\u4dbf", "\ufa0e", "\ufaff"}),
        ("\uf900", {"\u8c48"}),  # NFKC maps the compatibility ideograph first
        ("ひらがな", set()),  # kana are not in the CJK ranges
        ("book 酒店 hotel", {"book", "酒", "店", "hotel"}),
        (None, set()),
    ],
)
def test_zh_tokens(text: str | None, expected: set[str]) -> None:
    assert zh_tokens(text) == expected


@pytest.mark.parametrize(
    ("gold", "pred", "expected"),
    [
        ({"help", "doctor"}, {"doctor"}, 2 / 3),
        ({"a"}, {"a"}, 1.0),
        ({"a", "b"}, {"c"}, 0.0),
        (set(), {"a"}, 0.0),
        ({"a"}, set(), 0.0),
    ],
)
def test_set_f1(gold: set[str], pred: set[str], expected: float) -> None:
    assert set_f1(frozenset(gold), frozenset(pred)) == pytest.approx(expected)
