"""The offline sentence splitter: abbreviations, decimals, quotes, paragraphs, determinism."""

from __future__ import annotations

import pytest

from compressbench.keepbench.sentences import (
    count_sentences,
    split_paragraphs,
    split_sentences,
    truncate_to_budget,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Prof. Ilse Marrow of St. Aldric College arrived at 10 a.m. She left at 5.",
            ["Prof. Ilse Marrow of St. Aldric College arrived at 10 a.m.", "She left at 5."],
        ),
        (
            "The fee rose from 12.5 to 14.75 euros. It was approved.",
            ["The fee rose from 12.5 to 14.75 euros.", "It was approved."],
        ),
        (
            'She wrote: "The dam is safe." Engineers disagreed.',
            ['She wrote: "The dam is safe."', "Engineers disagreed."],
        ),
        (
            "Item no. 4 is listed, i.e. the last one. Done.",
            ["Item no. 4 is listed, i.e. the last one.", "Done."],
        ),
        (
            "The U.S. office agreed on Jan. 3. Is it final? Yes! "
            "Costs were $3.2 million (approx.).",
            [
                "The U.S. office agreed on Jan. 3.",
                "Is it final?",
                "Yes!",
                "Costs were $3.2 million (approx.).",
            ],
        ),
    ],
)
def test_split_keeps_abbreviations_decimals_and_quotes(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_paragraph_break_ends_a_sentence_and_whitespace_collapses() -> None:
    text = "Line one\n\n  Line two\nwithout   stop"
    assert split_sentences(text) == ["Line one", "Line two without stop"]
    assert split_sentences("") == [] and split_sentences(" \n\n ") == []
    assert count_sentences("One. Two. Three.") == 3


def test_split_paragraphs_numbers_sentences_across_the_context() -> None:
    sents = split_paragraphs(["A first. A second.", "", "B only."])
    assert [(s.paragraph, s.index, s.text) for s in sents] == [
        (0, 0, "A first."),
        (0, 1, "A second."),
        (2, 2, "B only."),
    ]


def test_split_is_deterministic() -> None:
    text = "Dr. Vance measured 3.5 kg. The U.K. team agreed. " * 20
    assert split_sentences(text) == split_sentences(text)
    assert len(split_sentences(text)) == 40


def test_truncate_to_budget() -> None:
    assert truncate_to_budget("One. Two. Three.", 2) == "One. Two."
    assert truncate_to_budget("One.", 5) == "One."
    assert truncate_to_budget("One.", 0) == ""
    with pytest.raises(ValueError):
        truncate_to_budget("One.", -1)
