"""The built-in mini corpus: shape, annotation consistency, turning-point targets, edge cases."""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from compressbench.corpora.builtin import DATA_DIR
from compressbench.corpora.loaders import load_corpus
from compressbench.corpora.model import SYSTEM, USER, Dialogue
from compressbench.text.normalize import normalize_value
from support.corpus_stats import ChangeEvent, change_events, corpus_stats, is_alias_equivalent

SPLIT_DIR = DATA_DIR / "test"

# Annotated values deliberately never said literally (edge case "value absent from the text").
ABSENT_VALUES = {
    ("1_00005", "RideSharing_1:destination", "San Francisco International Airport"),
    ("2_00002", "Events_1:date", "April 13th"),
    ("3_00004", "Hotels_1:city", "Saint Paul"),
}


@pytest.fixture(scope="module")
def dialogues() -> list[Dialogue]:
    return list(load_corpus("builtin"))


@pytest.fixture(scope="module")
def events(dialogues: list[Dialogue]) -> list[ChangeEvent]:
    return [e for d in dialogues for e in change_events(d)]


@pytest.fixture(scope="module")
def schema() -> list[dict]:
    return json.loads((SPLIT_DIR / "schema.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def raw_dialogues() -> list[dict]:
    out: list[dict] = []
    for path in sorted(SPLIT_DIR.glob("dialogues_*.json")):
        out.extend(json.loads(path.read_text(encoding="utf-8")))
    return out


def test_packaged_corpus_loads_with_and_without_path(dialogues: list[Dialogue]) -> None:
    assert 44 <= len(dialogues) <= 48
    assert dialogues == list(load_corpus("builtin", DATA_DIR))
    assert dialogues == list(load_corpus("builtin", DATA_DIR, splits=["test"]))
    assert len({d.dialogue_id for d in dialogues}) == len(dialogues)
    assert {d.dataset for d in dialogues} == {"builtin"}
    assert {d.split for d in dialogues} == {"test"}
    # the source file, relative to the corpus root: the same bytes from any checkout
    assert all((DATA_DIR / d.source).parent == SPLIT_DIR for d in dialogues)
    assert all(not Path(d.source).is_absolute() for d in dialogues)


def test_package_data_is_declared() -> None:
    # pyproject ships corpora/builtin/data/**/* ; the files must live there.
    assert sorted(p.name for p in SPLIT_DIR.iterdir()) == [
        "dialogues_001.json",
        "dialogues_002.json",
        "dialogues_003.json",
        "schema.json",
    ]


def test_turns_alternate_and_user_turns_carry_state(dialogues: list[Dialogue]) -> None:
    for d in dialogues:
        assert d.n_turns >= 6, d.dialogue_id
        for i, turn in enumerate(d.turns):
            assert turn.index == i
            assert turn.speaker == (USER if i % 2 == 0 else SYSTEM)
            assert (turn.state is not None) == (turn.speaker == USER)
            assert turn.text.strip(), (d.dialogue_id, i)
        first_state = d.turns[0].state
        assert first_state, f"{d.dialogue_id}: the first USER turn states a goal"


def test_several_services_and_long_dialogues(dialogues: list[Dialogue]) -> None:
    services = Counter(s for d in dialogues for s in d.services)
    assert len(services) >= 8
    assert min(services.values()) >= 4
    assert sum(len(d.services) > 1 for d in dialogues) >= 3
    assert sum(d.n_turns >= 10 for d in dialogues) >= 30


def test_schema_describes_every_service_slot_and_intent(
    schema: list[dict], raw_dialogues: list[dict]
) -> None:
    slots = {s["service_name"]: {sl["name"]: sl for sl in s["slots"]} for s in schema}
    intents = {s["service_name"]: {i["name"] for i in s["intents"]} for s in schema}
    for d in raw_dialogues:
        assert set(d["services"]) <= set(slots), d["dialogue_id"]
        for turn in d["turns"]:
            for frame in turn["frames"]:
                service = frame["service"]
                assert service in d["services"], d["dialogue_id"]
                for action in frame["actions"]:
                    assert set(action) == {"act", "slot", "values", "canonical_values"}
                if turn["speaker"] != USER:
                    assert "state" not in frame
                    continue
                state = frame["state"]
                assert set(state) == {"active_intent", "requested_slots", "slot_values"}
                assert state["active_intent"] in intents[service]
                for slot, values in state["slot_values"].items():
                    spec = slots[service][slot]
                    if spec["is_categorical"]:
                        assert set(values) <= set(spec["possible_values"]), (slot, values)
                for span in frame["slots"]:
                    text = turn["utterance"][span["start"] : span["exclusive_end"]]
                    assert any(text in a["values"] for a in frame["actions"]), text


def test_values_are_said_in_the_dialogue_except_the_deliberate_ones(
    dialogues: list[Dialogue], schema: list[dict]
) -> None:
    categorical = {
        f"{s['service_name']}:{sl['name']}"
        for s in schema
        for sl in s["slots"]
        if sl["is_categorical"]
    }
    absent = set()
    for d in dialogues:
        text = " ".join(normalize_value(t) for t in d.texts)
        for turn in d.turns:
            for key, values in (turn.state or {}).items():
                for value in values:
                    if key not in categorical and normalize_value(value) not in text:
                        absent.add((d.dialogue_id, key, value))
    assert absent == ABSENT_VALUES


def test_turning_point_targets(dialogues: list[Dialogue], events: list[ChangeEvent]) -> None:
    stats = corpus_stats(dialogues)
    assert stats.change_events == len(events) >= 60
    assert sum(e.p2_eligible for e in events) >= 30
    assert sum(e.p3_eligible for e in events) >= 15
    # Pinned so that an edit to the data is a conscious one.
    assert (stats.dialogues, stats.change_events, stats.final_events, stats.p3_like) == (
        48,
        84,
        74,
        57,
    )
    assert sum(e.p2_eligible for e in events) == 63


def test_p3_events_are_late_in_long_dialogues(events: list[ChangeEvent]) -> None:
    late = [e for e in events if e.p3_eligible]
    assert len({e.dialogue.dialogue_id for e in late}) >= 15
    for e in late:
        assert e.dialogue.n_turns >= 10 and e.turn >= 6
        assert e.turn / (e.dialogue.n_turns - 1) >= 0.5


def test_edge_case_alias_equivalent_changes(events: list[ChangeEvent]) -> None:
    alias = {(e.old[0], e.new[0]) for e in events if e.alias_equivalent}
    assert ("Atlanta", "Atlanta, GA") in alias
    assert ("New York", "New York City") in alias
    assert len(alias) >= 4
    assert all(not e.p2_eligible for e in events if e.alias_equivalent)
    assert is_alias_equivalent("Atlanta", "Atlanta, GA")
    assert not is_alias_equivalent("2", "12")


def test_edge_case_absent_values_are_final_changes_without_p2(events: list[ChangeEvent]) -> None:
    absent = [e for e in events if not e.value_in_text]
    assert {(e.dialogue.dialogue_id, e.key, e.new[0]) for e in absent} == ABSENT_VALUES
    assert all(e.final and not e.p2_eligible for e in absent)
    assert any(e.p3_eligible for e in absent)


def test_edge_case_slot_changed_twice(events: list[ChangeEvent]) -> None:
    by_key: dict[tuple[str, str], list[ChangeEvent]] = defaultdict(list)
    for e in events:
        by_key[e.dialogue.dialogue_id, e.key].append(e)
    twice = [evs for evs in by_key.values() if len(evs) >= 2]
    assert len(twice) >= 5
    for evs in twice:
        assert [e.final for e in evs] == [False] * (len(evs) - 1) + [True]
    # A value changed away and back again (A -> B -> A) is final at the second change.
    assert any(evs[0].old == evs[-1].new for evs in twice)


def test_edge_case_repeated_identical_update(raw_dialogues: list[dict]) -> None:
    repeats = 0
    for d in raw_dialogues:
        previous: dict[tuple[str, str], list[str]] = {}
        for turn in d["turns"]:
            if turn["speaker"] != USER:
                continue
            for frame in turn["frames"]:
                for action in frame["actions"]:
                    key = (frame["service"], action["slot"])
                    if action["act"] == "INFORM" and previous.get(key) == action["values"]:
                        repeats += 1
                for slot, values in frame["state"]["slot_values"].items():
                    previous[frame["service"], slot] = values
    assert repeats >= 3  # re-stated with the same value: no change event


def test_edge_case_corrections_and_constraint_additions(
    dialogues: list[Dialogue], events: list[ChangeEvent]
) -> None:
    corrections = [e for e in events if "sorry, i meant" in e.dialogue.turns[e.turn].text.lower()]
    assert len(corrections) >= 5
    additions = 0
    for d in dialogues:
        states = [t.state for t in d.turns if t.state is not None]
        additions += sum(len(set(b) - set(a)) for a, b in itertools.pairwise(states))
    assert additions >= 100


def test_carry_forward_across_services(dialogues: list[Dialogue]) -> None:
    multi = next(d for d in dialogues if d.dialogue_id == "3_00010")
    final = multi.turns[-2].state
    assert final is not None
    # The last USER turn talks about the show only; the dinner booking is carried forward.
    assert final["Events_1:number_of_tickets"] == ("3",)
    assert final["Restaurants_1:restaurant_name"] == ("Saffron House",)
    assert final["Restaurants_1:time"] == ("6:15 pm",)
