"""The deletion stages end to end, in-process: built-in corpus -> probes -> deletions ->
deletion_answers -> deletion_scores with the ``mock`` backend answering from a table. The summary's
numbers are checked against values computed here from the probes alone (which turns carry the
gold value), so a wiring fault (pairing, conditions, scorer, counting) changes a number."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from scipy import stats as scipy_stats

from compressbench import stages
from compressbench.cli import main
from compressbench.config import Params, parse_params
from compressbench.jsonl import read_jsonl, write_jsonl
from compressbench.pipeline.run_log import read_observations
from compressbench.text.normalize import value_occurs_in_text
from compressbench.tpbench.deletions import FULL, MINUS_CONTROL_SUPPORT
from compressbench.tpbench.probes import ProbeRecord, read_probes
from compressbench.tpbench.prompts import split_user
from compressbench.tpbench.stages import paths
from compressbench.tracking import open_client, read_cells, read_pipeline_runs, sha256_file
from support.answer_tables import TABLE, mock_lookup, write_table
from support.params import RATIO, pipeline_params, sqlite_tracking

SEED = 42
ASKED = "asked.log"  # the mock's log of the request ids it generated (in the test's cwd)
SKIP = 3  # the rule reader also errs whenever the kept-turn count is a multiple of this


def current_or_old(row: dict[str, Any], context: str) -> str:
    """The current value when it is visible in the prompt's context, else the value it replaced
    (the superseded-value reply the paper observes) - and, so that full context has failures a
    control does not share, also the old value whenever the number of kept turns is a multiple
    of :data:`SKIP`."""
    visible = value_occurs_in_text(row["gold"], context, row["dataset"])
    visible = visible and len(row["kept_turn_ids"]) % SKIP != 0
    return json.dumps({"value": row["gold"] if visible else row["old_value"], "abstain": False})


@pytest.fixture()
def reader(tmp_path: Path) -> dict[str, Any]:
    """The ``mock`` reading the current-or-old table, logging what it generates."""
    block = mock_lookup(tmp_path / TABLE, model="builtin")
    block["options"]["log_path"] = str(tmp_path / ASKED)
    return block


def _asked() -> list[str]:
    """The request ids the mock generated so far (its ``log_path``)."""
    log = Path(ASKED)
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def _raw(reader: dict[str, Any], **deletions: Any) -> dict[str, Any]:
    return pipeline_params(
        probes=["p2"],
        seeds=[SEED, 43],
        n_per_cell=26,
        reader=reader,
        deletions=deletions,
        tracking=sqlite_tracking(Path.cwd(), "deletions"),
    )


def _handmade(probe_id: str, texts: Sequence[str], origin: int, support: list[int]) -> ProbeRecord:
    """A P2 probe (museum -> zoo) on a hand-made dialogue."""
    return ProbeRecord(
        probe_id=probe_id,
        probe_type="P2",
        dataset="builtin",
        dialogue_id=probe_id,
        seed=SEED,
        ratio=RATIO,
        slot="attraction",
        slot_human="attraction",
        old_value="museum",
        new_value="zoo",
        gold="zoo",
        turns=tuple((("USER", "SYSTEM")[i % 2], t) for i, t in enumerate(texts)),
        gold_value="zoo",
        meta={"origin_turn_id": origin, "s_transition_support": support},
    )


# No clean USER turn for the update turn T2: both controls fail.
NO_SINGLE = _handmade("hand:single", ["book the museum", "ok", "no, the zoo"], 2, [2])
# The update turn T4 matches T2, but the evidence turn T3 (SYSTEM) has no clean SYSTEM turn.
NO_ALL = _handmade(
    "hand:all",
    ["book the museum", "the museum is closed", "hello there", "the zoo is nice", "zoo then"],
    4,
    [3, 4],
)


def _visible(probe: ProbeRecord, removed: set[int]) -> int:
    """1 when the gold value survives in some kept turn (what the rule reader answers from)."""
    return int(
        any(
            value_occurs_in_text(probe.gold, text, probe.dataset)
            for i, (_, text) in enumerate(probe.turns)
            if i not in removed
        )
    )


def _matchable(probe: ProbeRecord, targets: Sequence[int]) -> bool:
    """Enough clean turns (outside the support, mentioning neither value) of each speaker."""
    support = set(probe.meta["s_transition_support"])
    values = [v for v in (probe.old_value, probe.new_value) if v]
    clean = Counter(
        speaker
        for i, (speaker, text) in enumerate(probe.turns)
        if i not in support
        and not any(value_occurs_in_text(v, text, probe.dataset) for v in values)
    )
    need = Counter(probe.turns[i][0] for i in targets)
    return all(clean[speaker] >= n for speaker, n in need.items())


def _wilson(k: int, n: int) -> list[float]:
    ci = scipy_stats.binomtest(k, n).proportion_ci(method="wilson")
    return [ci.low, ci.high]


def _mcnemar_p(b: int, c: int) -> float:
    return 1.0 if b + c == 0 else min(1.0, 2 * scipy_stats.binom.cdf(min(b, c), b + c, 0.5))


def _run(params: Params) -> dict[str, Any]:
    stages.stage_deletions(params, "builtin")
    write_table(Path(TABLE), current_or_old)  # the mock's answers to the prompts just written
    stages.stage_deletion_answers(params, "builtin")
    stages.stage_deletion_scores(params, "builtin")
    return json.loads(paths.fill(paths.DELETION_SUMMARY, "builtin").read_text(encoding="utf-8"))


def test_deletion_stages_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: dict[str, Any]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(tmp_path / "answers.sqlite"))
    params = parse_params(_raw(reader), "deletions-params.yaml")
    stages.stage_corpora(params, "builtin")
    stages.stage_probes(params, "builtin", RATIO)
    probes_file = paths.probes_file("builtin", RATIO)
    built = list(read_probes(probes_file))
    # Two hand-made probes whose controls fail join the file (the seed-43 probes are ignored).
    assert {p.seed for p in built} == {SEED, 43}
    write_jsonl(probes_file, [p.to_row() for p in [*built, NO_SINGLE, NO_ALL]])
    summary = _run(params)

    probes = [p for p in [*built, NO_SINGLE, NO_ALL] if p.seed == SEED]
    assert len(probes) >= 20 and summary["n_probes"] == len(probes)
    assert summary["dataset"] == "builtin" and summary["seed"] == SEED
    answers = list(read_jsonl(paths.fill(paths.DELETION_ANSWERS, "builtin")))
    assert len(_asked()) == len(answers) > 0
    # the mock reports each request's output budget as its tokens_out
    assert {r["tokens_out"] for r in answers} == {128}  # the paper's deletion reader setting

    # Unmatched items: counted per pair, listed with the reason, never dropped. The greedy
    # picker fails exactly when some speaker has fewer clean turns than targets.
    single = [p.probe_id for p in probes if _matchable(p, [p.meta["origin_turn_id"]])]
    both = [p.probe_id for p in probes if _matchable(p, p.meta["s_transition_support"])]
    assert set(both) <= set(single)
    listed = [(i["probe_id"], i["pair"]) for i in summary["unmatched"]["items"]]
    assert listed == [
        (p.probe_id, pair)
        for p in probes
        for pair, ok in (("single", single), ("all_evidence", both))
        if p.probe_id not in ok
    ]
    assert summary["unmatched"]["single"] == len(probes) - len(single) == 1
    assert summary["unmatched"]["all_evidence"] == len(probes) - len(both) >= 2
    reasons = {(i["probe_id"], i["pair"]): i["reason"] for i in summary["unmatched"]["items"]}
    assert reasons[("hand:single", "single")] == "no clean USER turn left to match T2"
    assert reasons[("hand:single", "all_evidence")] == (
        "update-turn control failed: no clean USER turn left to match T2"
    )
    assert reasons[("hand:all", "all_evidence")] == "no clean SYSTEM turn left to match T3"

    # Expected outcomes from the probes alone: a control never removes a value-bearing turn
    # (so the value stays visible) and removes as many turns as its deletion.
    def outcome(p: ProbeRecord, removed: set[int], n_removed: int) -> int:
        return int(bool(_visible(p, removed)) and (p.n_turns - n_removed) % SKIP != 0)

    by_id = {p.probe_id: p for p in probes}
    outcomes: dict[str, dict[str, int]] = {}
    for p in probes:
        origin, support = p.meta["origin_turn_id"], set(p.meta["s_transition_support"])
        outcomes[p.probe_id] = {
            "full_context": outcome(p, set(), 0),
            "cf_origin_minus_origin": outcome(p, {origin}, 1),
            "cf_origin_minus_control_origin": outcome(p, set(), 1),
            "cf_origin_minus_transition_support": outcome(p, support, len(support)),
            "cf_origin_minus_control_support": outcome(p, set(), len(support)),
        }
    ran = {"cf_origin_minus_control_origin": single}
    ran |= dict.fromkeys(("cf_origin_minus_transition_support", MINUS_CONTROL_SUPPORT), both)
    expected = {
        condition: [outcomes[pid][condition] for pid in ran.get(condition, list(by_id))]
        for condition in outcomes[probes[0].probe_id]
    }
    assert sum(expected["cf_origin_minus_transition_support"]) == 0
    assert 0 < sum(expected["cf_origin_minus_origin"]) < sum(expected["full_context"])
    table = {c["condition"]: c for c in summary["conditions"]}
    assert list(table) == list(expected)
    for condition, values in expected.items():
        entry, n, k = table[condition], len(values), sum(values)
        assert (entry["n"], entry["strict"], entry["loose"]) == (n, k / n, k / n), condition
        assert entry["strict_ci"] == pytest.approx(_wilson(k, n))
        assert entry["format_error_rate"] == 0.0

    pairs = {p["pair"]: p for p in summary["pairs"]}
    differs = 0
    for got in summary["pairs"]:
        ids = single if got["pair"] == "single" else both
        rows = [outcomes[pid] for pid in ids]
        full, dele, ctrl = ([r[c] for r in rows] for c in (FULL, got["deletion"], got["control"]))
        right = [i for i, ok in enumerate(full) if ok]
        b = sum(1 for i in right if not dele[i] and ctrl[i])
        c = sum(1 for i in right if dele[i] and not ctrl[i])
        b_all = sum(1 for d, k in zip(dele, ctrl, strict=True) if k and not d)
        c_all = sum(1 for d, k in zip(dele, ctrl, strict=True) if d and not k)
        assert (got["n_matched"], got["n_correct_full"]) == (len(ids), len(right))
        assert got["deletion_flips"] == sum(1 for i in right if not dele[i])
        assert got["control_flips"] == sum(1 for i in right if not ctrl[i])
        assert (got["mcnemar_b"], got["mcnemar_c"]) == (b, c)
        assert (got["mcnemar_all_b"], got["mcnemar_all_c"]) == (b_all, c_all)
        assert got["mcnemar_p"] == pytest.approx(_mcnemar_p(b, c))
        assert got["mcnemar_all_p"] == pytest.approx(_mcnemar_p(b_all, c_all))
        differs += b_all != b
    assert differs  # the all-items test counts items that full context got wrong too
    assert pairs["all_evidence"]["deletion_flips"] == pairs["all_evidence"]["n_correct_full"]

    _check_mlflow(params, summary)

    # Every scored row carries its condition, the removed turns and the picks in its meta.
    scored = list(read_jsonl(paths.fill(paths.DELETION_SCORES, "builtin")))
    assert {r["seed"] for r in scored} == {SEED}
    assert len(scored) == sum(len(v) for v in expected.values())
    for row in scored:
        assert row["meta"]["removed_turn_ids"] == row["removed_turn_ids"]
        assert row["meta"]["condition"] == row["condition"]
        assert sorted(row["kept_turn_ids"] + row["removed_turn_ids"]) == list(range(row["n_turns"]))
    for row in read_jsonl(paths.fill(paths.DELETION_CONTEXTS, "builtin")):
        context = split_user(row["prompt_user"], row["compressed_text_used"])[0]
        assert [f"[T{i}] " in context for i in range(row["n_turns"])] == [
            i in row["kept_turn_ids"] for i in range(row["n_turns"])
        ]

    # Again: the cache answers everything and every file is byte-identical.
    before = {p: p.read_bytes() for p in Path("data").rglob("*.jsonl")}
    asked = _asked()
    _run(params)
    # the run's cache counts are observations: in its run log, not the stats output
    observed = read_observations(paths.fill(paths.DELETION_ANSWER_STATS, "builtin"))
    assert observed["model_calls"] == 0 and _asked() == asked
    assert {p: p.read_bytes() for p in Path("data").rglob("*.jsonl")} == before


def _check_mlflow(params: Params, summary: dict[str, Any]) -> None:
    """The summary in a real MLflow store: a parent run with the paired tests and the files, a
    child per condition with its numbers and the cells' provenance tags."""
    uri = params.tracking.uri
    (parent,) = read_pipeline_runs(uri, "deletions")
    assert parent.status == "FINISHED" and parent.tags["dvc.stage"] == "deletion_scores@builtin"
    assert parent.params["seed"] == str(SEED) and parent.params["deletions.max_new_tokens"] == "128"
    assert parent.metrics["n_probes"] == summary["n_probes"]
    for pair in summary["pairs"]:
        for key in ("n_matched", "deletion_flips", "mcnemar_b", "mcnemar_c", "mcnemar_p"):
            assert parent.metrics[f"{pair['pair']}.{key}"] == pytest.approx(pair[key])
    artifacts = {a.path for a in open_client(uri).list_artifacts(parent.run_id)}
    assert {"builtin.json", "scores.jsonl"} <= artifacts
    cells = {
        c.params["condition"]: c for c in read_cells(uri, "deletions", parent_run_id=parent.run_id)
    }
    assert sorted(cells) == sorted(c["condition"] for c in summary["conditions"])
    scores = paths.fill(paths.DELETION_SCORES, "builtin")
    for entry in summary["conditions"]:
        cell = cells[entry["condition"]]
        assert (cell.params["dataset"], cell.params["probe"], cell.params["seed"]) == (
            "builtin",
            "P2",
            str(SEED),
        )
        assert cell.metrics["n"] == entry["n"] and cell.metrics["strict"] == entry["strict"]
        assert [cell.metrics["strict_ci_low"], cell.metrics["strict_ci_high"]] == entry["strict_ci"]
        assert cell.tags["model.id"] == "builtin" and cell.tags["model.revision"] == "1"
        assert cell.tags["dvc.stage"] == "deletion_scores@builtin"
        assert cell.tags[f"sha256.output.{scores.as_posix()}"] == sha256_file(scores)
        answers = paths.fill(paths.DELETION_ANSWERS, "builtin")
        assert cell.tags[f"sha256.input.{answers.as_posix()}"] == sha256_file(answers)
        assert cell.tags["env.distributions_sha256"] == parent.tags["env.distributions_sha256"]


def test_disabled_deletions_write_empty_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: dict[str, Any]
) -> None:
    monkeypatch.chdir(tmp_path)
    params = parse_params(_raw(reader, enabled=False), "deletions-params.yaml")
    stages.stage_corpora(params, "builtin")
    stages.stage_probes(params, "builtin", RATIO)
    summary = _run(params)
    assert summary["n_probes"] == 0 and _asked() == []
    assert [c["n"] for c in summary["conditions"]] == [0] * 5
    assert all(c["strict"] is None for c in summary["conditions"])
    assert [p["n_matched"] for p in summary["pairs"]] == [0, 0]
    assert not Path("mlflow.db").exists()  # nothing to log: no run, no store


def test_a_probe_without_its_update_turn_is_one_line_of_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    raw = _raw({"backend": "hf"})
    Path("p.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    bad = NO_SINGLE.to_row()
    bad["meta"] = {"s_transition_support": [2]}
    write_jsonl(paths.probes_file("builtin", RATIO), [bad])
    assert main(["stage", "deletions", "--params", "p.yaml", "--dataset", "builtin"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert "data/probes/builtin/0.3.jsonl" in err and "hand:single" in err
    assert "meta.origin_turn_id" in err
    assert not paths.fill(paths.DELETION_CONTEXTS, "builtin").exists()
