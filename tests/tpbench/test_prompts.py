"""Prompts (spec §3.8, byte exact), rendering (§3.9), template hash and task id (§6)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from compressbench.compress.render import render, render_markers, render_plain
from compressbench.corpora.model import SYSTEM, USER, Turn
from compressbench.tpbench.probe_types import PROBE_TYPES, by_artifact_name, get_probe_type
from compressbench.tpbench.prompts import (
    SYSTEM_PROMPT,
    build_prompt,
    question,
    task_id,
    template_sha16,
    user_prompt,
)

TURNS = [
    Turn(0, USER, "I need a hotel."),
    Turn(1, SYSTEM, "Which area?"),
    Turn(2, USER, "The east.\nWith parking."),
    Turn(3, SYSTEM, "Done."),
]


def test_system_prompt_verbatim() -> None:
    assert SYSTEM_PROMPT == (
        "You are reading a conversation that may be partial or compressed. Answer ONLY using the "
        "provided context. Reply with a single JSON object and no other text. Do not add "
        "markdown fences."
    )


def test_questions_verbatim() -> None:
    assert question("P2", "hotel area") == (
        "After the most recent change visible in the context, what is the user's CURRENT value "
        "for hotel area? Reply with one short value."
    )
    assert question("P3", "time") == (
        "In one short reply, state BOTH (a) the user's task in this conversation AND (b) the "
        'final value the user decided on for time. Format your answer as: "<task>; time: '
        '<final value>".'
    )
    assert question("P1").endswith(
        '(e.g. "book a hotel", "find a flight", "reserve a restaurant").'
    )
    with pytest.raises(KeyError):
        question("P4")


def test_user_prompt_layout() -> None:
    u = user_prompt("P1", "CTX")
    assert u.startswith("Context:\nCTX\n\nQuestion: What was the user's initial goal")
    assert u.endswith(
        '\n\nRequired JSON schema:\n{"value": <string>, "support": <verbatim span from context, '
        '<= 30 words>, "abstain": <true if you cannot tell, else false>}\n'
        "Reply with only the JSON object."
    )
    assert '{"value": <string in the format above>' in user_prompt("P3", "CTX", "x")


def test_released_prompts_byte_for_byte(release_dir: Path) -> None:
    rows = [json.loads(line) for line in (release_dir / "probe_examples.jsonl").open()]
    assert len(rows) == 27
    for row in rows:
        p = build_prompt(
            by_artifact_name(row["probe_type"]).name, row["compressed_text_used"], row["slot_human"]
        )
        assert p.system == row["prompt_system"]
        assert p.user == row["prompt_user"]


def test_probe_type_names() -> None:
    """Paper names, the released artifact's names, and lookups ignoring case."""
    artifact = {n: p.artifact_name for n, p in PROBE_TYPES.items() if p.artifact_name}
    assert artifact == {"P1": "P1", "P2": "P3", "P3": "P1_LATE"}
    assert by_artifact_name("P1_LATE") is PROBE_TYPES["P3"]
    assert by_artifact_name("P2") is None
    assert get_probe_type("p2_lme") is PROBE_TYPES["P2_LME"]
    with pytest.raises(KeyError, match=r"'P2_LME'; allowed: P1, P2, P3\W*$"):
        get_probe_type("P2_LME", pipeline=True)


def test_template_sha16_definition() -> None:
    expected_text = SYSTEM_PROMPT + "\n\n" + user_prompt("P2", "{context}", "event time")
    assert (
        template_sha16("P2", "event time")
        == hashlib.sha256(expected_text.encode()).hexdigest()[:16]
    )
    assert template_sha16("P2", "event time") != template_sha16("P2", "hotel area")
    assert template_sha16("P2", "time") != template_sha16("P3", "time")
    assert build_prompt("P2", "any context", "time").template_sha16 == template_sha16("P2", "time")


def test_task_id() -> None:
    p = build_prompt("P2", "ctx", "time")
    tid = task_id("sgd:1_00001:qa00", "recency", "P2", 0.3, p.template_sha16, p.system, p.user)
    prompt_hash = hashlib.sha256((p.system + "\n\n" + p.user).encode()).hexdigest()[:16]
    key = f"sgd:1_00001:qa00|recency|P2|0.3|{p.template_sha16}|{prompt_hash}"
    assert tid == hashlib.sha1(key.encode()).hexdigest()[:16]
    assert len(tid) == 16
    assert tid != task_id(
        "sgd:1_00001:qa00", "recency", "P2", 0.1, p.template_sha16, p.system, p.user
    )


def test_render_markers_keeps_indices_and_gaps() -> None:
    assert render_markers(TURNS, [0, 2]) == (
        "[T0] USER: I need a hotel.\n[T2] USER: The east.\nWith parking."
    )
    assert render(TURNS, [3, 1], "markers") == "[T1] SYSTEM: Which area?\n[T3] SYSTEM: Done."


def test_render_plain() -> None:
    assert render_plain(TURNS, [1, 0]) == "I need a hotel. Which area?"
    assert render(TURNS, [], "plain") == ""
    with pytest.raises(KeyError):
        render(TURNS, [0], "html")
