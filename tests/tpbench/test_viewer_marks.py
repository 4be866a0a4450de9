"""The turns that matter and a press's kept share per turn, on small hand-made inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from compressbench.compress.kv.positions import GAP
from compressbench.errors import InputError
from compressbench.tpbench.viewer.marks import press_heat, turn_marks, turn_spans

TURNS = [
    ["SYSTEM", "Hello, how can I help?"],
    ["USER", "Book a table in Rome for two."],
    ["SYSTEM", "Rome, for two. Anything else?"],
    ["USER", "Actually make it Paris."],
    ["SYSTEM", "Paris it is."],
]
CONTEXT = "\n".join(f"{s}: {t}" for s, t in TURNS)


def test_marks_name_goal_update_and_the_turns_of_each_value() -> None:
    meta = {"origin_turn_id": 3, "later_slot_update_turn_ids": []}
    marks = turn_marks(TURNS, meta, "Rome", "Paris", "sgd")
    assert marks == {"goal": [1], "update": [3], "later": [], "new": [3, 4], "old": [1, 2]}


def test_heat_is_the_share_of_each_turns_text_the_kept_runs_cover() -> None:
    assert turn_spans(CONTEXT, TURNS)[1] == (CONTEXT.index("Book"), CONTEXT.index("Book") + 29)
    kept = GAP.join(["Book a table in Rome for two.", "Paris it is."])
    heat = press_heat(CONTEXT, TURNS, {"kept_token_text": kept})
    assert heat is not None
    assert heat.shares == [0.0, 1.0, 0.0, 0.0, 1.0]
    assert (heat.runs, heat.runs_found) == (2, 2)
    half = press_heat(CONTEXT, TURNS, {"kept_token_text": "Paris it"})
    assert half is not None and half.shares[4] == round(8 / 12, 3)
    missing = press_heat(CONTEXT, TURNS, {"kept_token_text": "not in the context"})
    assert missing is not None and missing.runs_found == 0 and set(missing.shares) == {0.0}


def test_no_record_or_no_kept_tokens_draws_no_heat() -> None:
    assert press_heat(CONTEXT, TURNS, None) is None
    reason = {"kept_token_text": None, "kept_tokens_unavailable_reason": "masks per head"}
    assert press_heat(CONTEXT, TURNS, reason) is None


def test_a_scores_row_of_an_unknown_probe_names_file_record_and_field() -> None:
    from compressbench.tpbench.viewer.cases import CellRows, build_cases

    cell = CellRows(
        method="recency",
        contexts=[],
        scores=[{"probe_type": "P2", "seed": 42, "probe_id": "x:y:qa00", "scores": {}}],
        contexts_file=Path("c.jsonl"),
        scores_file=Path("s.jsonl"),
    )
    with pytest.raises(InputError, match=r"file s\.jsonl, record row 1, field 'probe_id'"):
        build_cases([], [cell], Path("p.jsonl"))


def test_a_press_answer_carries_its_heat_strip() -> None:
    from compressbench.tpbench.probes import ProbeRecord
    from compressbench.tpbench.viewer.cases import CellRows, build_cases

    probe = ProbeRecord(
        probe_id="b:d1:qa00",
        probe_type="P2",
        dataset="builtin",
        dialogue_id="d1",
        seed=42,
        ratio=0.3,
        slot="city",
        slot_human="city",
        old_value="Rome",
        new_value="Paris",
        gold="Paris",
        turns=tuple((s, t) for s, t in TURNS),
        meta={"origin_turn_id": 3},
    )
    key = {"probe_type": "P2", "seed": 42, "probe_id": probe.probe_id}
    context = {**key, "kept_turn_ids": [0, 1, 2, 3, 4], "kv": {"press": "SnapKVPress"}}
    context["compressed_text_used"] = CONTEXT
    scored = {
        **key,
        "prediction": "Paris",
        "output": '{"value": "Paris"}',
        "scores": {"strict": 1, "loose": 1},
        "kv_record": {"kept_token_text": GAP.join(["make it Paris.", "Paris it is."])},
    }
    cell = CellRows("snapkv", [context], [scored], Path("c.jsonl"), Path("s.jsonl"))
    (case,) = build_cases([probe], [cell], Path("p.jsonl"))
    answer = case["answers"]["snapkv"]
    assert answer["press"] and answer["kind"] == "correct"
    assert answer["heat"]["shares"] == [0.0, 0.0, 0.0, round(14 / 23, 3), 1.0]
