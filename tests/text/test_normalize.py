"""Pins the normalisers of spec §1.1, §1.2, §1.5 (every worked example and gotcha)."""

from __future__ import annotations

import pytest

from compressbench.text.normalize import (
    MULTIWOZ_ALIASES,
    dataset_key,
    humanize_slot,
    norm_text,
    normalize_value,
    phrase_occurs,
    value_occurs_in_text,
)

# (input, dataset key, expected) - spec §1.1 examples, gotchas and observed stored norms.
NORMALIZE_CASES = [
    # 3a am/pm
    ("12 pm", "sgd", "12:00"),
    ("1 pm", "sgd", "13:00"),
    ("12:45 pm", "sgd", "12:45"),
    ("12:45 PM", "sgd", "12:45"),
    ("5:15 pm", "sgd", "17:15"),
    ("11 am", "sgd", "11:00"),
    ("12 am", "sgd", "00:00"),
    ("13 pm", "sgd", "25:00"),
    ("9am", "sgd", "09:00"),
    ("9 am", "sgd", "09:00"),
    ("9:30pm", "sgd", "21:30"),
    ("9 AM", "sgd", "09:00"),
    # dotted forms are effectively not converted (no word boundary after the final ".")
    ("9 a.m.", "sgd", "9 a m"),
    ("9 a.m. tomorrow", "sgd", "9 a m tomorrow"),
    ("3 p.m.", "sgd", "3 p m"),
    # 3b H:MM padding
    ("9:50", "sgd", "09:50"),
    ("at 7:05 tonight", "sgd", "at 07:05 tonight"),
    # 3c bare 3-4 digits
    ("1130", "sgd", "11:30"),
    ("0930", "sgd", "09:30"),
    ("2024", "sgd", "20:24"),
    ("2024-07-26", "sgd", "20:24-07-26"),
    ("1234", "sgd", "12:34"),
    ("769 Center Boulevard #124", "sgd", "769 center boulevard 01:24"),
    ("5678", "sgd", "5678"),
    ("12345", "sgd", "12345"),
    ("$2400", "sgd", "2400"),
    # 4-5 punctuation and whitespace
    ("Atlanta, GA", "sgd", "atlanta ga"),
    ('o"clock', "sgd", "o clock"),
    ("P.F. Chang's", "sgd", "p f chang s"),
    ("  a   b\tc  ", "sgd", "a b c"),
    ("N/A", "sgd", "n/a"),
    # stored norm_pred / norm_gold
    ("T8", "sgd", "t8"),
    ("Asian oriental food", "multiwoz", "asian food"),
    ("the centre", "multiwoz", "the center"),
    ("guesthouse", "multiwoz", "guest house"),
    ("high-end Cuban restaurant", "sgd", "high-end cuban restaurant"),
    ("大众CC", "risawoz", "大众cc"),
    ("Blackmail - Cinemix Par Chloe", "sgd", "blackmail - cinemix par chloe"),
    # NFKC
    ("ＡＢＣ　１２ ｐｍ", "sgd", "abc 12:00"),
    # alias table: MultiWOZ only, whole words, in order, with its quirks
    ("the centre", "sgd", "the centre"),
    ("the centre", "risawoz", "the centre"),
    ("centres", "multiwoz", "centres"),
    ("color", "multiwoz", "colour"),
    ("colour", "multiwoz", "colour"),
    ("center", "multiwoz", "center"),
    ("four people", "multiwoz", "four people"),
    ("4 people", "multiwoz", "4"),
    ("five people", "multiwoz", "5"),
    ("one person", "multiwoz", "1"),
    ("moderately priced", "multiwoz", "moderate"),
    ("moderate price range", "multiwoz", "moderate range"),
    ("cheap priced", "multiwoz", "cheap"),
    ("north american", "multiwoz", "american"),
    ("panasian", "multiwoz", "asian"),
    ("guesthouses", "multiwoz", "guesthouses"),
]


@pytest.mark.parametrize(("text", "dataset", "expected"), NORMALIZE_CASES)
def test_normalize_value(text: str, dataset: str, expected: str) -> None:
    assert normalize_value(text, dataset) == expected


def test_normalize_value_none_and_non_strings() -> None:
    assert normalize_value(None) == ""
    assert normalize_value(None, "multiwoz") == ""
    assert normalize_value(12, "sgd") == "12"
    assert normalize_value(1130, "sgd") == "11:30"


def test_alias_table_is_the_published_data() -> None:
    assert len(MULTIWOZ_ALIASES) == 19
    assert MULTIWOZ_ALIASES[0] == ("centre", "center")
    assert MULTIWOZ_ALIASES[-1] == ("panasian", "asian")
    assert ("four people", "4") not in MULTIWOZ_ALIASES


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ("multiwoz", "multiwoz"),
        ("MultiWOZ22", "multiwoz"),
        ("multiwoz_2.2", "multiwoz"),
        ("mw", "multiwoz"),
        ("mw_r30_s43", "multiwoz"),
        ("sgd", "sgd"),
        ("SGD", "sgd"),
        ("risawoz", "risawoz"),
        ("lme_ku", "lme_ku"),
        (None, ""),
    ],
)
def test_dataset_key(raw: str | None, key: str) -> None:
    assert dataset_key(raw) == key


@pytest.mark.parametrize(
    ("needle", "haystack", "expected"),
    [
        ("2", "20", False),
        ("2", "table for 2", True),
        ("sf", "successfully", False),
        ("park", "parks", False),
        ("park", "the park", True),
        ("atlanta ga", "leaving from atlanta ga airport", True),
        ("12", "12:30", True),
        ("30", "12:30", True),
        ("high", "high-end", True),
        ("n", "n/a", True),
        ("", "anything", False),
        ("", "", False),
        ("x", "", False),
        ("italian", "italian food", True),
        ("abc", "abc", True),
        ("大众", "大众cc", False),
    ],
)
def test_phrase_occurs(needle: str, haystack: str, expected: bool) -> None:
    assert phrase_occurs(needle, haystack) is expected


def test_value_occurs_in_text() -> None:
    assert value_occurs_in_text("2 pm", "See you at 2 PM, thanks!")
    assert value_occurs_in_text("14:00", "see you at 2 pm")
    assert not value_occurs_in_text("2", "at 20 past")
    assert value_occurs_in_text("centre", "the city center", "multiwoz")
    assert not value_occurs_in_text("centre", "the city center", "sgd")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  12:45 PM ", "12:45 pm"),
        ("Foo   Bar\tBaz", "foo bar baz"),
        ("P.F. Chang's", "p.f. chang's"),
        ("12 pm", "12 pm"),
        ("the centre", "the centre"),
        ("ＡＢＣ", "ａｂｃ"),
        (None, ""),
    ],
)
def test_norm_text(text: str | None, expected: str) -> None:
    assert norm_text(text) == expected


@pytest.mark.parametrize(
    ("slot", "expected"),
    [
        ("origin_city", "origin city"),
        ("restaurant-food", "restaurant food"),
        ("Train__LeaveAt", "train leaveat"),
        ("_x-_y_", "x y"),
    ],
)
def test_humanize_slot(slot: str, expected: str) -> None:
    assert humanize_slot(slot) == expected
