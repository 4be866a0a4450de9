"""The TPBench case viewer shows what the stage files hold: built from a real small pipeline
run (built-in corpus, three methods, the deletion experiment, the gold-where-visible reader),
the page's embedded data equal the scores files row by row, the kept turns the contexts files,
and the report's cells link into it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compressbench.jsonl import read_jsonl
from compressbench.tpbench.deletions import FULL, MINUS_ORIGIN
from compressbench.tpbench.probes import read_probes
from compressbench.tpbench.stages import paths
from compressbench.tpbench.viewer.cases import case_key
from compressbench.tpbench.viewer.page import VIEWER_FILE
from support.params import RATIO
from support.viewer_run import (
    METHODS,
    inside,
    page_data,
    run_tpbench,
    viewer_params,
)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("viewer-run")
    with inside(folder):
        run_tpbench(folder)
    return folder


def _cases(run: Path) -> dict[str, dict[str, Any]]:
    data = page_data(run / VIEWER_FILE)
    return {c["key"]: c for c in data["cases"]}


def test_every_scores_row_is_shown_as_stored(run: Path) -> None:
    cases = _cases(run)
    shown = 0
    for method in METHODS:
        files = paths.CellFiles("builtin", method, RATIO)
        contexts = {
            (r["probe_type"], r["seed"], r["probe_id"]): r for r in read_jsonl(run / files.contexts)
        }
        for row in read_jsonl(run / files.scores):
            key = case_key("builtin", RATIO, row["probe_type"], row["seed"], row["probe_id"])
            answer = cases[key]["answers"][method]
            assert answer["prediction"] == row["prediction"]
            assert answer["output"] == row["output"]
            assert answer["strict"] == row["scores"]["strict"]
            assert answer["loose"] == row["scores"]["loose"]
            assert answer["abstain"] == bool(row["abstain"])
            assert answer["format_error"] == bool(row["format_error"])
            context = contexts[(row["probe_type"], row["seed"], row["probe_id"])]
            assert answer["kept"] == context["kept_turn_ids"]
            assert cases[key]["dialogue_id"] == row["dialogue_id"]
            assert cases[key]["gold"] == row["gold"]
            shown += 1
    # nothing on the page that no scores row holds
    assert shown == sum(len(c["answers"]) for c in cases.values()) > 0


def test_cases_carry_the_probe_and_its_turning_points(run: Path) -> None:
    cases = _cases(run)
    probes = list(read_probes(run / paths.probes_file("builtin", RATIO)))
    assert len(cases) == len(probes)
    for probe in probes:
        case = cases[case_key("builtin", RATIO, probe.probe_type, probe.seed, probe.probe_id)]
        assert case["turns"] == [list(t) for t in probe.turns]
        marks = case["marks"]
        assert marks["update"] == [probe.meta["origin_turn_id"]]
        assert probe.turns[marks["goal"][0]][0] == "USER"
        assert probe.gold.split()[0] in probe.turns[marks["goal"][0]][1] or probe.probe_type != "P1"
        if probe.probe_type == "P2":  # the §3.12 evidence turns the probe itself records
            assert marks["new"] == probe.meta["s_evidence"]
        assert all(probe.old_value.lower() in probe.turns[i][1].lower() for i in marks["old"])


def test_answer_kinds_follow_the_scores(run: Path) -> None:
    for case in _cases(run).values():
        for answer in case["answers"].values():
            if answer["strict"] == 1 and case["probe_type"] != "P3":
                assert answer["kind"] == "correct"
            if answer["abstain"]:
                assert answer["kind"] in ("abstain", "correct")


def test_deletion_experiment_shows_each_condition_with_its_answer(run: Path) -> None:
    data = page_data(run / VIEWER_FILE)
    rows = list(read_jsonl(run / paths.fill(paths.DELETION_SCORES, "builtin")))
    shown = {
        (d["probe_id"], c["condition"]): (d, c) for d in data["deletions"] for c in d["conditions"]
    }
    assert len(shown) == len(rows) > 0
    for row in rows:
        entry, cond = shown[(row["probe_id"], row["condition"])]
        assert cond["prediction"] == row["prediction"]
        assert cond["strict"] == row["scores"]["strict"]
        assert [t[0] for t in cond["removed"]] == row["removed_turn_ids"]
    for entry in data["deletions"]:
        names = [c["condition"] for c in entry["conditions"]]
        assert FULL in names and MINUS_ORIGIN in names
        removed = next(c for c in entry["conditions"] if c["condition"] == MINUS_ORIGIN)["removed"]
        assert len(removed) == 1 and removed[0][1] == "USER"  # the update turn, with its text


def test_the_page_is_self_contained(run: Path) -> None:
    text = (run / VIEWER_FILE).read_text(encoding="utf-8")
    assert "<script src" not in text and "<link" not in text
    assert "http://" not in text and "https://" not in text
    assert text.count("</script>") == 3  # the data, the shared script, the page's script


def test_the_reports_cells_link_into_the_viewer_and_its_run_carries_it(run: Path) -> None:
    from compressbench import stages
    from compressbench.tracking import open_client, read_pipeline_runs

    with inside(run):
        params = viewer_params(run)
        stages.stage_metrics(params)
        stages.stage_report(params)
        report = paths.REPORT_FILE.read_text(encoding="utf-8")
    main = report.split("## Main results")[1].split("\n## ")[0]
    link = "](viewer/index.html#dataset=builtin&method=recency&probe=P2&ratio=0.3)"
    assert main.count(link) == 2  # strict and loose
    assert "viewer/index.html#dataset=builtin&method=first_n&probe=P3&ratio=0.3" in main
    uri = params.tracking.uri
    report_run = [r for r in read_pipeline_runs(uri, "viewer") if r.tags["dvc.stage"] == "report"]
    artifacts = [a.path for a in open_client(uri).list_artifacts(report_run[-1].run_id, "viewer")]
    assert artifacts == ["viewer/index.html"]
