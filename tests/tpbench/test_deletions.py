"""The matched-control picker and the deletion conditions (spec §4), on hand-made dialogues and
on the two worked checks of the released rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compressbench.config import parse_params
from compressbench.corpora.model import SYSTEM, USER, Turn
from compressbench.errors import InputError
from compressbench.text.normalize import normalize_value
from compressbench.tpbench.deletion_contexts import deletion_contexts
from compressbench.tpbench.deletions import (
    FULL,
    MINUS_CONTROL_ORIGIN,
    MINUS_CONTROL_SUPPORT,
    MINUS_ORIGIN,
    MINUS_SUPPORT,
    clean_turns,
    matched_control,
    plan_controls,
    probe_plan,
)
from compressbench.tpbench.pipeline_spec import DELETIONS
from compressbench.tpbench.released import read_released, released_probes
from compressbench.tpbench.transitions import evidence_turns
from support.params import pipeline_params


def dialogue(*texts: str) -> tuple[Turn, ...]:
    """Turns with alternating speakers, turn 0 USER."""
    return tuple(Turn(i, (USER, SYSTEM)[i % 2], text) for i, text in enumerate(texts))


def test_the_control_has_the_target_speaker_even_when_another_speaker_fits_better() -> None:
    # T3 (SYSTEM, 3 words): T2 is USER with exactly 3 words and adjacent; T1 is SYSTEM.
    turns = dialogue("hello", "a b c d e f g", "one two three", "the target here")
    assert matched_control(turns, [3], clean_turns(turns, {3}, "", "", "sgd")) == (1,)
    # A USER target gets a USER turn however far its length is.
    turns = dialogue("a b c d e f g h", "x y z w", "q", "r s t", "target of four words")
    assert matched_control(turns, [4], clean_turns(turns, {4}, "", "", "sgd")) == (2,)


def test_ties_break_on_word_count_then_distance_then_index() -> None:
    # T0 and T4 both have 0 word difference and distance 2 from T2: the lower index wins.
    turns = dialogue("aa bb cc", "s", "xx yy zz", "s", "ee ff gg")
    assert matched_control(turns, [2], clean_turns(turns, {2}, "", "", "sgd")) == (0,)
    # Among equal word differences the closer turn wins over a lower index.
    turns = dialogue("aa bb cc", "s", "s2", "s", "s3", "s", "ee ff gg", "s", "t t t")
    assert matched_control(turns, [8], clean_turns(turns, {8}, "", "", "sgd")) == (6,)
    # Word difference first: T0 (same length, distance 4) beats T2 (2 words, adjacent).
    turns = dialogue("aa bb cc dd", "s", "aa bb", "s", "xx  yy zz\nww")
    assert matched_control(turns, [4], clean_turns(turns, {4}, "", "", "sgd")) == (0,)


def test_support_turns_and_value_bearing_turns_are_never_controls() -> None:
    turns = dialogue(
        "I want a park nearby",  # T0 mentions the old value: forbidden
        "s",
        "the parks are nice",  # T2: "park" only inside "parks": clean
        "s",
        "Make it the museum",  # T4 origin (support)
        "s",
        "the museum then okay",  # T6 mentions the new value: forbidden
        "s",
        "Museum at 5 pm",  # T8 support
    )
    clean = clean_turns(turns, {4, 8}, "park", "museum", "sgd")
    assert 0 not in clean and 6 not in clean and 4 not in clean and 8 not in clean
    assert set(clean) == {1, 2, 3, 5, 7}
    plan = plan_controls(turns, 4, [4, 8], "park", "museum", "sgd")
    assert plan.control_origin == (2,)
    assert plan.control_support is None  # T8 is USER and T2 is taken: no clean USER turn left
    assert plan.all_evidence_reason == "no clean USER turn left to match T8"
    # Normalised matching: "5 pm" in a value matches "17:00" in a turn.
    assert normalize_value("5 pm") == "17:00"
    turns = dialogue("at 17:00 please", "s", "ok then", "s", "change it to 5 pm")
    assert clean_turns(turns, {4}, "5 pm", "6 pm", "sgd") == (1, 2, 3)


def test_a_target_without_a_same_speaker_candidate_fails_the_whole_control() -> None:
    turns = dialogue("book the museum", "s one", "museum please", "s two", "no, the zoo")
    clean = clean_turns(turns, {4}, "museum", "zoo", "sgd")
    assert clean == (1, 3)
    assert matched_control(turns, [4], clean) is None
    assert matched_control(turns, [1, 4], clean) is None  # one target fails: all fail
    plan = plan_controls(turns, 4, [4], "museum", "zoo", "sgd")
    assert plan.control_origin is None and plan.control_support is None
    assert plan.single_reason == "no clean USER turn left to match T4"
    assert plan.all_evidence_reason.startswith("update-turn control failed")
    assert [c for c, _ in plan.conditions()] == [FULL, MINUS_ORIGIN]
    meta = plan.meta()
    assert meta["control_origin_status"] == meta["transition_support_control_status"]
    assert meta["control_origin_status"] == "unmatched"


def test_the_all_evidence_control_reuses_the_update_turn_control() -> None:
    """Picking every support turn in ascending order would give {8, 14}; the paper's control
    keeps the update turn's control T8 and matches the evidence turn T2 among the rest."""
    turns = dialogue(
        "w1 w2 w3 w4 w5 w6 w7",  # T0 clean, 7 words
        "s",
        "the zoo w2 w3 w4",  # T2 evidence, 5 words
        "s",
        "the museum first",  # T4 old value
        "s",
        "museum museum",  # T6 old value
        "s",
        "a b c d",  # T8 clean, 4 words
        "s",
        "zoo it is",  # T10 origin, 3 words
        "s",
        "museum was fine",  # T12 old value
        "s",
        "a b",  # T14 clean, 2 words
    )
    support = [2, 10]
    plan = plan_controls(turns, 10, support, "museum", "zoo", "sgd")
    assert plan.control_origin == (8,)
    assert plan.origin_component == (8,) and plan.evidence_component == (0,)
    assert plan.control_support == (0, 8)
    clean = clean_turns(turns, set(support), "museum", "zoo", "sgd")
    assert matched_control(turns, support, clean) == (8, 14)  # the spec's literal order
    assert plan.conditions() == [
        (FULL, ()),
        (MINUS_ORIGIN, (10,)),
        (MINUS_CONTROL_ORIGIN, (8,)),
        (MINUS_SUPPORT, (2, 10)),
        (MINUS_CONTROL_SUPPORT, (0, 8)),
    ]


def test_probe_meta_must_name_the_update_turn_inside_its_support() -> None:
    turns = dialogue("a", "b", "c")
    with pytest.raises(InputError, match=r"meta\.origin_turn_id"):
        probe_plan(turns, {"s_transition_support": [2]}, "x", "y", "sgd", file="p.jsonl")
    with pytest.raises(InputError, match="does not contain the update turn 0"):
        probe_plan(turns, {"origin_turn_id": 0, "s_transition_support": [2]}, "x", "y", "sgd")
    with pytest.raises(InputError, match=r"turn index 7 outside 0\.\.2"):
        probe_plan(turns, {"origin_turn_id": 0, "s_transition_support": [0, 7]}, "x", "y", "sgd")


# --- the worked checks of the released rows (spec §4) ------------------------------------

WORKED = {
    "v20_sgd_66_00065__qa_02": {
        "origin": 26,
        "evidence": [25],
        "control_origin": [8],
        "control_transition_evidence_component": [19],
        "control_transition_support": [8, 19],
    },
    "v20_multiwoz_PMUL2677.json__qa_00": {
        "origin": 4,
        "evidence": [4],
        "control_origin": [0],
        "control_transition_evidence_component": [],
        "control_transition_support": [0],
    },
}
RELEASED_FIELDS = (
    "control_origin",
    "control_transition_support",
    "control_transition_origin_component",
    "control_transition_evidence_component",
    "transition_support_control_status",
    "transition_support_control_role_status",
)


@pytest.fixture(scope="module")
def released(release_dir: Path) -> dict[tuple[str, str], Any]:
    rows = list(read_released(release_dir / "probe_examples.jsonl"))
    return {"probes": released_probes(rows), "rows": rows}  # type: ignore[dict-item]


@pytest.mark.parametrize("probe_id", list(WORKED))
def test_released_worked_checks(released: dict[str, Any], probe_id: str) -> None:
    want = WORKED[probe_id]
    probe = released["probes"][(probe_id, "P3")]  # artifact "P3" = paper P2
    turns = probe.dialogue_turns()
    ds = "multiwoz" if probe.dataset == "multiwoz" else ""
    texts = [normalize_value(t.text, ds) for t in turns]
    assert list(evidence_turns(probe.new_value, texts, ds)) == want["evidence"]  # §3.12
    assert probe.meta["origin_turn_id"] == want["origin"]
    # The picker from the released turns, values and support.
    plan = probe_plan(turns, dict(probe.meta), probe.old_value, probe.new_value, probe.dataset)
    meta = plan.meta()
    for key in ("control_origin", "control_transition_evidence_component"):
        assert meta[key] == want[key]
    assert meta["control_transition_support"] == want["control_transition_support"]
    assert {k: meta[k] for k in RELEASED_FIELDS} == {k: probe.meta[k] for k in RELEASED_FIELDS}
    # The conditions: full context is the released prompt byte for byte; each deletion drops
    # exactly its turn blocks and keeps the others' [Tn] labels and the question.
    full_row = next(
        r
        for r in released["rows"]
        if r.dialogue_id == probe_id and r.probe_type == "P3" and r.method == "full_context"
    )
    _, contexts = deletion_contexts(probe)
    by_condition = {c.condition: c for c in contexts}
    assert list(by_condition) == [
        FULL,
        MINUS_ORIGIN,
        MINUS_CONTROL_ORIGIN,
        MINUS_SUPPORT,
        MINUS_CONTROL_SUPPORT,
    ]
    assert by_condition[FULL].prompt_user == full_row.prompt_user
    assert by_condition[FULL].prompt_system == full_row.prompt_system
    lines = full_row.compressed_text_used.split("\n")
    question = full_row.prompt_user.split("\n\nQuestion:")[1]
    for ctx in contexts:
        removed = set(ctx.removed_turn_ids)
        assert ctx.meta["removed_turn_ids"] == sorted(removed)
        assert ctx.compressed_text_used == "\n".join(
            line for i, line in enumerate(lines) if i not in removed
        )
        assert ctx.prompt_user.split("\n\nQuestion:")[1] == question
    assert by_condition[MINUS_CONTROL_SUPPORT].removed_turn_ids == tuple(
        want["control_transition_support"]
    )


# --- the params block ------------------------------------------------------------------------


def _raw(**deletions: Any) -> dict[str, Any]:
    return pipeline_params(grid=False, seeds=[42, 43], deletions=deletions)


def test_the_deletions_block_is_validated() -> None:
    params = parse_params(_raw(), "p.yaml")
    assert DELETIONS.of(params).enabled and DELETIONS.of(params).max_new_tokens == 128
    assert DELETIONS.of(params).sample_seed(params.seeds) == 42
    assert DELETIONS.of(parse_params(_raw(seed=43), "p.yaml")).sample_seed((42, 43)) == 43
    cases = {
        "deletions.seed": {"seed": 44},
        "deletions.enabled": {"enabled": "yes"},
        "deletions.max_new_tokens": {"max_new_tokens": 0},
        "'deletions'": {"max_tokens": 64},
    }
    for field, raw in cases.items():
        with pytest.raises(InputError, match=field):
            parse_params(_raw(**raw), "p.yaml")
