"""The KEEP-Bench pipeline glue: the ``keepbench`` params block, per-case recalls and cell
numbers, the Pareto frontier, the compression cache, the report and the stages end to end."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from compressbench.cli import main
from compressbench.errors import InputError
from compressbench.keepbench.cases import CONDITIONAL, PARALLEL, KeepCase
from compressbench.keepbench.compression_cache import compress_cached
from compressbench.keepbench.compressors.base import keep_source
from compressbench.keepbench.compressors.family import keep_method
from compressbench.keepbench.loader import builtin_cases, evaluation_cases
from compressbench.keepbench.pipeline_spec import parse_keepbench
from compressbench.keepbench.report.figure import Point, pareto_frontier
from compressbench.keepbench.report.metrics import cell_summary, score_rows
from compressbench.pipeline.run_log import read_observations
from compressbench.readers.cache import AnswerCache
from support.paths import REPO_ROOT


@pytest.fixture(scope="module")
def cases() -> list[KeepCase]:
    return evaluation_cases(builtin_cases())


def _first(cases: list[KeepCase], setting: str) -> KeepCase:
    return next(c for c in cases if c.setting == setting)


def test_spec_defaults_and_one_line_errors() -> None:
    spec = parse_keepbench(None)
    assert spec.judge == "lexical" and spec.budgets == (1.0,)
    assert spec.cells() == [("llm", 1.0), ("recomp_extractive", 1.0)]
    listed = parse_keepbench({"compressors": ["first_n"], "budgets": [0.5, 2]})
    assert listed.cells() == [("first_n", 0.5), ("first_n", 2.0)]
    bad = [
        ({"budget": [1]}, "keepbench.budget"),
        ({"budgets": [0]}, "keepbench.budgets[0]"),
        ({"budgets": [1, 1.0]}, "keepbench.budgets"),
        ({"compressors": {}}, "keepbench.compressors"),
        ({"compressors": {"llm": 3}}, "keepbench.compressors.llm"),
        ({"max_per_subset": 0}, "keepbench.max_per_subset"),
        ({"flops_configs": {"exit": "c.json"}}, "keepbench.flops_configs.exit"),
    ]
    for raw, field in bad:
        with pytest.raises(InputError) as err:
            parse_keepbench(raw, "p.yaml")
        assert f"file p.yaml, field {field!r}" in str(err.value), raw


def test_unknown_compressor_or_judge_fails_the_stage_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = yaml.safe_load((REPO_ROOT / "params.yaml").read_text(encoding="utf-8"))
    monkeypatch.chdir(tmp_path)
    for block, stage, cell, field in (
        ({"compressors": {"nope": {}}}, "keep_compressed", "nope", "keepbench.compressors"),
        (
            {"compressors": {"llm": {"colour": 1}}},
            "keep_compressed",
            "llm",
            "keepbench.compressors.llm.colour",
        ),
        (
            {"compressors": {"llm": {}}, "judge": "oracle"},
            "keep_verdicts",
            "llm",
            "keepbench.judge",
        ),
        ({"compressors": {"llm": {}}}, "keep_verdicts", "exit", "keepbench.compressors"),
    ):
        (tmp_path / "bad.yaml").write_text(yaml.safe_dump({**raw, "keepbench": block}))
        assert main(["stage", stage, "--params", "bad.yaml", "--compressor", cell]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "bad.yaml" in err[0] and repr(field) in err[0][:200], err
    assert not (tmp_path / "data").exists()


def test_cell_summary_rate_overall_and_epr(cases: list[KeepCase]) -> None:
    by_id = {c.case_id: c for c in cases}
    chosen = [_first(cases, PARALLEL), _first(cases, CONDITIONAL)]
    compressed = [
        {
            "case_id": chosen[0].case_id,
            "source_tokens": 300,
            "compressed_tokens": 20,
            "flops": 2e12,
        },
        {
            "case_id": chosen[1].case_id,
            "source_tokens": 100,
            "compressed_tokens": 30,
            "flops": 4e12,
        },
    ]
    verdicts = [  # case 0 keeps everything; case 1 loses its first proposition, errs on its last
        {
            "case_id": c.case_id,
            "proposition_id": p.id,
            "judgement": None
            if c is chosen[1] and i == len(c.propositions) - 1
            else "no"
            if c is chosen[1] and i == 0
            else "yes",
        }
        for c in chosen
        for i, p in enumerate(c.propositions)
    ]
    scores, rows = score_rows(by_id, compressed, verdicts)
    s = cell_summary(scores, rows)
    assert (
        s["subsets"]["parallel"]["rate"] == 15.0 and s["subsets"]["conditional"]["all_rec"] == 0.0
    )
    assert s["subsets"]["parallel"]["para_rec"] == 100.0
    assert s["overall_all_rec"] == 50.0 and s["tflops_per_case"] == 3.0
    assert s["epr"] == pytest.approx(6 * (50.0 / 3.0) ** 0.5)
    assert s["verdict_errors"] == 1 and rows[1]["n_missing"] == 2  # an error counts as "no"
    compressed[0]["flops"] = None
    assert cell_summary(*score_rows(by_id, compressed, verdicts))["epr"] is None


def test_pareto_frontier() -> None:
    pts = [Point("a", 1.0, 5.0), Point("b", 2.0, 4.0), Point("c", 3.0, 9.0), Point("d", 3.0, 7.0)]
    assert [p.label for p in pareto_frontier(pts)] == ["a", "c"]
    assert [p.label for p in pareto_frontier([Point("x", 1, 1), Point("y", 1, 2)])] == ["y"]


def test_extractive_compressions_are_cached_and_read_back(
    tmp_path: Path, cases: list[KeepCase]
) -> None:
    method = keep_method("uniform_stride")
    sources = [keep_source(c) for c in cases[:6]]
    with AnswerCache(tmp_path / "a.sqlite") as cache:
        first, stats = compress_cached("uniform_stride", method, sources[:3], 1.0, cache)
        assert stats == {"cached": 0, "computed": 3}
        again, stats = compress_cached("uniform_stride", method, sources, 1.0, cache)
        assert stats == {"cached": 3, "computed": 3}
        assert again[:3] == first
        # the same bytes when written (record keys in the same order), cold or warm
        as_written = [json.dumps(dataclasses.asdict(c)) for c in (*first, *again[:3])]
        assert as_written[:3] == as_written[3:]
        _, stats = compress_cached("uniform_stride", method, sources, 2.0, cache)
        assert stats["computed"] == 6  # another budget is another key


def _params_file(root: Path, **keepbench: Any) -> Path:
    raw = yaml.safe_load((REPO_ROOT / "params.yaml").read_text(encoding="utf-8"))
    raw["keepbench"] = {"judge": "lexical", **keepbench}
    raw["tracking"] = {"uri": f"sqlite:///{root / 'mlflow.db'}", "experiment": "keep-test"}
    path = root / "params.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


KEEP_STAGES = (
    "keep_cases", "keep_compressed", "keep_verdicts", "keep_metrics", "keep_viewer", "keep_report"
)  # fmt: skip
CELL_STAGES = ("keep_compressed", "keep_verdicts")  # one cell per compressor (--compressor)


def _stage_calls(name: str, compressors: list[str]) -> list[list[str]]:
    """The CLI calls DVC makes for one KEEP stage: one per compressor for a cell stage."""
    if name not in CELL_STAGES:
        return [["stage", name]]
    return [["stage", name, "--compressor", c] for c in compressors]


@pytest.mark.slow
def test_keep_stages_end_to_end_with_mlflow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built-in sample, a sentence selector and RECOMP-extractive (MiniLM from PyPI), lexical
    judge: every stage through the CLI, one MLflow run per (compressor, budget, judge), and a
    report run carrying the report, its figure and the case viewer the report links to."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(tmp_path / "answers.sqlite"))
    _params_file(
        tmp_path,
        max_per_subset=2,
        compressors={"first_n": {}, "recomp_extractive": {}},
        budgets=[1.0, 2.0],
    )
    for name in KEEP_STAGES:
        for call in _stage_calls(name, ["first_n", "recomp_extractive"]):
            assert main(call) == 0, call
    metrics = json.loads(Path("metrics/keepbench.json").read_text())
    assert set(metrics["cells"]) == {
        f"{m}@{b}" for m in ("first_n", "recomp_extractive") for b in ("1.0", "2.0")
    }
    full = json.loads(Path("reports/keepbench_full.json").read_text())
    ext = next(c for c in full["cells"] if c["compressor"] == "recomp_extractive")
    assert ext["summary"]["cases"] == 8 and ext["summary"]["tflops_per_case"] > 0
    assert ext["compressed_stats"]["flops"]["coefficients"]["a"] == 2 * 6 * (
        4 * 384 * 384 + 2 * 384 * 1536
    )
    selector = next(c for c in full["cells"] if c["compressor"] == "first_n")
    assert selector["summary"]["epr"] is None  # no model, no FLOPs
    report = Path("reports/keepbench.md").read_text()
    assert "| Method | Par. Rate | Para-Rec |" in report and "**Approximation.**" in report
    assert "Gemma-4-31B-it" in report and "keepbench_preservation_tflops.png" in report
    png = Path("reports/figures/keepbench_preservation_tflops.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (
        "Each compressor's cases, proposition by proposition: "
        "[first_n](viewer/keepbench.html#compressor=first_n) · "
    ) in report
    assert "(viewer/keepbench.html#compressor=recomp_extractive)." in report

    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp = client.get_experiment_by_name("compressbench-keepbench")
    runs = client.search_runs([exp.experiment_id])
    cells = [r for r in runs if r.data.params.get("judge") == "lexical"]
    assert len(cells) == 4
    run = next(r for r in cells if r.data.params["method"] == "recomp_extractive")
    assert "git.commit" in run.data.tags or any(k.startswith("git.") for k in run.data.tags)
    assert any(k.startswith("sha256.output.") for k in run.data.tags)
    assert "overall_all_rec" in run.data.metrics and "epr" in run.data.metrics
    (report_run,) = [r for r in runs if r.data.tags.get("dvc.stage") == "keep_report"]
    stored = {
        f.path for sub in ("report", "figures", "viewer")
        for f in client.list_artifacts(report_run.info.run_id, sub)
    }  # fmt: skip
    assert stored == {
        "report/keepbench.md",
        "report/keepbench_full.json",
        "figures/keepbench_preservation_tflops.png",
        "viewer/keepbench.html",
    }


def _cache_rows(path: Path) -> int:
    import sqlite3

    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])


@pytest.mark.slow
def test_llm_cell_resumes_after_kill_9(tmp_path: Path) -> None:
    """The `llm` compressor on the default offline reader: ``kill -9`` mid-cell, rerun, and only
    the missing compressions are generated; a third run is all cache hits and writes the same
    bytes."""
    import os
    import signal
    import subprocess
    import sys
    import time

    cache = tmp_path / "answers.sqlite"
    llm = {"max_new_tokens": 4, "reader_options": {"num_threads": 1}}
    _params_file(tmp_path, max_per_subset=1, compressors={"llm": llm})
    env = {**os.environ, "COMPRESSBENCH_ANSWER_CACHE": str(cache)}
    procs: list[subprocess.Popen[bytes]] = []

    def stage(name: str) -> subprocess.Popen[bytes]:
        (call,) = _stage_calls(name, ["llm"])
        cmd = [sys.executable, "-m", "compressbench.cli", *call]
        procs.append(subprocess.Popen(cmd, cwd=tmp_path, env=env, stderr=subprocess.DEVNULL))
        return procs[-1]

    try:
        assert stage("keep_cases").wait(timeout=600) == 0
        proc = stage("keep_compressed")
        while _cache_rows(cache) < 1 and proc.poll() is None:
            time.sleep(0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done_before = _cache_rows(cache)
        assert 0 < done_before < 4 and not (tmp_path / "data/keepbench/compressed/llm").exists()
        assert stage("keep_compressed").wait(timeout=1800) == 0
        out = tmp_path / "data/keepbench/compressed/llm/1.0.jsonl"
        stats = "data/keepbench/compressed/llm/1.0.stats.json"  # its cache counts: the run log
        assert read_observations(stats, root=tmp_path)["cache"]["new_cache_entries"] == (
            4 - done_before
        )
        first = out.read_bytes()
        assert stage("keep_compressed").wait(timeout=1800) == 0
        assert out.read_bytes() == first
        assert read_observations(stats, root=tmp_path)["cache"]["new_cache_entries"] == 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


@pytest.mark.slow
def test_llm_flops_amortise_the_shared_icl_prefix_per_subset(cases: list[KeepCase]) -> None:
    """Eq. 7 on the real reader's tokenizer: the prompts of a subset share the instruction and
    the demonstrations, whose prefill is counted once for the subset."""
    from compressbench.compress.method import Compression
    from compressbench.flops.decoder import DecoderCost
    from compressbench.keepbench.flops_accounting import cell_flops

    method: Any = keep_method("llm", {"reader_options": {"num_threads": 1}})
    chosen = [c for c in cases if c.subset == "parallel"][:2]
    chosen += [c for c in cases if c.subset == "science"][:2]
    sources = [keep_source(c) for c in chosen]
    comps = [
        Compression(
            "x",
            (),
            "x",
            len(s.units),
            4,
            "keep_sentences",
            "generated",
            1.0,
            record={"tokens_in": 900 + 10 * i, "tokens_out": 50},
        )
        for i, s in enumerate(sources)
    ]
    got = cell_flops("llm", method, sources, comps)
    cost = DecoderCost(**{k: got.coefficients[k] for k in ("a", "b", "c")})
    assert got.coefficients == {"a": 212_336_640, "b": 69_120, "c": 56_623_104}  # SmolLM2-135M
    for subset in ("parallel", "science"):
        idx = [i for i, c in enumerate(chosen) if c.subset == subset]
        p = got.prefix_tokens[subset]
        assert 100 < p < 900  # instruction + demonstrations, not the case's own text
        expected = sum(cost.case(900 + 10 * i, 50) for i in idx) - cost.prefill(p)
        assert sum(got.per_case[i] for i in idx) == pytest.approx(expected, rel=1e-12)
