"""The report stage end to end, in-process: the built-in corpus, the ``mock`` backend answering
from a table, a real MLflow sqlite store; every section of ``reports/tpbench.md``, valid PNG
figures declared as DVC plots, and every cell traced to its MLflow run."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from PIL import Image

from compressbench import stages
from compressbench.config import parse_params
from compressbench.jsonl import read_jsonl, write_jsonl
from compressbench.pipeline.declare import Out, StageDecl
from compressbench.pipeline.dvc_yaml import stage_entry
from compressbench.text.normalize import value_occurs_in_text
from compressbench.tpbench.judge.prompt import prompt_sha256
from compressbench.tpbench.judge.spec import JudgeSpec
from compressbench.tpbench.report.document import render
from compressbench.tpbench.report.model import CellData, ReportInput, compute
from compressbench.tpbench.slot_types import slot_type
from compressbench.tpbench.stages import paths
from compressbench.tpbench.stages.report import FIGURE_FILES
from compressbench.tracking import open_client, read_cells, read_pipeline_runs
from support.answer_tables import TABLE, mock_lookup, probe_type, write_table
from support.params import RATIO, pipeline_params, sqlite_tracking
from support.paths import REPO_ROOT

METHODS = ("full_context", "recency", "first_n", "uniform_stride")
SECTIONS = (
    "## Main results",
    "## What a single average hides",
    "## P3 gap to full context",
    "## Deleting the turn that carries the update",
    "## What the reader answers",
    "## Retention versus reading",
    "## By slot type",
    "## KV-cache methods",
    "## Wider budgets",
    "## P1 semantic (judged)",
    "## Answer retention (no reader)",
    "## Where every number comes from",
)


def value_where_visible(row: dict[str, Any], context: str) -> str:
    """Reads like a literal-minded model: P1 states the goal; P2 and P3 give the current value
    when it is in the context, else the replaced value when that is, else abstain (main-grid
    and deletion prompts alike)."""
    kind = probe_type(row)
    if kind == "P1":
        return json.dumps({"value": row["gold"], "abstain": False})
    gold = row["gold"] if kind == "P2" else row["gold_value"]
    value = next(
        (v for v in (gold, row["old_value"]) if value_occurs_in_text(v, context, "builtin")),
        None,
    )
    if value is None:
        return json.dumps({"value": "unknown", "abstain": True})
    if kind == "P2":
        return json.dumps({"value": value, "abstain": False})
    return json.dumps({"value": f"{row['gold_story_label']}; {row['slot_human']}: {value}"})


@pytest.fixture()
def pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Every stage of the grid (with retention and deletions) up to the metrics stage, read by
    the ``mock`` backend answering value where visible."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(tmp_path / "answers.sqlite"))
    raw = pipeline_params(
        grid=False,
        seeds=[42],
        ratios=[RATIO],
        p3_ratio=RATIO,
        n_per_cell=26,
        methods=list(METHODS),
        retention={"ratios": [0.1, RATIO]},
        reader=mock_lookup(tmp_path / TABLE),
        tracking=sqlite_tracking(tmp_path, "report"),
    )
    params = parse_params(raw, "report-params.yaml")
    stages.stage_corpora(params, "builtin")
    stages.stage_retention(params, "builtin")
    stages.stage_probes(params, "builtin", RATIO)
    for method in METHODS:
        stages.stage_contexts(params, "builtin", method, RATIO)
    stages.stage_deletions(params, "builtin")
    write_table(tmp_path / TABLE, value_where_visible)
    for method in METHODS:
        for run in (
            stages.stage_answers,
            stages.stage_scores,
            stages.stage_judge,  # judge.enabled is false: empty verdict files
        ):
            run(params, "builtin", method, RATIO)
    stages.stage_deletion_answers(params, "builtin")
    stages.stage_deletion_scores(params, "builtin")
    stages.stage_metrics(params)
    return params


def _expected_kinds(method: str) -> list[int]:
    """[correct, superseded, abstain, format error, reader error, other] of the rule reader's
    P2 answers, from what each compressed context shows."""
    rows = read_jsonl(paths.CellFiles("builtin", method, RATIO).contexts)
    seen = [
        tuple(
            value_occurs_in_text(r[v], r["compressed_text_used"], "builtin")
            for v in ("gold", "old_value")
        )
        for r in rows
        if r["probe_type"] == "P2"
    ]
    correct = sum(gold for gold, _ in seen)
    superseded = sum(old and not gold for gold, old in seen)
    return [correct, superseded, len(seen) - correct - superseded, 0, 0, 0]


def _verdicts() -> None:
    """Judge verdicts of one cell, as the judge stage writes them."""
    outcomes = [True, True, False, None, None]  # the last one a judge error
    rows = [
        {
            "dataset": "builtin",
            "method": "recency",
            "ratio": RATIO,
            "probe_type": "P1",
            "seed": 42,
            "probe_id": f"builtin:d{i}:qa00",
            "dialogue_id": f"d{i}",
            "equivalent": eq,
            "error": "unparseable" if i == 4 else None,
        }
        for i, eq in enumerate(outcomes)
    ]
    write_jsonl(paths.fill(paths.VERDICTS, "builtin", "recency", RATIO), rows)


def _semantic(report: str) -> str:
    return report.split("## P1 semantic (judged)")[1].split("\n## ")[0]


def test_report_stage_end_to_end(pipeline: Any) -> None:
    stages.stage_report(pipeline)  # judging off: the stage wrote empty verdict files
    unjudged = _semantic(paths.REPORT_FILE.read_text(encoding="utf-8"))
    assert unjudged.strip().startswith("Not judged (judge.enabled is false; see README).")
    assert "|" not in unjudged
    judged = JudgeSpec(enabled=True, model="judge-m")
    params = dataclasses.replace(pipeline, blocks={**pipeline.blocks, "judge": judged})
    _verdicts()
    stages.stage_report(params)
    report = paths.REPORT_FILE.read_text(encoding="utf-8")
    positions = [report.index(s) for s in SECTIONS]  # each section is there ...
    assert positions[-2] > positions[-3]  # ... and a capable reader's report ends on retention
    assert "Read this first" not in report
    # the figures: valid PNGs of a readable size, linked from the report
    for name, path in FIGURE_FILES.items():
        with Image.open(path) as image:
            image.verify()
        with Image.open(path) as image:
            assert image.format == "PNG" and image.width >= 600 and image.height >= 400
        assert f"](figures/{name}.png)" in report
    # what the reader answers: this reader names the replaced value when the update is gone
    for method, label in (("first_n", "earliest turns"), ("uniform_stride", "uniform stride")):
        line = next(x for x in report.splitlines() if x.startswith(f"| {label} | P2 | 0.3 |"))
        counts = [int(n) for n in re.findall(r"\((\d+)\)", line)]
        assert counts == _expected_kinds(method)
    deletion = report.split("## Deleting the turn")[1].split("\n## ")[0]
    assert "remove the update turn |" in deletion and "superseded" in deletion
    assert "McNemar" in deletion and "Not run" not in deletion
    semantic = _semantic(report)
    assert f"Judge `judge-m`, released prompt sha256 `{prompt_sha256()[:12]}`" in semantic
    p1 = json.loads(paths.FULL_METRICS_FILE.read_text())["builtin"]["recency"]["0.3"]["P1"]
    assert (
        f"| builtin | recency | 0.3 | 5 | 0.400 [0.000, 0.800] | {p1['strict']:.3f} / "
        f"{p1['loose']:.3f} | 1 | 1 | 1 |"
    ) in semantic  # not equivalent, null, errors
    assert semantic.count("| builtin |") == 1  # the other cells' files are empty: not judged
    # every cell's numbers trace to its MLflow run, checked against the scored file's sha256;
    # the run ids go to the report run's runs.md (and the run log), never into the DVC output
    uri = params.tracking.uri
    metrics_run = [r for r in read_pipeline_runs(uri, "report") if r.tags["dvc.stage"] == "metrics"]
    cells = read_cells(uri, "report", parent_run_id=metrics_run[-1].run_id)
    assert len(cells) == len(METHODS) * 3
    provenance = report.split("## Where every number comes from")[1]
    assert provenance.count(" ✓ |") + provenance.count(" ✓\n") >= 1
    assert "not logged" not in provenance and "changed since" not in provenance
    report_run = [r for r in read_pipeline_runs(uri, "report") if r.tags["dvc.stage"] == "report"]
    assert report_run[-1].tags["report.metrics_run_id"] == metrics_run[-1].run_id
    runs = read_pipeline_runs(uri, "report")
    deletion_run = [r for r in runs if r.tags["dvc.stage"] == "deletion_scores@builtin"][-1]
    for run_id in (*(c.run_id for c in cells), report_run[-1].run_id, deletion_run.run_id):
        assert run_id not in report
    client = open_client(uri)
    artifacts = {
        a.path
        for folder in ("report", "figures")
        for a in client.list_artifacts(report_run[-1].run_id, folder)
    }
    assert artifacts == {"report/tpbench.md", "report/tpbench_full.json", "report/runs.md"} | {
        f"figures/{n}.png" for n in FIGURE_FILES
    }
    ids = Path(client.download_artifacts(report_run[-1].run_id, "report/runs.md")).read_text()
    assert ids == Path("logs/report/runs.md").read_text()
    for cell in cells:
        assert f"`{cell.run_id}` ✓" in ids
    assert f"this report: MLflow run `{report_run[-1].run_id}`" in ids
    assert f"deletions builtin: MLflow run `{deletion_run.run_id}`" in ids


def test_metrics_files_dvc_shows_are_one_small_row_per_cell(pipeline: Any) -> None:
    for method in METHODS:
        cell = json.loads(paths.CellFiles("builtin", method, RATIO).metrics.read_text())
        assert set(cell) == {"P1", "P2", "P3"}
        assert all(set(v) == {"strict", "loose"} for v in cell.values())
    compact = json.loads(paths.METRICS_FILE.read_text())["builtin"]
    full = json.loads(paths.FULL_METRICS_FILE.read_text())["builtin"]
    for method in METHODS:
        assert compact[method]["0.3"]["P2"] == {
            k: full[method]["0.3"]["P2"][k] for k in ("strict", "loose")
        }
        assert "format_error_rate" in full[method]["0.3"]["P2"]


def test_dvc_yaml_declares_the_figures_as_plots() -> None:
    entry = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]["report"]
    assert entry["plots"] == [str(p) for p in FIGURE_FILES.values()]  # DVC-cached: pulled
    assert entry["outs"] == [str(paths.REPORT_FILE)]
    decl = StageDecl(
        name="demo",
        run=lambda p: Path(),
        over=("dataset",),
        params=(),
        code=(),
        plots=(Out("plots/{dataset}.png", cache=False), Out("plots/{dataset}.csv")),
    )
    assert stage_entry(decl)["do"]["plots"] == [
        {"plots/${item}.png": {"cache": False}},
        "plots/${item}.csv",
    ]


def _cell(method: str, format_error: int) -> CellData:
    rows = [
        {
            "probe_type": "P2",
            "seed": 42,
            "probe_id": f"d{i}:q",
            "dialogue_id": f"d{i}",
            "dataset": "builtin",
            "gold": "7 pm",
            "old_value": "5 pm",
            "slot": "time",
            "prediction": None,
            "abstain": 1,
            "format_error": format_error,
            "error": None,
            "scores": {"strict": 0, "loose": 0},
        }
        for i in range(4)
    ]
    contexts = [
        {"probe_type": "P2", "seed": 42, "probe_id": f"d{i}:q", "compressed_text_used": "7 pm"}
        for i in range(4)
    ]
    return CellData("builtin", method, RATIO, rows, contexts, {"kv": None})


@pytest.mark.parametrize(("default_reader", "format_error"), [(True, 0), (False, 1)])
def test_a_weak_reader_report_warns_first_and_leads_with_retention(
    default_reader: bool, format_error: int
) -> None:
    inp = ReportInput(
        datasets=["builtin"],
        methods=["full_context", "recency"],
        ratios=[RATIO],
        main_ratio=RATIO,
        seeds=[42],
        reader="`hf` `tiny`",
        default_reader=default_reader,
        cells={("builtin", m, RATIO): _cell(m, format_error) for m in ("full_context", "recency")},
        styles={"full_context": "full", "recency": "positional"},
        labels={},
        slot_type=slot_type,
        retention={"builtin": None},
        deletions=None,
    )
    findings = compute(inp)
    figures = {name: Path("figures") / f"{name}.png" for name in FIGURE_FILES}
    text = render(inp, findings, figures, Path("."))
    warning = text.index("Read this first")
    assert warning < text.index("## Answer retention (no reader)") < text.index("## Main results")
    assert f"{100.0 * format_error:.1f}% of its answers have no parseable JSON" in text
    assert ("the smoke reader the tests use" in text) == default_reader
    assert "Not run: no `metrics/retention/builtin.json`" in text
    assert "Not run: this pipeline has no deletion stage" in text
    assert "Not judged (judge.enabled is false; see README)." in text


def test_structured_output_is_labelled_and_never_mixed_with_free_decoding() -> None:
    from compressbench.errors import InputError
    from compressbench.tpbench.stages.report import STRUCTURED_LABEL, decoding_label

    def cells(**structured: bool) -> dict[Any, CellData]:
        return {
            ("builtin", method, RATIO): CellData(
                dataset="builtin",
                method=method,
                ratio=RATIO,
                scores=[],
                contexts=[],
                stats={"structured_output": flag},
            )
            for method, flag in structured.items()
        }

    assert decoding_label(cells(full_context=False, recency=False)) == ""
    assert decoding_label(cells(full_context=True, recency=True)) == STRUCTURED_LABEL
    with pytest.raises(InputError, match=r"structured: builtin/recency/0\.3\); rerun"):
        decoding_label(cells(full_context=False, recency=True))
