"""Released probe rows as a probe source, and ``compressbench tpbench-replay`` byte for byte."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compressbench.cli import main
from compressbench.compress.render import render_markers
from compressbench.compress.selectors import SELECTORS
from compressbench.corpora.model import SYSTEM, USER, Turn
from compressbench.errors import InputError
from compressbench.jsonl import read_jsonl
from compressbench.tpbench.released import (
    parse_marked_context,
    parse_row,
    read_released,
    released_probes,
    source_dialogue_id,
)
from compressbench.tpbench.replay import replay, resolve_method

POSITIONAL = {"full_context", "recency", "random_seed42", "first_n", "uniform_stride"}


def released_rows(release_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (release_dir / "probe_examples.jsonl").open()]


def test_cli_replay_matches_every_positional_row(release_dir: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "replay.jsonl"
    rc = main(
        [
            "tpbench-replay",
            "--input",
            str(release_dir / "probe_examples.jsonl"),
            "--output",
            str(out),
            "--fail-on-mismatch",
            "--methods",
            ",".join(POSITIONAL),
        ]
    )
    assert rc == 0
    released = released_rows(release_dir)
    rows = list(read_jsonl(out))
    assert len(rows) == len(released) == 27
    n_positional = 0
    for got, want in zip(rows, released, strict=True):
        assert (got["dialogue_id"], got["method"], got["probe_type"]) == (
            want["dialogue_id"],
            want["method"],
            want["probe_type"],
        )
        if want["method"] in POSITIONAL:
            n_positional += 1
            assert got["match"] is True
            for field in ("compressed_text_used", "prompt_system", "prompt_user"):
                assert got[field] == want[field]
        else:
            assert got["match"] is None
            assert got["reason"] == "method not requested (--methods)"
    assert n_positional == 20
    printed = capsys.readouterr().out
    assert "all: match 20, not rebuilt 7" in printed


def fake_content_selector(name: str, select: Callable[..., list[int]]) -> Callable[[], Any]:
    """Factory of a stand-in content-aware selector (floor budget, plain rendering)."""

    class Fake:
        budget_rule = "floor"
        published_render = "plain"

        def __init__(self) -> None:
            self.name = name

        def select(self, turns: Any, k: int, probe_id: str) -> list[int]:
            return select(turns, k, probe_id)

    return Fake


def test_replay_tries_content_aware_selectors_once_registered(
    release_dir: Path, monkeypatch
) -> None:
    first_k = fake_content_selector("attention_h2o", lambda turns, k, _: list(range(k)))
    monkeypatch.setitem(SELECTORS, "attention_h2o", first_k)
    assert resolve_method("attention_h2o_cache") == ("attention_h2o", "")
    rows = list(read_released(release_dir / "probe_examples.jsonl"))
    recs = [
        r
        for r in replay(rows, methods={"attention_h2o_cache"})
        if r.method == "attention_h2o_cache"
    ]
    assert len(recs) == 3
    assert all(r.match is not None for r in recs)  # tried, compared
    assert all("[T" not in (r.compressed_text_used or "") for r in recs)  # plain rendering
    # n=8, k=floor(8*0.3)=2: the released H2O row kept turns 0 and 1, as this fake does.
    assert [r.match for r in recs] == [False, True, False]


def test_unregistered_or_failing_selectors_get_a_reason(release_dir: Path, monkeypatch) -> None:
    def broken(turns: Any, k: int, probe_id: str) -> list[int]:
        raise OSError("no local encoder")

    monkeypatch.delitem(SELECTORS, "attention_h2o", raising=False)
    monkeypatch.setitem(SELECTORS, "embedding_mmr", fake_content_selector("embedding_mmr", broken))
    rows = list(read_released(release_dir / "probe_examples.jsonl"))
    recs = {
        r.method: r for r in replay(rows, methods={"attention_h2o_cache", "embedding_mmr_cache"})
    }
    assert recs["llmlingua2_cache"].reason == "method not requested (--methods)"
    assert recs["attention_h2o_cache"].match is None
    assert "not registered" in recs["attention_h2o_cache"].reason
    assert recs["embedding_mmr_cache"].match is None
    assert "unavailable: OSError: no local encoder" in recs["embedding_mmr_cache"].reason


def test_a_failing_selector_is_tried_once(release_dir: Path, monkeypatch) -> None:
    calls: list[str] = []

    def offline(turns: Any, k: int, probe_id: str) -> list[int]:
        calls.append(probe_id)
        raise OSError("offline")

    monkeypatch.setitem(SELECTORS, "attention_h2o", fake_content_selector("attention_h2o", offline))
    rows = list(read_released(release_dir / "probe_examples.jsonl"))
    recs = [r for r in replay(rows, methods={"attention_h2o_cache"})]
    h2o = [r for r in recs if r.method == "attention_h2o_cache"]
    assert len(h2o) == 3 and all(r.match is None and "offline" in r.reason for r in h2o)
    assert len(calls) == 1


def test_resolve_method_reasons() -> None:
    assert resolve_method("recency") == ("recency", "")
    assert resolve_method("snapkv_r03_kvpress")[0] is None
    assert "KV-cache" in resolve_method("snapkv_r03_kvpress")[1]
    assert "deletion" in resolve_method("cf_origin_minus_origin")[1]
    assert resolve_method("mystery")[0] is None


def test_mismatch_is_reported(release_dir: Path, tmp_path: Path) -> None:
    rows = released_rows(release_dir)
    rows[1]["compressed_text_used"] += "!"
    src = tmp_path / "tampered.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    argv = ["tpbench-replay", "--input", str(src), "--output", str(out)]
    argv += ["--methods", ",".join(POSITIONAL)]  # content-aware methods would load models
    assert main(argv) == 0
    got = list(read_jsonl(out))
    assert got[1]["match"] is False and got[1]["mismatched"] == ["compressed_text_used"]
    assert main([*argv, "--fail-on-mismatch"]) == 1


def test_missing_full_context_row_is_not_skipped(release_dir: Path) -> None:
    rows = [
        r
        for r in read_released(release_dir / "probe_examples.jsonl")
        if not (r.method == "full_context" and r.probe_type == "P1_LATE")
    ]
    recs = list(replay(rows, methods=POSITIONAL))
    late = [r for r in recs if r.probe_type == "P1_LATE"]
    assert late and all(r.match is None and "full_context" in r.reason for r in late)


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda r: r.pop("method"), "method"),
        (lambda r: r.update(probe_type="P2"), "probe_type"),
        (lambda r: r.update(meta={"n_turns": 3}), "meta.ratio"),
        (lambda r: r.update(slot_human=3), "slot_human"),
        (lambda r: r.update(compressed_text_used="garbage"), "compressed_text_used"),
    ],
)
def test_bad_rows_are_located_errors(
    release_dir: Path, tmp_path: Path, capsys, mutate, field
) -> None:
    rows = released_rows(release_dir)
    mutate(rows[0])
    src = tmp_path / "bad.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    assert main(["tpbench-replay", "--input", str(src), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"file {src}" in err and "record line 1" in err and repr(field) in err
    assert not out.exists()


def test_parse_marked_context_round_trips_newlines() -> None:
    turns = (
        Turn(0, USER, "Hi"),
        Turn(1, SYSTEM, "\nHello, What is your location?"),
        Turn(2, USER, "Are there other times?\n"),
        Turn(3, SYSTEM, "Options-\n1. Dumbo\n2. Hellboy"),
        Turn(4, USER, ""),
    )
    text = render_markers(turns, range(5))
    assert parse_marked_context(text) == turns
    assert parse_marked_context("[T0] USER: a\n[T5] SYSTEM: b") == (
        Turn(0, USER, "a"),
        Turn(5, SYSTEM, "b"),
    )
    with pytest.raises(ValueError):
        parse_marked_context("no marker")


def test_released_probes(release_dir: Path) -> None:
    probes = released_probes(read_released(release_dir / "probe_examples.jsonl"))
    assert len(probes) == 4
    p = probes[("v20_sgd_66_00065__qa_02", "P3")]
    assert p.probe_type == "P2" and p.probe_id == "v20_sgd_66_00065__qa_02"
    assert p.dialogue_id == "66_00065" and p.n_turns == 30 and p.gold == "12:45 pm"
    p3 = probes[("v20_multiwoz_MUL0084.json__qa_00", "P1_LATE")]
    assert p3.probe_type == "P3" and p3.seed == 42 and p3.dialogue_id == "MUL0084.json"
    assert p3.gold_value == "italian"
    assert source_dialogue_id("v20_multiwoz_PMUL2677.json__qa_00", "multiwoz") == "PMUL2677.json"


def test_parse_row_rejects_bad_ratio() -> None:
    row: dict[str, Any] = {
        k: "x"
        for k in (
            "dialogue_id",
            "dataset",
            "method",
            "compressed_text_used",
            "prompt_system",
            "prompt_user",
        )
    }
    row["probe_type"] = "P1"
    row["meta"] = {"ratio": 1.5}
    with pytest.raises(InputError, match=r"meta\.ratio"):
        parse_row(row, file="f", line=1)


def test_probes_cli_from_released(release_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "p.jsonl"
    rc = main(
        [
            "probes",
            "--released",
            str(release_dir / "probe_examples.jsonl"),
            "--probes",
            "p2",
            "--output",
            str(out),
        ]
    )
    assert rc == 0
    rows = list(read_jsonl(out))
    assert [r["probe_id"] for r in rows] == [
        "v20_sgd_66_00065__qa_02",
        "v20_multiwoz_PMUL2677.json__qa_00",
    ]
