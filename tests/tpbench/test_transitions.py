"""Transitions: state diffs, final updates, alias rule, value occurrence, evidence (spec §3)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from compressbench.corpora.model import SYSTEM, USER, Dialogue, State, Turn
from compressbench.tpbench.transitions import (
    TransitionStats,
    corpus_stats,
    corpus_transitions,
    dialogue_transitions,
    evidence_turns,
    format_table,
    is_alias_equivalent,
    user_states,
    value_present,
)


def dialogue(
    texts: Sequence[str],
    states: Sequence[State | None],
    dataset: str = "sgd",
    dialogue_id: str = "1_00001",
    split: str = "test",
) -> Dialogue:
    """Turns alternate USER/SYSTEM; ``states`` gives the state of each USER turn in order."""
    it = iter(states)
    turns = tuple(
        Turn(i, USER, t, next(it)) if i % 2 == 0 else Turn(i, SYSTEM, t)
        for i, t in enumerate(texts)
    )
    return Dialogue(dataset, dialogue_id, turns, split=split)


CITY = "Restaurants_1:city"
TIME = "Restaurants_1:time"

BASIC = dialogue(
    [
        "Find a restaurant in San Jose.",  # 0
        "What time?",
        "At 6 pm.",  # 2
        "OK.",
        "Actually make it Oakland at 7:30 pm.",  # 4
        "Sure, Oakland at 7:30 pm.",
        "And change the time to 8 pm please.",  # 6
        "Done.",
    ],
    [
        {CITY: ("San Jose",)},
        {CITY: ("San Jose",), TIME: ("6 pm",)},
        {CITY: ("Oakland",), TIME: ("7:30 pm",)},
        {CITY: ("Oakland",), TIME: ("8 pm",)},
    ],
)


def test_change_events_order_values_and_final() -> None:
    ts = dialogue_transitions(BASIC)
    got = [(t.event_index, t.key, t.turn_index, t.old_value, t.new_value) for t in ts]
    assert got == [
        (0, CITY, 4, "San Jose", "Oakland"),
        (1, TIME, 4, "6 pm", "7:30 pm"),
        (2, TIME, 6, "7:30 pm", "8 pm"),
    ]
    assert [t.is_final for t in ts] == [True, False, True]
    assert ts[1].later_update_turn_ids == (6,)
    assert ts[1].final_slot_update_turn_id == 6
    assert ts[0].final_slot_update_turn_id == 4
    assert ts[0].slot == "city"
    assert ts[2].rel_origin == pytest.approx(6 / 7)


def test_setting_a_new_slot_or_clearing_is_not_a_change_but_clearing_unfinalizes() -> None:
    d = dialogue(
        ["a", "b", "c", "d", "e", "f", "g", "h"],
        [{}, {CITY: ("A",)}, {CITY: ("B",)}, {}],
    )
    ts = dialogue_transitions(d)
    assert [(t.turn_index, t.old_value, t.new_value) for t in ts] == [(4, "A", "B")]
    assert not ts[0].is_final  # cleared at turn 6: "alters the value set in any way"
    assert ts[0].later_update_turn_ids == (6,)


def test_value_sets_compare_as_sets_and_value_is_first_listed() -> None:
    d = dialogue(
        ["a", "b", "c", "d", "e"],
        [{CITY: ("A", "B")}, {CITY: ("B", "A")}, {CITY: ("C", "A")}],
    )
    ts = dialogue_transitions(d)
    assert [(t.turn_index, t.old_value, t.new_value) for t in ts] == [(4, "B", "C")]


def test_missing_state_keeps_previous() -> None:
    d = dialogue(["a", "b", "c", "d", "e"], [{CITY: ("A",)}, None, {CITY: ("B",)}])
    assert [s for _, s in user_states(d.turns)][1] == {CITY: ("A",)}
    assert [t.turn_index for t in dialogue_transitions(d)] == [4]


def test_no_user_turns_or_no_changes() -> None:
    assert dialogue_transitions(dialogue(["a"], [{}])) == []
    assert dialogue_transitions(dialogue(["a", "b", "c"], [{CITY: ("A",)}, {CITY: ("A",)}])) == []


@pytest.mark.parametrize(
    ("old", "new", "dataset", "expected"),
    [
        ("Atlanta", "Atlanta, GA", "sgd", True),  # substring rule (commas are normalised away)
        ("New York", "New York City", "sgd", True),
        ("Seattle", "Seattle, WA", "sgd", True),
        ("12:45", "afternoon 12:45", "sgd", True),
        ("12:45 pm", "12:45", "sgd", True),  # 12:45 pm -> 12:45 (spec §1.1)
        ("1 pm", "13:00", "sgd", True),
        ("centre", "center", "multiwoz", True),
        ("centre", "center", "sgd", False),  # alias table only for MultiWOZ
        ("centre", "center", "multiwoz22", True),  # dataset key: contains "multi"
        ("sf", "sfo", "sgd", False),  # below 3 characters no substring rule
        ("east", "south", "multiwoz", False),
        ("quarter to 1 in the afternoon", "12:45 pm", "sgd", False),
        ("", "x", "sgd", False),
        ("x", None, "sgd", False),
        ("!!", "x", "sgd", False),  # normalises to empty
        ("abc", "abc", "sgd", True),
    ],
)
def test_alias_equivalence(old: str, new: str | None, dataset: str, expected: bool) -> None:
    assert is_alias_equivalent(old, new, dataset) is expected


def test_value_present_is_plain_substring_evidence_is_phrase_bounded() -> None:
    texts = ["i like colleges", "what about parks", "the park is nice"]
    assert value_present("college", texts, "multiwoz")
    assert evidence_turns("college", texts, "multiwoz") == ()
    assert evidence_turns("park", texts, "multiwoz") == (2,)
    assert not value_present("zoo", texts, "multiwoz")
    assert not value_present("", texts, "multiwoz")


def test_evidence_fields_reproduce_released_meta() -> None:
    """v20_sgd_66_00065__qa_02: new value "12:45 pm", origin 26 -> s_evidence [25],
    s_transition_support [25, 26] (spec §3.12, probe_examples.jsonl)."""
    texts = [f"filler {i}" for i in range(30)]
    texts[19] = "So you want a table for 2 at Donato & Co. in Berkeley on March 1st at 1 pm?"
    texts[22] = "Set the time as quarter to 1 in the afternoon."
    texts[25] = (
        "So confirm that your event name Eat is scheduled on March 1st at 2635 Ashby Avenue "
        "at 12:45 pm."
    )
    texts[26] = "Yes I confirm."
    key = "Calendar_1:event_time"
    states: list[State] = [{} for _ in range(15)]
    for u in range(11, 13):
        states[u] = {key: ("quarter to 1 in the afternoon",)}
    for u in range(13, 15):
        states[u] = {key: ("12:45 pm",)}
    (t,) = dialogue_transitions(dialogue(texts, states))
    assert (t.turn_index, t.new_value) == (26, "12:45 pm")
    assert t.s_origin == (26,)
    assert t.s_evidence == (25,)
    assert t.s_transition_support == (25, 26)
    assert t.is_final and t.p3_eligible and t.value_present and not t.alias_equivalent
    assert t.p2_eligible
    row = t.to_row()
    assert row["s_transition_support"] == [25, 26] and row["is_final_slot_update"] is True


def test_p3_eligibility_thresholds() -> None:
    def event(n_turns: int, origin_user: int) -> bool:
        n_users = (n_turns + 1) // 2
        states: list[State] = [{CITY: ("A",)} for _ in range(n_users)]
        for u in range(origin_user, n_users):
            states[u] = {CITY: ("B",)}
        (t,) = dialogue_transitions(dialogue([f"t{i}" for i in range(n_turns)], states))
        return t.p3_eligible

    assert event(10, 3)  # origin 6, rel 6/9
    assert not event(10, 2)  # origin 4 < 6
    assert not event(8, 3)  # n_turns 8 < 10
    assert event(12, 3)  # origin 6, rel 6/11 >= 0.5
    assert not event(14, 3)  # origin 6, rel 6/13 < 0.5


def test_stats_rows_and_table() -> None:
    other = dialogue(["x", "y"], [{}], dialogue_id="2_00001", split="dev")
    rows = corpus_stats(corpus_transitions([BASIC, other]), "sgd")
    assert [r.name for r in rows] == ["sgd test", "sgd dev", "sgd all"]
    test = rows[0]
    assert (test.dialogues, test.dialogues_with_change, test.change_events) == (1, 1, 3)
    assert (test.changed_pairs, test.final_updates) == (2, 2)
    assert test.alias_excluded + test.value_absent + test.p2_eligible == test.final_updates
    assert rows[2].dialogues == 2
    table = format_table(rows)
    assert table.splitlines()[0].startswith("| set | dialogues |")
    assert "| sgd all | 2 |" in table
    assert TransitionStats("x").to_row()["name"] == "x"


# --- real corpora: reproduce the reference table of ../shared/corpora/README.md --------------

README_TABLE = {
    # set: (dialogues, with a change, change events, pairs, final, P3-like)
    ("sgd", "test"): (2921, 1920, 4727, 4084, 4069, 2964),
    ("sgd", "dev"): (2098, 1461, 3786, 3213, 3213, 1976),
    ("multiwoz", "test"): (49, 22, 31, 29, 28, 14),
}


@pytest.mark.corpora
@pytest.mark.parametrize(("corpus", "split"), sorted(README_TABLE))
def test_reference_statistics(corpora_dir: Path, corpus: str, split: str) -> None:
    from compressbench.corpora.loaders import load_corpus

    folder = {"sgd": "sgd", "multiwoz": "multiwoz22"}[corpus]
    (row,) = corpus_stats(
        corpus_transitions(load_corpus(corpus, corpora_dir / folder, [split])), corpus
    )
    got = (
        row.dialogues,
        row.dialogues_with_change,
        row.change_events,
        row.changed_pairs,
        row.final_updates,
        row.p3_eligible,
    )
    assert got == README_TABLE[(corpus, split)]
    assert row.alias_excluded + row.value_absent + row.p2_eligible == row.final_updates


@pytest.mark.corpora
def test_transitions_cli_writes_json(corpora_dir: Path, tmp_path: Path, capsys) -> None:
    import json

    from compressbench.cli import main

    out, events = tmp_path / "stats.json", tmp_path / "events.jsonl"
    argv = ["transitions", "--corpus", "multiwoz", "--path", str(corpora_dir / "multiwoz22")]
    assert main([*argv, "--output", str(out), "--events", str(events)]) == 0
    assert "| multiwoz test | 49 | 22 | 31 | 29 | 28 |" in capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["rows"][0]["change_events"] == 31
    assert len(events.read_text().splitlines()) == 31


def test_transitions_cli_bad_corpus_path(tmp_path: Path, capsys) -> None:
    from compressbench.cli import main

    out = tmp_path / "stats.json"
    argv = ["transitions", "--corpus", "sgd", "--path", str(tmp_path / "nope")]
    assert main([*argv, "--output", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not out.exists()
