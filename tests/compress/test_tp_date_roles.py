"""``benchmarks/tp_date_roles.py`` (issue #31, a tried idea): the cue words before a mention,
the cue table learned from state annotations, and the role line's entries."""

from __future__ import annotations

from types import ModuleType

from compressbench.compress.turning_point.features import PLAIN
from compressbench.corpora.model import SYSTEM, USER, Dialogue, Turn
from support.scripts import load_script


def _roles() -> ModuleType:
    return load_script("tp_date_roles", "benchmarks")


HOTEL = (
    Turn(0, USER, "Book a room. I check in on the 6th.", {"Hotels_1:check_in_date": ("the 6th",)}),
    Turn(1, SYSTEM, "When do you check out?"),
    Turn(
        2,
        USER,
        "I check out on the 12th.",
        {"Hotels_1:check_in_date": ("the 6th",), "Hotels_1:check_out_date": ("the 12th",)},
    ),
    Turn(3, SYSTEM, "Please confirm: check in on March 6th, check out on March 12th."),
)


def test_cues_are_the_words_before_in_the_sentence_nearest_first() -> None:
    text = "Fine. I check out on the 12th."
    assert _roles().cues(text, text.index("12th"), 3) == ["the", "on the", "on", "out on", "out"]


def test_fit_learns_cues_from_the_slots_a_turn_changes() -> None:
    dialogue = Dialogue("sgd", "1_00000", HOTEL)
    table = _roles().fit([dialogue] * 3, PLAIN, 4, min_count=3, precision=0.8)
    assert table["date", "out on"] == "check_out_date"
    assert table["date", "in on"] == "check_in_date"
    assert ("date", "on") not in table  # both slots: below the precision


def test_role_line_lists_each_role_where_the_counted_line_lists_the_last_date() -> None:
    table = {("date", "in on"): "check_in_date", ("date", "out on"): "check_out_date"}
    module = _roles()
    entries = module.role_entries(HOTEL, PLAIN, table, 4)
    assert entries == {"check_in_date": "March 6th", "check_out_date": "March 12th"}
    counted = module.line_entries(HOTEL, PLAIN, counts=True, names=False)
    assert counted == {"date": "March 12th"}
    assert module.outcome("check_in_date", "March 6th", entries) == "the current value"
    assert module.outcome("check_in_date", "March 6th", counted) == "another text"
    assert module.outcome("pickup_time", "9 am", counted) == "nothing"
