"""Answer-retention diagnostic: phrase-bounded survival of the current value and the goal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compressbench.cli import main
from compressbench.compress.method import Source
from compressbench.compress.registry import get_method
from compressbench.corpora.loaders import load_corpus
from compressbench.corpora.model import USER, Dialogue, Turn
from compressbench.readers.base import ChatRequest
from compressbench.tpbench.retention import retention_rows, slot_type, survives
from compressbench.tpbench.transitions import dialogue_transitions

POSITIONAL = ["full_context", "recency", "first_n", "random_seed42", "uniform_stride"]


@pytest.mark.parametrize(
    ("slot", "group"),
    [
        ("event_time", "time"),
        ("train-leaveat", "time"),
        ("date", "date"),
        ("restaurant-book day", "date"),
        ("city", "place/name"),
        ("restaurant_name", "place/name"),
        ("number_of_seats", "other"),
        ("price_range", "other"),
    ],
)
def test_slot_type_groups(slot: str, group: str) -> None:
    assert slot_type(slot) == group


def test_survives_uses_normalisation_and_phrase_boundaries() -> None:
    assert survives("12:45 pm", "see you at 12:45 PM then", "sgd")
    assert survives("guesthouse", "a nice guest house", "multiwoz")
    assert not survives("guesthouse", "a nice guest house", "sgd")
    assert not survives("park", "two parks nearby", "sgd")
    assert not survives("", "anything", "sgd")


def test_kept_text_has_no_markers() -> None:
    turns = (Turn(0, USER, "I need a user manual"), Turn(1, "SYSTEM", "Sure."))
    method = get_method("full_context")
    source = Source(turns, key="x")
    kept = method.retained_text(source, 1.0, lambda text: ChatRequest("x", "", text), None)
    assert kept == "I need a user manual\nSure."
    assert method.compress(Source(turns, key="x"), 1.0).text.startswith("[T0] USER: ")


@pytest.fixture(scope="module")
def builtin_rows() -> list[dict]:
    return retention_rows(load_corpus("builtin"), POSITIONAL, [0.1, 0.3, 0.5, 0.7])


def test_full_context_retention_is_bounded_evidence(builtin_rows: list[dict]) -> None:
    """In the full context the value survives iff it has a phrase-bounded evidence turn."""
    events = [t for d in load_corpus("builtin") for t in dialogue_transitions(d) if t.p2_eligible]
    expected = sum(bool(t.s_evidence) for t in events) / len(events)
    for row in builtin_rows:
        if row["method"] == "full_context":
            assert row["n"] == len(events)
            assert row["p2_retention"] == pytest.approx(expected)


def test_recency_retention_grows_with_the_budget(builtin_rows: list[dict]) -> None:
    rec = [r for r in builtin_rows if r["method"] == "recency"]
    values = [r["p2_retention"] for r in sorted(rec, key=lambda r: r["ratio"])]
    assert values == sorted(values)
    assert values[0] < values[-1]


def test_first_n_always_keeps_the_goal(builtin_rows: list[dict]) -> None:
    for row in builtin_rows:
        if row["method"] == "first_n":
            assert row["p3_goal_retention"] == 1.0
            assert row["p3_joint_retention"] <= row["p3_goal_retention"]


def test_slot_type_counts_cover_every_item(builtin_rows: list[dict]) -> None:
    for row in builtin_rows:
        assert sum(g["n"] for g in row["by_slot_type"].values()) == row["n"]


def test_retention_cli(tmp_path: Path, capsys) -> None:
    out = tmp_path / "ret.jsonl"
    args = ["--corpus", "builtin", "--methods", "recency,first_n", "--ratios", "0.3"]
    rc = main(["retention", *args, "--output", str(out)])
    assert rc == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["method"], r["ratio"]) for r in rows] == [("recency", 0.3), ("first_n", 0.3)]
    for r in rows:
        assert {"n", "p2_retention", "p3_goal_retention", "p3_joint_retention", "seconds"} <= set(r)
        assert sum(g["n"] for g in r["by_slot_type"].values()) == r["n"]
    printed = capsys.readouterr().out
    assert "| dataset | method | r | time | date | place/name | other |" in printed
    recency = rows[0]["by_slot_type"]["date"]
    assert f"{recency['p2_retention']:.3f} ({recency['n']})" in printed


@pytest.mark.slow
def test_kv_press_retention_is_measured_on_kept_tokens() -> None:
    """A press keeps a fraction of the cache: retention is read off the decoded kept tokens."""
    from compressbench.readers.registry import get_reader
    from compressbench.tpbench.retention import method_kept_text
    from compressbench.tpbench.retention_reader import LazyReader

    dialogue: Dialogue = next(
        d for d in load_corpus("builtin") if any(t.p2_eligible for t in dialogue_transitions(d))
    )
    reader = LazyReader(lambda: get_reader("hf"))
    fn = method_kept_text(get_method("snapkv"), reader)
    t = next(t for t in dialogue_transitions(dialogue) if t.p2_eligible)
    small, large = fn(dialogue, t, 0.1), fn(dialogue, t, 0.7)
    assert 0 < len(small) < len(large)
    rows = retention_rows([dialogue], ["snapkv"], [0.1, 0.7], kept_text_fns={"snapkv": fn})
    assert [r["ratio"] for r in rows] == [0.1, 0.7]
    assert rows[0]["p2_retention"] <= rows[1]["p2_retention"]
    # the same rows when the method is built from the registry and runs on the reader
    built = retention_rows([dialogue], ["snapkv"], [0.1, 0.7], reader=reader)
    assert [{k: v for k, v in r.items() if k != "seconds"} for r in built] == [
        {k: v for k, v in r.items() if k != "seconds"} for r in rows
    ]
