"""Probe pool, sampling (spec §3.6), records (§3.7) and per-method contexts."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from compressbench.corpora.model import SYSTEM, USER, Dialogue, State, Turn
from compressbench.errors import InputError
from compressbench.tpbench.candidates import candidate_pool
from compressbench.tpbench.contexts import build_context, probe_context
from compressbench.tpbench.probe_types import PROBE_TYPES
from compressbench.tpbench.probes import (
    Cell,
    ProbeRecord,
    build_probes,
    cells,
    make_probe,
    read_probes,
)
from compressbench.tpbench.prompts import template_sha16, user_prompt

sample_p1, sample_p2, sample_p3 = (PROBE_TYPES[p].sample for p in ("P1", "P2", "P3"))

KEY = "Hotels_1:area"


def make_dialogue(
    i: int, n_turns: int, origin_user: int, old: str, new: str, split: str = "train"
) -> Dialogue:
    """A dialogue whose USER turn ``origin_user`` changes ``KEY`` from ``old`` to ``new``."""
    turns = []
    u = 0
    for t in range(n_turns):
        if t % 2 == 0:
            value = new if u >= origin_user else old
            text = "Can you find a hotel? Thanks." if t == 0 else f"go {value}"
            state: State = {KEY: (value,)}
            turns.append(Turn(t, USER, text, state))
            u += 1
        else:
            turns.append(Turn(t, SYSTEM, f"system {t}"))
    return Dialogue("sgd", f"{i}_{i:05d}", tuple(turns), split=split, source="f.json")


def corpus() -> list[Dialogue]:
    out = []
    for i in range(40):
        if i % 4 == 0:
            out.append(make_dialogue(i, 12, 4, "north", "south"))  # P2 + P3 eligible
        elif i % 4 == 1:
            out.append(make_dialogue(i, 12, 1, "Atlanta", "Atlanta, GA"))  # alias, early
        elif i % 4 == 2:
            out.append(make_dialogue(i, 8, 2, "east", "west"))  # P2 only (short)
        else:
            out.append(make_dialogue(i, 6, 0, "east", "east"))  # no change
    return out


POOL = candidate_pool(corpus())


def test_pool_ids_and_order() -> None:
    assert len(POOL) == 30
    assert POOL[0].probe_id == "sgd:0_00000:qa00"
    assert [c.dialogue.dialogue_id for c in POOL[:3]] == ["0_00000", "1_00001", "2_00002"]


def test_duplicate_ids_across_splits_are_an_error() -> None:
    d = make_dialogue(0, 12, 4, "north", "south")
    e = make_dialogue(0, 12, 4, "north", "south", split="test")
    with pytest.raises(InputError, match="one split at a time"):
        candidate_pool([d, e])


def test_p1_p2_share_one_shuffle() -> None:
    p1 = sample_p1(POOL, 42, 20)
    shuffled = list(POOL)
    random.Random(42).shuffle(shuffled)
    assert [c.probe_id for c in p1] == [c.probe_id for c in shuffled[:20]]
    p2 = sample_p2(POOL, 42, 20)
    assert [c.probe_id for c in p2] == [c.probe_id for c in p1 if c.transition.p2_eligible]
    assert all(not c.transition.alias_equivalent for c in p2)
    assert len(sample_p1(POOL, 42, 1000)) == len(POOL)  # all when the pool is smaller


def test_p3_sample_sorted() -> None:
    eligible = sorted(c.probe_id for c in POOL if c.transition.p3_eligible)
    assert len(eligible) == 10
    p3 = sample_p3(POOL, 43, 4)
    ids = [c.probe_id for c in p3]
    assert ids == sorted(random.Random(43).sample(eligible, 4))
    assert [c.probe_id for c in sample_p3(POOL, 43, 200)] == eligible


def test_records_and_golds() -> None:
    c = next(c for c in POOL if c.transition.p3_eligible)
    p1 = make_probe(c, "P1", 42, 0.3)
    assert p1.gold == "Can you find a hotel"
    assert p1.artifact_probe_type == "P1"
    p2 = make_probe(c, "P2", 42, 0.3)
    assert (p2.gold, p2.gold_value, p2.slot, p2.slot_human) == ("south", "south", "area", "area")
    assert p2.artifact_probe_type == "P3"
    assert p2.meta["s_origin"] == [8]
    assert p2.meta["s_evidence"] == p2.meta["s_transition_support"] == [8, 10]
    assert p2.meta["k_turns"] == 4 and p2.meta["n_turns"] == 12
    p3 = make_probe(c, "P3", 44, 0.3)
    assert p3.gold_story_label == "find a hotel"
    assert p3.gold == "find a hotel; area: south"
    assert p3.artifact_probe_type == "P1_LATE"
    assert p3.meta["rel_origin"] == pytest.approx(8 / 11)
    assert p3.meta["origin_turn_id"] == 8 and p3.meta["is_final_slot_update"] is True


def test_record_round_trip_and_validation() -> None:
    rec = make_probe(POOL[0], "P2", 42, 0.1)
    assert ProbeRecord.from_row(rec.to_row()) == rec
    bad = rec.to_row()
    bad["probe_type"] = "P9"
    with pytest.raises(InputError, match="probe_type"):
        ProbeRecord.from_row(bad, file="p.jsonl", record="row 3")
    bad = rec.to_row()
    bad["turns"][0] = ["BOT", "x"]
    with pytest.raises(InputError, match=r"turns\[0\]"):
        ProbeRecord.from_row(bad)
    bad = rec.to_row()
    del bad["gold"]
    with pytest.raises(InputError, match="gold"):
        ProbeRecord.from_row(bad)


def test_cells_and_build() -> None:
    grid = cells(["P1", "P2", "P3"], [42, 43], [0.1, 0.3], {"P1": [0.3], "P3": [0.3]})
    assert grid[0] == Cell("P1", 42, 0.3)
    assert len(grid) == 2 + 4 + 2
    rows = list(build_probes(POOL, grid, n=200))
    by_cell: dict[tuple[str, int, float], int] = {}
    for r in rows:
        by_cell[(r.probe_type, r.seed, r.ratio)] = (
            by_cell.get((r.probe_type, r.seed, r.ratio), 0) + 1
        )
    assert by_cell[("P1", 42, 0.3)] == 30
    assert by_cell[("P2", 43, 0.1)] == 20
    assert by_cell[("P3", 43, 0.3)] == 10
    with pytest.raises(InputError):
        cells(["P4"], [1], [0.3])


def test_build_context_positional_and_forced_render() -> None:
    c = next(c for c in POOL if c.transition.p3_eligible)
    probe = make_probe(c, "P2", 42, 0.3)
    ctx = probe_context(probe, "recency")
    assert ctx.k_turns == 4 and ctx.kept_turn_ids == (8, 9, 10, 11)
    assert ctx.render == "markers"
    assert ctx.compressed_text_used.startswith("[T8] USER: go south\n[T9] SYSTEM: system 9")
    assert ctx.prompt_user == user_prompt("P2", ctx.compressed_text_used, "area")
    assert ctx.template_sha16 == template_sha16("P2", "area")
    plain = probe_context(probe, "recency", render_mode="plain")
    assert plain.compressed_text_used == "go south system 9 go south system 11"
    assert plain.task_id != ctx.task_id
    assert ctx.to_row()["compressed_text_chars"] == len(ctx.compressed_text_used)
    full = probe_context(probe, "full_context")
    assert full.kept_turn_ids == tuple(range(12))


def test_build_context_uses_probe_id_for_random() -> None:
    turns: Sequence[Turn] = tuple(Turn(i, (USER, SYSTEM)[i % 2], f"t{i}") for i in range(30))
    ctx = build_context(
        probe_id="v20_sgd_66_00065__qa_02",
        probe_type="P2",
        turns=turns,
        ratio=0.3,
        method="random_seed42",
        slot_human="event time",
    )
    assert ctx.kept_turn_ids == (0, 1, 3, 5, 10, 16, 18, 21, 25)


def test_builtin_corpus_gives_enough_probes() -> None:
    from compressbench.corpora.loaders import load_corpus

    pool = candidate_pool(load_corpus("builtin"))
    assert pool, "the built-in corpus must have change events"
    for seed in (42, 43, 44):
        assert len(sample_p2(pool, seed, 200)) >= 20
        assert len(sample_p3(pool, seed, 200)) >= 10


def test_probes_cli_is_deterministic(tmp_path: Path) -> None:
    from compressbench.cli import main

    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    argv = ["probes", "--corpus", "builtin", "--seeds", "42,43", "--ratios", "0.1,0.3"]
    argv += ["--ratio-override", "p3=0.3", "--n", "30"]
    assert main([*argv, "--output", str(a)]) == 0
    assert main([*argv, "--output", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()
    rows = list(read_probes(a))
    assert {r.probe_type for r in rows} <= {"P1", "P2", "P3"}
    assert {r.ratio for r in rows if r.probe_type == "P3"} <= {0.3}
    assert all(r.meta["sample_seed"] == r.seed for r in rows)


def test_probes_cli_needs_one_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from compressbench.cli import main

    with pytest.raises(SystemExit) as exc:  # argparse: one line, exit 2
        main(["probes", "--output", str(tmp_path / "x.jsonl")])
    assert exc.value.code == 2
    assert "one of the arguments --corpus --released is required" in capsys.readouterr().err


@pytest.mark.corpora
def test_a_smaller_sample_is_part_of_the_larger_one_on_sgd(corpora_dir: Path) -> None:
    """configs/studies/sgd_cpu_first_pass.yaml relies on it: the probes of n_per_cell 20 are
    probes of n_per_cell 100 too (same seed), so the first pass's answers serve the study."""
    from compressbench.corpora.loaders import load_corpus

    pool = candidate_pool(load_corpus("sgd", corpora_dir / "sgd", ["test"]))
    for sample in (sample_p1, sample_p2, sample_p3):
        small = {c.probe_id for c in sample(pool, 42, 20)}
        large = {c.probe_id for c in sample(pool, 42, 100)}
        assert small and small < large, sample.__name__
