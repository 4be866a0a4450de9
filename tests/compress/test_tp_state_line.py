"""``benchmarks/tp_state_line.py`` (issue #31): what a state line says of a P2 event."""

from __future__ import annotations

from compressbench.tpbench.transitions import Transition
from support.scripts import load_script

EVENT = Transition(
    dataset="sgd",
    dialogue_id="1_00000",
    split="dev",
    event_index=0,
    key="RentalCars_1:pickup_date",
    turn_index=2,
    old_value="March 8th",
    new_value="March 9th",
    n_turns=4,
    later_update_turn_ids=(),
    alias_equivalent=False,
    value_present=True,
    s_evidence=(2,),
)


def test_outcome_reads_a_date_range_as_holding_the_current_value() -> None:
    outcome = load_script("tp_state_line", "benchmarks").outcome
    ranged = {"date": "March 9th to March 12th", "time": "10 am"}
    assert outcome(EVENT, {"date"}, ranged, "sgd") == "current value"
    # the counted line's date is the drop-off date: another text of the value's kind
    assert outcome(EVENT, {"date"}, {"date": "March 12th"}, "sgd") == "another text of its kind"
    assert outcome(EVENT, {"date"}, {"date": "March 8th", "time": "9 am"}, "sgd") == (
        "another text of its kind"
    )
    assert outcome(EVENT, {"date"}, {"time": "March 8th"}, "sgd") == "superseded value"
    assert outcome(EVENT, {"date"}, {}, "sgd") == "no line"
