"""The turning-point compressor and reader-token budgets: exact budget arithmetic, never reading
annotations, faithful output, the stale-value rule, token budgets for every turn selector, the
retention rows and the ``compress`` command (bad input included)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from compressbench.cli import main
from compressbench.compress.budgets import READER_TOKENS, token_budget
from compressbench.compress.method import Source
from compressbench.compress.reader_tokens import full_dialogue_tokens, reader_counter
from compressbench.compress.registry import get_method
from compressbench.compress.render import render_markers
from compressbench.compress.token_budget import with_budget_unit
from compressbench.compress.turning_point.features import mentions
from compressbench.compress.turning_point.segments import turn_spans
from compressbench.corpora.loaders import load_corpus
from compressbench.corpora.model import SYSTEM, USER, Dialogue, Turn
from compressbench.tpbench.retention import retention_rows

RATIOS = [0.05, 0.1, 0.3, 0.5, 0.7, 1.0]
LABEL = re.compile(r"^(USER|SYSTEM): ")


@pytest.fixture(scope="module")
def builtin() -> list[Dialogue]:
    return list(load_corpus("builtin"))


@pytest.fixture(scope="module")
def count():  # the offline reader's tokenizer
    return reader_counter()


@pytest.mark.parametrize(
    ("full", "ratio", "budget"),
    [(10, 0.3, 3), (10, 0.7, 7), (321, 0.1, 32), (229, 0.3, 68), (19, 1.0, 19), (5, 0.1, 0)],
)
def test_token_budget_is_the_floor_of_r_times_full(full: int, ratio: float, budget: int) -> None:
    assert token_budget(full, ratio) == budget  # 0.3 * 10 = 3.0000000000000004, 0.7 * 10 < 7


def test_token_budget_rejects_impossible_inputs() -> None:
    with pytest.raises(ValueError, match="ratio"):
        token_budget(10, 1.5)


def test_turning_point_never_exceeds_the_budget(builtin: list[Dialogue], count) -> None:
    method = get_method("turning_point")
    for d in builtin:
        full = full_dialogue_tokens(d.turns, count)
        assert full == count(render_markers(d.turns, range(len(d.turns))))
        for r in RATIOS:
            comp = method.compress(Source(d.turns, key=d.dialogue_id), r)
            assert comp.budget == int(r * full + 1e-9) == comp.record["budget"]
            assert count(comp.text) == comp.record["kept_tokens"] <= comp.budget
            assert comp.budget_unit == comp.record["budget_unit"] == READER_TOKENS


def test_every_turn_selector_keeps_within_a_token_budget(builtin: list[Dialogue], count) -> None:
    for name in ("recency", "first_n", "random_seed42", "uniform_stride", "first_user_recent"):
        method = with_budget_unit(get_method(name), READER_TOKENS)
        assert method.budget_unit == READER_TOKENS
        for d in builtin[:12]:
            for r in RATIOS:
                comp = method.compress(Source(d.turns, key=d.dialogue_id), r)
                assert count(comp.text) == comp.record["kept_tokens"] <= comp.budget
                if len(comp.kept_ids) < len(d.turns):  # the next larger selection would not fit
                    bigger = get_method(name).selector.select(  # type: ignore[attr-defined]
                        d.turns, len(comp.kept_ids) + 1, d.dialogue_id
                    )
                    assert count(render_markers(d.turns, bigger)) > comp.budget
    full = with_budget_unit(get_method("full_context"), READER_TOKENS)  # the reference stays
    assert full.budget_unit == "dialogue_turns"


def strip_state(d: Dialogue) -> Dialogue:
    return replace(d, turns=tuple(replace(t, state=None) for t in d.turns))


def scramble_state(d: Dialogue) -> Dialogue:
    bogus = {"Svc:slot": ("a value that never occurs",)}
    return replace(d, turns=tuple(replace(t, state=bogus) for t in d.turns))


def test_turning_point_never_reads_annotations(builtin: list[Dialogue]) -> None:
    method = get_method("turning_point")
    for d in builtin:
        for r in (0.1, 0.3, 0.5):
            out = [
                method.compress(Source(x.turns, key=d.dialogue_id), r)
                for x in (d, strip_state(d), scramble_state(d))
            ]
            assert out[0] == out[1] == out[2]


def test_output_is_a_faithful_labelled_subset_in_order(builtin: list[Dialogue]) -> None:
    method = get_method("turning_point")
    for d in builtin:
        comp = method.compress(Source(d.turns, key=d.dialogue_id), 0.3)
        kept = [d.turns[i] for i in comp.kept_ids]
        lines = comp.text.split("\n") if comp.text else []
        assert len(lines) == len(kept)
        for line, turn in zip(lines, kept, strict=True):
            assert LABEL.match(line) and line.startswith(f"{turn.speaker}: ")
            position = 0
            for piece in line.split(": ", 1)[1].split(" … "):
                found = turn.text.find(piece, position)  # verbatim, in the turn's order
                assert found >= 0, (piece, turn.text)
                position = found + len(piece)
        assert comp.kept_text == "\n".join(line.split(": ", 1)[1] for line in lines)


def test_turn_labels_are_an_option_and_plain_rendering_drops_labels(builtin) -> None:
    d = builtin[0]
    comp = get_method("turning_point", {"labels": "turn"}).compress(Source(d.turns, key="k"), 0.5)
    assert all(re.match(r"^\[T\d+\] (USER|SYSTEM): ", line) for line in comp.text.split("\n"))
    plain = get_method("turning_point").compress(Source(d.turns, key="k", render="plain"), 0.5)
    assert plain.text == " ".join(plain.kept_text.split("\n")) and plain.render == "plain"


def test_the_whole_dialogue_is_kept_at_r_1(builtin: list[Dialogue]) -> None:
    d = builtin[0]
    comp = get_method("turning_point").compress(Source(d.turns, key="k"), 1.0)
    assert comp.kept_text == "\n".join(t.text.strip() for t in d.turns)


REVISED = (
    Turn(0, USER, "I need a table for two at Sino in San Jose at 7 pm tonight."),
    Turn(1, SYSTEM, "Sure. Please confirm: a table for 2 at Sino at 7 pm today."),
    Turn(2, USER, "Actually, can you change it to 8:30 pm?"),
    Turn(3, SYSTEM, "Please confirm: a table for 2 at Sino at 8:30 pm today."),
    Turn(4, USER, "Yes, that works. Is it expensive?"),
    Turn(5, SYSTEM, "Your table is booked. It is moderately priced."),
    Turn(6, USER, "Thanks, that is all."),
    Turn(7, SYSTEM, "Enjoy your meal!"),
)


def test_a_kept_old_value_comes_with_its_revision() -> None:
    """Outside the goal (always kept first, see ``select``), a kept "7 pm" brings "8:30 pm"."""
    method = get_method("turning_point")
    goal = REVISED[0].text
    for r in (0.2, 0.3, 0.4, 0.5, 0.7):
        kept = method.compress(Source(REVISED, key="k"), r).kept_text
        assert kept.startswith(goal)
        if "7 pm" in kept.removeprefix(goal):
            assert "8:30 pm" in kept, (r, kept)
    assert "8:30 pm" in method.compress(Source(REVISED, key="k"), 0.4).kept_text


@pytest.mark.parametrize(
    ("text", "units", "spans"),
    [
        (
            "I want a 4.0 rated house. Please find one in San Jose, CA, for 2 people.",
            "clause",
            ["I want a 4.0 rated house.", "Please find one in San Jose, CA,", "for 2 people."],
        ),
        (
            "Book it for half past 11 in the morning.",
            "phrase",
            ["Book it", "for half past 11 in the morning."],
        ),
        ("Call 7 p.m. tomorrow. Then stop!", "sentence", ["Call 7 p.m. tomorrow.", "Then stop!"]),
    ],
)
def test_segments_never_cut_a_value(text: str, units: str, spans: list[str]) -> None:
    assert [text[a:b] for a, b in turn_spans(text, goal=False, units=units)] == spans


def test_the_goal_segment_follows_the_naive_first_sentence_rule() -> None:
    text = "I want a 4.0 rated house. Thanks."
    first = turn_spans(text, goal=True, units="phrase")[0]
    assert text[first[0] : first[1]] == "I want a 4."


def test_value_like_mentions() -> None:
    found = [
        (m.kind, m.text)
        for m in mentions(
            "Please confirm: a table for 2 people at Sino in San Jose at 11:30 am today. "
            "Have a good one."
        )
    ]
    assert found == [
        ("number", "2 people"),
        ("name", "sino"),
        ("name", "san jose"),
        ("time", "11:30 am"),
        ("date", "today"),
    ]


def test_retention_rows_record_the_budget_unit_and_stale_values(builtin) -> None:
    rows = retention_rows(
        builtin, ["full_context", "recency", "turning_point"], [0.3], budget_unit=READER_TOKENS
    )
    units = {(r["method"], r["budget_unit"]) for r in rows}
    assert units == {
        ("full_context", "dialogue_turns"),
        ("recency", READER_TOKENS),
        ("turning_point", READER_TOKENS),
    }
    tp = next(r for r in rows if r["method"] == "turning_point")
    assert tp["n_stale"] >= 1 and 0.0 <= tp["stale_revision_kept"] <= 1.0
    full = next(r for r in rows if r["method"] == "full_context")  # keeps every old value
    assert full["n_stale"] >= tp["n_stale"] and full["stale_revision_kept"] == 1.0


def test_compress_command_writes_one_row_per_dialogue(tmp_path: Path, count) -> None:
    out = tmp_path / "tp.jsonl"
    assert (
        main(
            [
                "compress",
                "--corpus",
                "builtin",
                "--method",
                "turning_point",
                "--ratio",
                "0.3",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    dialogues = list(load_corpus("builtin"))
    assert [r["dialogue_id"] for r in rows] == [d.dialogue_id for d in dialogues]
    for row, d in zip(rows, dialogues, strict=True):
        assert set(row) == {
            "dataset",
            "split",
            "dialogue_id",
            "method",
            "ratio",
            "budget_unit",
            "compressed_text",
            "full_tokens",
            "kept_tokens",
        }
        assert (row["method"], row["ratio"], row["budget_unit"]) == (
            "turning_point",
            0.3,
            READER_TOKENS,
        )
        assert row["full_tokens"] == full_dialogue_tokens(d.turns, count)
        assert (
            row["kept_tokens"]
            == count(row["compressed_text"])
            <= int(0.3 * row["full_tokens"] + 1e-9)
        )
    turns = tmp_path / "recency.jsonl"
    args = ["compress", "--corpus", "builtin", "--method", "recency", "--ratio", "0.5"]
    assert main([*args, "--output", str(turns), "--budget-unit", "dialogue_turns"]) == 0
    assert {json.loads(x)["budget_unit"] for x in turns.read_text().splitlines()} == {
        "dialogue_turns"
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ("--method no_such --ratio 0.3", "unknown method 'no_such'"),
        ("--method recency --ratio 1.5", "ratio 1.5 is not in (0, 1]"),
        ("--method recency --ratio 0.3 --budget-unit words", "invalid choice: 'words'"),
        ("--method recency --ratio 0.3 --path {tmp}/nowhere", "corpus path does not exist"),
        ("--method turning_point --ratio 0.3 --params {tmp}/params.yaml", "scorer"),
    ],
)
def test_compress_bad_input_is_one_line_exit_2_and_no_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: str, message: str
) -> None:
    (tmp_path / "params.yaml").write_text(
        "corpora: {builtin: {source: builtin}}\ndatasets: [builtin]\nmethods: [turning_point]\n"
        f"method_params: {{turning_point: {{scorer: {tmp_path}/missing.json}}}}\n"
    )
    out = tmp_path / "out.jsonl"
    args = [
        "compress",
        "--corpus",
        "builtin",
        *argv.format(tmp=tmp_path).split(),
        "--output",
        str(out),
    ]
    try:
        code = main(args)
    except SystemExit as exc:  # argparse rejects before the command runs
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "Traceback" not in err
    assert not out.exists()
