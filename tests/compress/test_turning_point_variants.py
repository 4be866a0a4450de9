"""The turning-point compressor's labelled variants for tight budgets (issue #31): ``units:
mention`` (a value-like span is a segment of its own, with the preposition before it), ``units:
value`` (the value alone) and ``revisions: same_speaker`` (a restatement by the other speaker
supersedes nothing); the defaults stay the method as first measured. Also the misreading
classifier of ``benchmarks/tp_misreading.py``."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from compressbench.compress.method import Source
from compressbench.compress.reader_tokens import reader_counter
from compressbench.compress.registry import get_method
from compressbench.compress.turning_point.features import PLAIN, MentionRules, mention_spans
from compressbench.compress.turning_point.method import TurningPointMethod
from compressbench.compress.turning_point.segments import Segment, turn_spans
from compressbench.compress.turning_point.select import Candidate
from compressbench.compress.turning_point.state import count_kind
from compressbench.corpora.loaders import load_corpus
from compressbench.corpora.model import SYSTEM, USER, Dialogue, Turn
from compressbench.tpbench.retention import retention_rows
from support.scripts import load_script

LABEL = re.compile(r"^(USER|SYSTEM): ")
RESTATED = (
    Turn(0, USER, "Book me a table at a restaurant please."),
    Turn(1, SYSTEM, "Which day?"),
    Turn(2, USER, "On the 4th of this month at Rosie Mccann's."),
    Turn(3, SYSTEM, "Please confirm: a table at Rosie Mccann's for next Monday?"),
    Turn(4, USER, "Actually, make it the 9th of this month."),
    Turn(5, SYSTEM, "Done."),
)


def _plan(
    params: dict[str, Any], turns: tuple[Turn, ...] = RESTATED
) -> tuple[list[Segment], list[Candidate]]:
    """The segments and scored candidates of ``turns`` under ``turning_point`` with ``params``."""
    method = get_method("turning_point", params)
    assert isinstance(method, TurningPointMethod)
    return method.plan(turns)


def _needs(params: dict[str, Any], turns: tuple[Turn, ...] = RESTATED) -> dict[str, list[str]]:
    """Each segment with a mention -> the segments it must bring along, under ``params``."""
    _, cands = _plan(params, turns)
    return {c.seg.text: [cands[j].seg.text for j in c.needs] for c in cands if c.mentions}


@pytest.fixture(scope="module")
def builtin() -> list[Dialogue]:
    return list(load_corpus("builtin"))


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        (
            "Oh, silly me. I actually need it from Heathrow International Airport on the 6th.",
            [
                "Oh, silly me.",
                "I actually need it",
                "from Heathrow International Airport",
                "on the 6th.",
            ],
        ),
        ("No, change the name to Joseph.", ["No, change the name", "to Joseph."]),
        (
            "Book it for half past 11 in the morning.",
            ["Book it", "for half past 11 in the morning."],
        ),
    ],
)
def test_mention_units_cut_around_values_with_their_preposition(
    text: str, spans: list[str]
) -> None:
    assert [text[a:b] for a, b in turn_spans(text, goal=False, units="mention")] == spans


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        (
            "I want a restaurant in San Jose, for 18:30, please.",
            ["I want a restaurant", "in", "San Jose", ",", "for", "18:30", ", please."],
        ),
        ("No, change the name to Joseph.", ["No, change the name", "to", "Joseph", "."]),
        (
            "Call 408-555-0182. Make it 7 p.m. tomorrow!",
            ["Call", "408-555-0182", ".", "Make it", "7 p.m.", "tomorrow", "!"],
        ),
    ],
)
def test_value_units_keep_a_value_without_its_preposition_or_punctuation(
    text: str, spans: list[str]
) -> None:
    assert [text[a:b] for a, b in turn_spans(text, goal=False, units="value")] == spans


def test_a_value_costs_fewer_tokens_as_a_value_unit_than_as_a_mention_unit() -> None:
    count = reader_counter()
    cost = {}
    for units in ("mention", "value"):
        segs, _ = _plan({"units": units})
        cost[units] = count(next(s.text for s in segs if "9th" in s.text))
    assert cost["value"] < cost["mention"]


@pytest.mark.parametrize("units", ["mention", "value"])
def test_fine_units_stay_within_budget_and_verbatim(builtin: list[Dialogue], units: str) -> None:
    count = reader_counter()
    method = get_method("turning_point", {"units": units})
    for d in builtin:
        for r in (0.05, 0.1, 0.3, 1.0):
            comp = method.compress(Source(d.turns, key=d.dialogue_id), r)
            assert count(comp.text) == comp.record["kept_tokens"] <= comp.budget
            lines = comp.text.split("\n") if comp.text else []
            kept = [d.turns[i] for i in comp.kept_ids]
            assert len(lines) == len(kept)
            for line, turn in zip(lines, kept, strict=True):
                assert LABEL.match(line) and line.startswith(f"{turn.speaker}: ")
                position = 0
                for piece in line.split(": ", 1)[1].split(" … "):  # in order, verbatim
                    found = turn.text.find(piece, position)
                    assert found >= 0, (piece, turn.text)
                    position = found + len(piece)
        whole = method.compress(Source(d.turns, key="k"), 1.0)
        assert whole.kept_text == "\n".join(t.text.strip() for t in d.turns)


def test_unlabelled_lines_are_the_kept_pieces_alone_within_budget(
    builtin: list[Dialogue],
) -> None:
    count = reader_counter()
    bare = get_method("turning_point", {"labels": "none"})
    labelled = get_method("turning_point")
    more = 0
    for d in builtin:
        src = Source(d.turns, key=d.dialogue_id)
        comp, ref = bare.compress(src, 0.1), labelled.compress(src, 0.1)
        assert count(comp.text) <= comp.budget and comp.record["params"]["labels"] == "none"
        assert comp.text == comp.kept_text  # no label: the context is the kept text itself
        assert not any(LABEL.match(line) for line in comp.text.split("\n"))
        more += len(comp.kept_text) > len(ref.kept_text)
    assert more > len(builtin) // 2  # the labels' tokens go to more kept text


def _superseded(revisions: str, turns: tuple[Turn, ...]) -> dict[str, list[str]]:
    """Each segment with a superseded mention -> the segments it must bring along."""
    return {text: needs for text, needs in _needs({"revisions": revisions}, turns).items() if needs}


def test_same_speaker_revisions_ignore_a_system_restatement() -> None:
    restated_only = RESTATED[:4] + RESTATED[5:]  # the system restates the date, nobody revises
    # by default the system's "next Monday" supersedes the user's date and must come along
    assert _superseded("any_speaker", restated_only) == {
        "On the 4th of this month": ["for next Monday?"]
    }
    assert _superseded("same_speaker", restated_only) == {}
    # a user's own later date still supersedes (and "next Monday" is no longer a revision)
    assert _superseded("same_speaker", RESTATED) == {
        "On the 4th of this month": ["Actually, make it the 9th of this month."]
    }


def test_the_defaults_are_unchanged_and_variants_are_recorded(builtin: list[Dialogue]) -> None:
    default = get_method("turning_point")
    explicit = get_method("turning_point", {"units": "phrase", "revisions": "any_speaker"})
    variant = get_method("turning_point", {"revisions": "same_speaker"})
    for d in builtin[:8]:
        src = Source(d.turns, key=d.dialogue_id)
        for r in (0.1, 0.3):
            assert default.compress(src, r) == explicit.compress(src, r)
            assert "revisions" not in default.compress(src, r).record["params"]
            assert variant.compress(src, r).record["params"]["revisions"] == "same_speaker"


def _weights(params: dict[str, float]) -> dict[str, float]:
    """Each mention's weight in the greedy, for RESTATED under ``params``."""
    _, cands = _plan(params)
    return {text: p for c in cands for text, p in c.mentions}


def test_recency_weighs_later_mentions_more() -> None:
    plain, late = _weights({"recency": 0.0}), _weights({"recency": 0.8})
    last = RESTATED[-1].index
    assert late["9th of this month"] == pytest.approx(
        plain["9th of this month"] * (0.2 + 0.8 * 4 / last)
    )
    assert late["4th of this month"] == pytest.approx(
        plain["4th of this month"] * (0.2 + 0.8 * 2 / last)
    )
    assert (
        get_method("turning_point", {"recency": 0.8})
        .compress(Source(RESTATED, key="k"), 0.3)
        .record["params"]["recency"]
        == 0.8
    )


def test_revised_weighs_the_users_own_revisions_more() -> None:
    plain, boosted = _weights({"revised": 0.0}), _weights({"revised": 3.0})
    # the user's second date revises the user's first: scaled by 1 + 3
    assert boosted["9th of this month"] == pytest.approx(4 * plain["9th of this month"])
    # the user's first date, and the system's restatement (not the user's revision), unscaled
    assert boosted["4th of this month"] == pytest.approx(plain["4th of this month"])
    assert boosted["next monday"] == pytest.approx(plain["next monday"])
    record = get_method("turning_point", {"revised": 3}).compress(Source(RESTATED, key="k"), 0.3)
    assert record.record["params"]["revised"] == 3


FRAMED = (
    Turn(0, USER, "I need to send a message please."),
    Turn(1, SYSTEM, "Sure, who is it for?"),
    Turn(2, USER, "Send it to Andrea."),
    Turn(3, SYSTEM, "Sending it to Andrea, correct?"),
    Turn(4, USER, "No, change the name to Joseph."),
    Turn(5, SYSTEM, "Sending it to Joseph, correct?"),
    Turn(6, USER, "Yes."),
)


@pytest.mark.parametrize("ratio", [0.4, 0.5])
def test_frame_keeps_the_words_that_frame_a_kept_value(ratio: float) -> None:
    def lines(frame: str) -> list[str]:
        method = get_method("turning_point", {"frame": frame})
        return method.compress(Source(FRAMED, key="k"), ratio).kept_text.split("\n")

    assert "to Joseph." in lines("piece")  # the revision's value without its frame
    for frame in ("lead", "turn", "revision"):
        kept = lines(frame)
        assert "to Joseph." not in kept and "No, change the name to Joseph." in kept


def test_revision_frame_frames_only_turns_with_a_revision_cue() -> None:
    needs = _needs({"frame": "revision"}, FRAMED)
    assert needs["to Joseph."] == ["No, change the name"]  # "No, change": a revision cue
    assert "Send it" not in needs["to Andrea."]  # "Send it to Andrea.": no cue, no frame


def test_confirmation_frame_keeps_a_confirmed_value_with_its_whole_turn() -> None:
    confirm = "Please confirm: a table"
    for frame in ("confirmation", "cued"):  # "Please confirm": a confirmation cue
        framed = _needs({"frame": frame})
        assert framed["at Rosie Mccann's"] == [confirm, "for next Monday?"]
        assert confirm in framed["for next Monday?"]
        assert framed["at Rosie Mccann's."] == []  # the user's turn 2 confirms nothing
    for frame in ("piece", "revision"):
        assert _needs({"frame": frame})["at Rosie Mccann's"] == []
    # "cued" also frames a revising turn, as "revision" does; "confirmation" does not
    assert _needs({"frame": "cued"}, FRAMED)["to Joseph."] == ["No, change the name"]
    assert _needs({"frame": "confirmation"}, FRAMED)["to Joseph."] == []


# a system offer the user accepts: the acceptance says which time is current
OFFERED = (
    Turn(0, USER, "I need a bus to San Diego please."),
    Turn(1, SYSTEM, "Which time?"),
    Turn(2, USER, "Leaving at 9:45 am."),
    Turn(3, SYSTEM, "There is none at 9:45 am. How about one at 9:40 am?"),
    Turn(4, USER, "Yes, that works for me."),
    Turn(5, SYSTEM, "Can I help with anything else today?"),
)


@pytest.mark.parametrize("ratio", [0.4, 0.5, 0.6])
def test_reply_frame_keeps_a_system_offer_with_the_users_acceptance(ratio: float) -> None:
    needs = _needs({"frame": "reply"}, OFFERED)
    assert needs["at 9:40 am?"] == ["Yes, that works"]  # the user's turn 4 accepts it
    assert "Yes, that works" not in needs["Leaving at 9:45 am."]  # a user's piece: no reply
    src = Source(OFFERED, key="k")
    replied = get_method("turning_point_replied").compress(src, ratio)
    filled = get_method("turning_point_filled").compress(src, ratio)
    assert "Yes, that works" in replied.kept_text and "Yes" not in filled.kept_text
    assert replied.record["params"]["frame"] == "reply"


@pytest.mark.parametrize("ratio", [0.3, 0.5, 1.0])
def test_state_line_lists_the_last_mention_of_each_changed_kind(ratio: float) -> None:
    src = Source(OFFERED, key="k")
    count = reader_counter(None)
    stated = get_method("turning_point_stated").compress(src, ratio)
    filled = get_method("turning_point_filled").compress(src, ratio)
    # times changed (9:45 am -> 9:40 am): the last one; the city was said once: not listed
    assert stated.text.splitlines()[-1] == "LATEST: time 9:40 am"
    assert "LATEST" not in filled.text
    assert stated.kept_text.endswith("LATEST: time 9:40 am")  # what the reader sees is searched
    # within the same budget: the line's tokens come off the pieces
    assert count(stated.text) <= stated.record["budget"] == filled.record["budget"]
    assert stated.record["params"]["state"] == "latest" and "state" not in filled.record["params"]


def test_state_line_kinds_and_order() -> None:
    turns = (
        Turn(0, USER, "A table for 2 at Rosie's on Monday at 6 pm please."),
        Turn(1, SYSTEM, "Monday at 6 pm at Rosie's?"),
        Turn(2, USER, "No, make it next Tuesday, 7 pm at Nopa, for 4."),
        Turn(3, SYSTEM, "Booked at 7 pm."),
    )
    line = get_method("turning_point_stated").compress(Source(turns, key="k"), 1.0).text
    # names (Rosie's -> Nopa) and numbers (2 -> 4) span many slots: never listed; the kinds in
    # the order of their last mention
    assert line.splitlines()[-1] == "LATEST: date next Tuesday; time 7 pm"
    # no room for the pieces beside it: no line (the goal alone fills r = 0.1)
    tight = get_method("turning_point_stated").compress(Source(turns, key="k"), 0.1)
    assert "LATEST" not in tight.text


def test_counted_state_line_lists_each_units_last_count() -> None:
    turns = (
        Turn(0, USER, "2 tickets for Friday at 6 pm, and send $40 to Amy."),
        Turn(1, SYSTEM, "2 tickets on Friday at 6 pm?"),
        Turn(2, USER, "Make it 3 tickets at 7 pm, and 40 dollars is 50 bucks now, for 4."),
        Turn(3, SYSTEM, "Booked at 7 pm for 4 people."),
    )
    src = Source(turns, key="k")
    counted = get_method("turning_point_counted").compress(src, 1.0)
    stated = get_method("turning_point_stated").compress(src, 1.0)
    # each unit is a kind: tickets 2 -> 3, money $40 -> 50 bucks (one kind: amount); "4
    # people" was said once: not listed; the bare "for 4" spans many slots: never
    assert counted.text.splitlines()[-1] == "LATEST: 3 tickets; amount 50 bucks; time 7 pm"
    assert stated.text.splitlines()[-1] == "LATEST: time 7 pm"
    assert counted.record["params"]["state"] == "counted"
    # the longer line's tokens come off the same budget
    count = reader_counter(None)
    assert count(counted.text) <= counted.record["budget"] == stated.record["budget"]


def test_named_state_line_ends_with_the_users_last_names() -> None:
    turns = (
        Turn(0, USER, "A table at Tacolicious in San Jose on Friday at 6 pm."),
        Turn(1, SYSTEM, "Tacolicious in San Jose at 6 pm?"),
        Turn(2, USER, "No, make it Isushi in Castro Valley at 7 pm."),
        Turn(3, SYSTEM, "Booked at Isushi in Castro Valley. Try Aziza next time."),
    )
    src = Source(turns, key="k")
    named = get_method("turning_point_named").compress(src, 1.0)
    counted = get_method("turning_point_counted").compress(src, 1.0)
    # the user named two distinct places: the names of the user's last naming turn, after
    # the counted line's entries; a system's later name (Aziza) is not the user's
    assert named.text.splitlines()[-1] == "LATEST: time 7 pm; names Isushi, Castro Valley"
    assert counted.text.splitlines()[-1] == "LATEST: time 7 pm"
    assert named.record["params"]["state"] == "named"
    count = reader_counter(None)
    assert count(named.text) <= named.record["budget"] == counted.record["budget"]
    # one name said once, never changed: no names entry
    once = (Turn(0, USER, "A table at Tacolicious at 6 pm."), Turn(1, USER, "Make it 7 pm."))
    line = get_method("turning_point_named").compress(Source(once, key="k"), 1.0).text
    assert line.splitlines()[-1] == "LATEST: time 7 pm"


def test_headed_variant_puts_the_counted_line_before_the_same_pieces() -> None:
    turns = (
        Turn(0, USER, "2 tickets for Friday at 6 pm, please."),
        Turn(1, SYSTEM, "2 tickets on Friday at 6 pm?"),
        Turn(2, USER, "Make it 3 tickets at 7 pm."),
    )
    src = Source(turns, key="k")
    for ratio in (0.5, 1.0):
        headed = get_method("turning_point_headed").compress(src, ratio)
        counted = get_method("turning_point_counted").compress(src, ratio)
        line, *pieces = headed.text.splitlines()
        # the same line and the same pieces in the same budget: only the line's place moves
        assert line == counted.text.splitlines()[-1] == "LATEST: 3 tickets; time 7 pm"
        assert pieces == counted.text.splitlines()[:-1]
        assert headed.kept_text.startswith(line)  # what the reader sees is searched
        assert headed.record["budget"] == counted.record["budget"]
        assert headed.record["params"]["state_at"] == "start"
        assert "state_at" not in counted.record["params"]
    with pytest.raises(ValueError, match="state_at must be one of end, start"):
        get_method("turning_point_counted", {"state_at": "middle"})


@pytest.mark.parametrize(
    ("text", "first", "whole"),
    [
        # a capitalised run reads on through "on" into the month: no date by the first rules
        (
            "So that would be a reservation at 71 Saint Peter on March 5th.",
            [("71", "number"), ("Saint Peter on March", "name")],
            [("71", "number"), ("Saint Peter", "name"), ("March 5th", "date")],
        ),
        # the run resumes after the date; a date keeps its year
        (
            "Next Tuesday at YVR International Airport",
            [("Next Tuesday at YVR International Airport", "name")],
            [("Next Tuesday", "date"), ("YVR International Airport", "name")],
        ),
        (
            "Flying to Seattle on March 7th 2019 at 5 pm.",
            [("Seattle on March", "name"), ("2019", "number"), ("5 pm", "time")],
            [("Seattle", "name"), ("March 7th 2019", "date"), ("5 pm", "time")],
        ),
        (
            "Until March 13th, 2019.",
            [("Until March", "name"), ("2019", "number")],
            [("March 13th, 2019", "date")],
        ),
        # no date beside the run: the same mentions by both rules
        (
            "Bank of America and Wells Fargo",
            [("Bank of America and Wells Fargo", "name")],
            [("Bank of America and Wells Fargo", "name")],
        ),
    ],
)
def test_whole_dates_are_found_before_names(
    text: str, first: list[tuple[str, str]], whole: list[tuple[str, str]]
) -> None:
    def found(rules: MentionRules) -> list[tuple[str, str]]:
        return [(text[a:b], kind) for a, b, kind in mention_spans(text, rules)]

    assert found(PLAIN) == first  # the default keeps the first rules (a documented quirk)
    assert found(MentionRules(dates="whole")) == whole


def test_dated_variant_lists_the_date_a_system_confirms_beside_a_name() -> None:
    turns = (
        Turn(0, USER, "A table at 71 Saint Peter on the 2nd, please."),
        Turn(1, SYSTEM, "At 71 Saint Peter on March 2nd?"),
        Turn(2, USER, "On second thought, make it the 5th."),
        Turn(3, SYSTEM, "So that would be a reservation at 71 Saint Peter on March 5th."),
    )
    src = Source(turns, key="k")
    dated = get_method("turning_point_dated").compress(src, 1.0)
    counted = get_method("turning_point_counted").compress(src, 1.0)
    # by the first rules the system's dates hide in the name "Saint Peter on March"
    assert dated.text.splitlines()[-1] == "LATEST: date March 5th"
    assert counted.text.splitlines()[-1] == "LATEST: date 5th"
    assert dated.record["params"]["dates"] == "whole"
    assert "dates" not in counted.record["params"]
    with pytest.raises(ValueError, match="dates must be one of in_names, whole"):
        get_method("turning_point_counted", {"dates": "some"})


@pytest.fixture
def unseen_schema(tmp_path: Path) -> Path:
    """A schema file with a categorical slot of a service the packaged lexicon (SGD train's)
    never saw."""
    slot = {
        "name": "vehicle_class",
        "is_categorical": True,
        "possible_values": ["Roadster", "Minivan", "Coupe"],
    }
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps([{"service_name": "Cars_9", "slots": [slot]}]), encoding="utf-8")
    return schema


def test_schema_counted_line_lists_a_categorical_slot_of_an_unseen_service(
    unseen_schema: Path,
) -> None:
    turns = (
        Turn(0, USER, "I need a roadster from Friday at 6 pm."),
        Turn(1, SYSTEM, "A roadster from Friday at 6 pm?"),
        Turn(2, USER, "No, a minivan at 7 pm."),
    )
    src = Source(turns, key="k")
    params = {"schema": str(unseen_schema)}
    given = get_method("turning_point_schema_counted", params).compress(src, 1.0)
    counted = get_method("turning_point_counted").compress(src, 1.0)
    # the schema's slot is a kind of its own: its last mention, named by the slot
    assert given.text.splitlines()[-1] == "LATEST: vehicle class minivan; time 7 pm"
    assert counted.text.splitlines()[-1] == "LATEST: time 7 pm"
    assert given.record["params"]["schema"] == str(unseen_schema)
    # without a schema file it is counted itself
    bare = get_method("turning_point_schema_counted").compress(src, 1.0)
    assert bare.text == counted.text


def test_schema_dated_line_names_the_schema_slot_and_the_whole_date(unseen_schema: Path) -> None:
    turns = (
        Turn(0, USER, "I need a roadster at Union Station on the 2nd."),
        Turn(1, SYSTEM, "A roadster at Union Station on March 2nd?"),
        Turn(2, USER, "No, a minivan, and make it the 5th."),
        Turn(3, SYSTEM, "A minivan at Union Station on March 5th."),
    )
    src = Source(turns, key="k")
    params = {"schema": str(unseen_schema)}
    both = get_method("turning_point_schema_dated", params).compress(src, 1.0)
    schema_only = get_method("turning_point_schema_counted", params).compress(src, 1.0)
    # the system's "March 5th" hides in the name "Union Station on March" by the first rules
    assert both.text.splitlines()[-1] == "LATEST: vehicle class minivan; date March 5th"
    assert schema_only.text.splitlines()[-1] == "LATEST: date 5th; vehicle class minivan"
    assert both.record["params"]["dates"] == "whole"


def test_schema_unpaired_line_leaves_out_a_kind_one_turn_names_twice(unseen_schema: Path) -> None:
    turns = (
        Turn(0, USER, "A roadster, picked up on the 8th, back on the 12th, at 9 am."),
        Turn(1, SYSTEM, "A roadster from March 8th to March 12th at 9 am?"),
        Turn(2, USER, "No, a minivan at 10 am."),
        Turn(3, SYSTEM, "A minivan from March 8th to March 12th at 10 am. It costs $40."),
        Turn(4, USER, "Actually, $35 is my limit."),
    )
    src = Source(turns, key="k")
    params = {"schema": str(unseen_schema)}
    unpaired = get_method("turning_point_schema_unpaired", params).compress(src, 1.0)
    counted = get_method("turning_point_schema_counted", params).compress(src, 1.0)
    # "date March 12th" is the drop-off date: a pick-up question would read it
    assert counted.text.splitlines()[-1] == (
        "LATEST: vehicle class minivan; date March 12th; time 10 am; amount $35"
    )
    # dates are paired in turns 0, 1 and 3; the time and the amount never are
    assert unpaired.text.splitlines()[-1] == "LATEST: vehicle class minivan; time 10 am; amount $35"
    assert unpaired.record["params"]["state"] == "unpaired"
    assert unpaired.record["params"]["schema"] == str(unseen_schema)


def test_schema_ranged_line_lists_the_last_date_turns_dates_in_order(unseen_schema: Path) -> None:
    turns = (
        Turn(0, USER, "A roadster, picked up on the 8th, back on the 12th, at 9 am."),
        Turn(1, SYSTEM, "A roadster from March 8th to March 12th at 9 am?"),
        Turn(2, USER, "No, pick it up on the 9th, at 10 am."),
        Turn(3, SYSTEM, "A roadster from March 9th to March 12th at 10 am."),
    )
    src = Source(turns, key="k")
    params = {"schema": str(unseen_schema)}
    ranged = get_method("turning_point_schema_ranged", params).compress(src, 1.0)
    counted = get_method("turning_point_schema_counted", params).compress(src, 1.0)
    # the counted line's date is the drop-off date only; the ranged one names both, in order
    assert counted.text.splitlines()[-1] == "LATEST: date March 12th; time 10 am"
    assert ranged.text.splitlines()[-1] == "LATEST: date March 9th to March 12th; time 10 am"
    assert ranged.record["params"]["state"] == "ranged"
    spanned = get_method("turning_point_schema_spanned", params).compress(src, 1.0)
    assert spanned.text.splitlines()[-1] == (
        "LATEST: start date March 9th; end date March 12th; time 10 am"
    )
    # a last date turn naming one date leaves the counted entry as it is
    later = (*turns, Turn(4, USER, "And return it on the 14th."))
    assert (
        get_method("turning_point_schema_ranged", params)
        .compress(Source(later, key="k"), 1.0)
        .text.splitlines()[-1]
        == "LATEST: time 10 am; date 14th"
    )


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        ("number", "$1,760", "count:amount"),
        ("number", "850 dollars", "count:amount"),
        ("number", "2 persons", "count:people"),
        ("number", "4 people", "count:people"),
        ("number", "3 Nights", "count:night"),
        ("number", "2", "number"),
        ("date", "March 5th", "date"),
    ],
)
def test_count_kind_is_the_numbers_unit(kind: str, text: str, expected: str) -> None:
    assert count_kind(kind, text) == expected


def test_numbered_variant_labels_lines_with_turn_ids() -> None:
    numbered = get_method("turning_point_numbered").compress(Source(OFFERED, key="k"), 0.5)
    lines = numbered.text.splitlines()
    assert lines and all(re.match(r"^\[T\d+\] (USER|SYSTEM): ", line) for line in lines)
    assert lines[0].startswith("[T0] USER: ")


def test_named_variants_are_methods_of_their_own() -> None:
    from compressbench.compress.registry import known_methods

    assert known_methods("span_selector") == [
        "turning_point",
        "turning_point_bare",
        "turning_point_confirmed",
        "turning_point_counted",
        "turning_point_cued",
        "turning_point_dated",
        "turning_point_filled",
        "turning_point_framed",
        "turning_point_headed",
        "turning_point_named",
        "turning_point_numbered",
        "turning_point_query",
        "turning_point_replied",
        "turning_point_schema",
        "turning_point_schema_counted",
        "turning_point_schema_dated",
        "turning_point_schema_ranged",
        "turning_point_schema_spanned",
        "turning_point_schema_unpaired",
        "turning_point_sentences",
        "turning_point_stated",
        "turning_point_unlabelled",
    ]
    # the schema variant's preset is empty: the schema files are the run's choice
    schema = get_method("turning_point_schema", {"schema": None})
    assert isinstance(schema, TurningPointMethod) and schema.schema is None
    assert schema.compress(Source(FRAMED, key="k"), 0.5).text == (
        get_method("turning_point").compress(Source(FRAMED, key="k"), 0.5).text
    )
    framed = get_method("turning_point_framed")
    assert isinstance(framed, TurningPointMethod)
    assert (framed.name, framed.frame, framed.query) == ("turning_point_framed", "revision", "none")
    query = get_method("turning_point_query", {"units": "mention"})  # method_params on top
    assert isinstance(query, TurningPointMethod)
    assert (query.query, query.units) == ("question", "mention")
    src = Source(FRAMED, key="k")
    assert framed.compress(src, 0.5).record["params"]["frame"] == "revision"
    unlabelled = get_method("turning_point_unlabelled").compress(src, 0.5)
    assert (
        unlabelled.record["params"]["labels"] == "none" and unlabelled.text == unlabelled.kept_text
    )
    bare = get_method("turning_point_bare").compress(src, 0.1)
    assert {k: bare.record["params"][k] for k in ("units", "revised", "labels")} == {
        "units": "value",
        "revised": 3.0,
        "labels": "none",
    }


# a value whose slot only the words before it name: which of the two times is the departure?
TRAIN = (
    Turn(0, USER, "I need a train to Ely on Tuesday."),
    Turn(1, SYSTEM, "Where from, and when would you like to leave?"),
    Turn(2, USER, "From Cambridge, after 12:30 please."),
    Turn(
        3, SYSTEM, "TR3420 will arrive in Ely by 14:07 and it will depart from Cambridge at 13:50."
    ),
    Turn(4, USER, "Great, book it."),
    Turn(5, SYSTEM, "Done. Have a nice day. Anything else I can help you with today?"),
)


@pytest.mark.parametrize("ratio", [0.6, 0.7])
def test_filled_spends_the_budget_left_on_the_words_before_kept_values(ratio: float) -> None:
    default, filled = get_method("turning_point"), get_method("turning_point_filled")
    assert isinstance(filled, TurningPointMethod) and filled.fill == "frames"
    src = Source(TRAIN, key="k")
    plain, framed = default.compress(src, ratio), filled.compress(src, ratio)
    assert "at 13:50." in plain.kept_text and "will depart" not in plain.kept_text
    assert "TR3420 will arrive in Ely by 14:07 and it will depart from" in framed.kept_text
    # the same values survive: only the budget the values leave is spent otherwise
    for value in ("12:30", "13:50", "14:07", "Ely", "Tuesday"):
        assert (value in plain.kept_text) <= (value in framed.kept_text)
    count = reader_counter(None)
    assert count(framed.text) <= framed.record["budget"]
    assert framed.record["params"]["fill"] == "frames" and "fill" not in plain.record["params"]


def test_fill_share_holds_back_budget_from_the_values_for_their_frames() -> None:
    src = Source(TRAIN, key="k")
    leftover = get_method("turning_point_filled").compress(src, 0.5)
    shared = get_method("turning_point_filled", {"fill_share": 0.2}).compress(src, 0.5)
    # the values alone leave no room for a frame; with a fifth of the budget held back, the
    # departure time comes with the words that say it is the departure
    assert "in Ely by 14:07 … from Cambridge at 13:50." in leftover.kept_text
    assert "TR3420 will arrive in Ely by 14:07 and it will depart from" in shared.kept_text
    assert reader_counter(None)(shared.text) <= shared.record["budget"]
    assert shared.record["params"]["fill_share"] == 0.2
    assert "fill_share" not in leftover.record["params"]


def test_sentence_variant_keeps_whole_sentences() -> None:
    method = get_method("turning_point_sentences")
    assert isinstance(method, TurningPointMethod) and method.units == "sentence"
    text = method.compress(Source(TRAIN, key="k"), 0.6).kept_text
    sentences = {s for t in TRAIN for s in re.split(r"(?<=[.?!]) ", t.text)}
    for line in text.split("\n"):
        assert all(piece in sentences for piece in line.split(" … "))


TIMED = (
    Turn(0, USER, "I want to book a table at a restaurant."),
    Turn(1, SYSTEM, "For how many people, at what time and on which day?"),
    Turn(2, USER, "For 4 people at 7 pm, on March 3rd."),
    Turn(3, SYSTEM, "A table for 4 at 7 pm on March 3rd at Rosie Mccann's, correct?"),
    Turn(4, USER, "Make it 8 pm instead, and for 5 people."),
    Turn(5, SYSTEM, "A table for 5 at 8 pm on March 3rd at Rosie Mccann's. Booked."),
)


@pytest.mark.parametrize(
    ("probe_type", "slot", "kind"),
    [("P2", "time", "time"), ("P2", "number of seats", "number"), ("P3", "date", "date")],
)
def test_query_aware_variant_reads_the_slot_kind_of_the_question(
    probe_type: str, slot: str, kind: str
) -> None:
    from compressbench.compress.turning_point.query import OFF, question_kind
    from compressbench.tpbench.prompts import question

    query = question(probe_type, slot)
    assert question_kind(query) == kind
    assert question_kind(question("P2", "restaurant name")) == "name"
    assert question_kind(question("P1")) is None  # no slot: every mention counts as it is
    method = get_method("turning_point", {"query": "question"})
    assert isinstance(method, TurningPointMethod)
    plain = {t: p for c in method.plan(TIMED)[1] for t, p in c.mentions}
    focused = {t: p for c in method.plan(TIMED, kind)[1] for t, p in c.mentions}
    assert plain and plain.keys() == focused.keys()
    kinds = {"8 pm": "time", "march 3rd": "date", "5": "number"}
    for text, k in kinds.items():
        assert focused[text] == pytest.approx(plain[text] * (1.0 if k == kind else OFF))


def test_query_aware_variant_keeps_the_asked_value_at_a_tight_budget() -> None:
    from compressbench.tpbench.prompts import question

    aware = get_method("turning_point", {"query": "question"})
    default = get_method("turning_point")

    src = Source(TIMED, key="k", query=question("P2", "number of seats"))
    kept = aware.compress(src, 0.2)
    assert "for 5" in kept.kept_text and "8 pm" not in kept.kept_text
    assert kept.record["params"]["query"] == "question"
    # the default spends the budget on the time, and never reads the query
    assert "5" not in default.compress(src, 0.2).kept_text
    assert default.compress(src, 0.2) == default.compress(Source(TIMED, key="k"), 0.2)
    # P1's question names no slot: the query-aware variant keeps exactly the default's text
    p1 = aware.compress(Source(TIMED, key="k", query=question("P1")), 0.2)
    assert p1.kept_text == default.compress(src, 0.2).kept_text


def test_unknown_variant_values_are_refused() -> None:
    with pytest.raises(ValueError, match="revisions"):
        get_method("turning_point", {"revisions": "nobody"})
    with pytest.raises(ValueError, match="units"):
        get_method("turning_point", {"units": "word"})
    with pytest.raises(ValueError, match="frame"):
        get_method("turning_point", {"frame": "sentence"})
    with pytest.raises(ValueError, match="recency"):
        get_method("turning_point", {"recency": 1.5})
    with pytest.raises(ValueError, match="revised"):
        get_method("turning_point", {"revised": -1})
    with pytest.raises(ValueError, match="query"):
        get_method("turning_point", {"query": "slot"})
    with pytest.raises(ValueError, match="fill"):
        get_method("turning_point", {"fill": "everything"})
    with pytest.raises(ValueError, match="fill_share"):
        get_method("turning_point", {"fill_share": 1.0})


def _misreading() -> ModuleType:
    return load_script("tp_misreading", "benchmarks")


@pytest.mark.parametrize(
    ("prediction", "gold", "old", "abstain", "context", "expected"),
    [
        ("Joseph", "Joseph", "Andrea", 0, "", "correct"),
        ("Andrea", "Joseph", "Andrea", 0, "", "superseded"),
        ("5:30 pm", "5 pm", "5:30 in the evening", 0, "", "superseded, other wording"),
        ("3rd of March", "March 3rd", "the 3rd", 0, "", "current value, other wording"),
        ("Luxurious", "Luxury", "Pool", 0, "", "current value, other wording"),
        (
            "March 1st",
            "March 2nd",
            "Saturday",
            0,
            "SYSTEM: at 9 am on March 1st.",
            "another value in the context",
        ),
        ("5:30 pm", "5:45 pm", "6 pm", 1, "", "abstained"),
        ("6 pm", "7 pm", "seven pm", 0, "SYSTEM: at 7 pm.", "not in the context"),
    ],
)
def test_misreading_kinds(
    prediction: str, gold: str, old: str, abstain: int, context: str, expected: str
) -> None:
    row = {
        "dataset": "sgd",
        "prediction": prediction,
        "gold": gold,
        "old_value": old,
        "abstain": abstain,
        "format_error": 0,
        "scores": {"strict": int(prediction == gold)},
    }
    assert _misreading().kind(row, context) == expected


@pytest.mark.parametrize(
    ("slot", "expected"),
    [
        ("check_out_date", "date"),
        ("date", "date"),
        ("pickup_time", "time"),
        ("train-leaveat", "time"),
        ("train-arriveby", "time"),
        ("hotel-bookstay", "other"),
        ("pickup_location", "other"),
    ],
)
def test_misreading_slot_kinds(slot: str, expected: str) -> None:
    assert _misreading().slot_kind(slot) == expected


def test_misreading_reads_the_state_line_of_a_stated_context() -> None:
    stated = get_method("turning_point_stated").compress(Source(OFFERED, key="k"), 0.5).text
    filled = get_method("turning_point_filled").compress(Source(OFFERED, key="k"), 0.5).text
    row = {"dataset": "sgd", "gold": "9:40 am"}
    state_line = _misreading().state_line
    assert state_line(row, stated) == "current value"
    assert state_line({**row, "gold": "9:45 am"}, stated) == "other values"
    assert state_line(row, filled) == "no line"
    # a headed context: the line is found first, and the update turn among the pieces after it
    headed = get_method("turning_point_headed").compress(Source(OFFERED, key="k"), 0.5).text
    assert state_line(row, headed) == "current value"
    pieces, line = _misreading().split_state(headed)
    assert line == headed.splitlines()[0] and pieces == headed.splitlines()[1:]
    assert _misreading().split_state(filled) == (filled.split("\n"), "")


def test_bare_values_keep_goal_and_value_together_more_often_at_r_01(corpora_dir: Path) -> None:
    """On the first 200 SGD dev dialogues (a tuning split), ``turning_point_bare`` keeps the
    goal and the current value of more P3 events at r = 0.1 than the same settings with
    ``mention`` units: the preposition and punctuation a mention piece carries are the tokens
    another value needs."""
    dialogues = list(itertools.islice(load_corpus("sgd", str(corpora_dir / "sgd"), ["dev"]), 200))
    joint = {}
    for units in ("mention", "value"):
        (row,) = retention_rows(
            dialogues,
            ["turning_point_bare"],
            [0.1],
            method_params={"turning_point_bare": {"units": units}},
            budget_unit="reader_tokens",
        )
        joint[units] = row["p3_joint_retention"]
    assert joint["value"] > joint["mention"] + 0.03
