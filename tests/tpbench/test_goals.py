"""Goal labels (spec §3.2)."""

from __future__ import annotations

import pytest

from compressbench.corpora.model import SYSTEM, USER, Turn
from compressbench.tpbench.goals import goal_first_sentence, goal_text, normalize_task, story_label


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("I'm looking to stay at a 4.0 rated house in Atlanta, GA.", "I'm looking to stay at a 4"),
        (
            "Is Billy Currington performing in Rohnert Park? I'm thinking of going.",
            "Is Billy Currington performing in Rohnert Park",
        ),
        ("Hi", "Hi"),
        ("Hello!", "Hello"),
        ("I am looking for things to do in SFO.", "I am looking for things to do in SFO"),
        ("", ""),
    ],
)
def test_goal_first_sentence(text: str, first: str) -> None:
    assert goal_first_sentence(text) == first


@pytest.mark.parametrize(
    ("text", "label"),
    [
        (
            "Hi, I'm looking for a hotel in town with free parking and free wifi",
            "hi, i'm looking for a hotel in town with free parking and free wifi",
        ),
        ("I am looking for things to do in SFO", "i am looking for things to do in sfo"),
        ("Can you find me a train", "find me a train"),
        ("could you Please book it?!  ", "please book it"),  # one prefix only
        ("I'd like to book a table", "book a table"),
        ("Id like to book a table", "book a table"),
        ("I'm looking to rent a car.", "rent a car"),
        ("im looking to rent a car", "rent a car"),
        ("I want to  fly", "fly"),
        ("I need to eat...", "eat"),
        ("Please help", "help"),
        ("So can you help", "so can you help"),  # prefix only at the very start
    ],
)
def test_normalize_task(text: str, label: str) -> None:
    assert normalize_task(text) == label


def test_goal_text_and_story_label_use_first_user_turn() -> None:
    turns = [Turn(0, USER, "Can you find a hotel? Thanks."), Turn(1, SYSTEM, "Sure.")]
    assert goal_text(turns) == "Can you find a hotel? Thanks."
    assert story_label(turns) == "find a hotel"
    assert goal_text([Turn(0, SYSTEM, "Hi")]) == ""
    assert story_label([Turn(0, USER, "...")]) == ""
