"""No orphaned runs: a stage killed with -9 leaves its runs RUNNING; the next pipeline run in the
experiment marks them KILLED (end time, ``compressbench.replaced_by``), and the report never
reads a RUNNING or KILLED run. Real processes, a real MLflow sqlite store, the real stages."""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from compressbench.cli import main
from compressbench.tpbench.stages.report_inputs import cell_runs
from compressbench.tracking import open_client, read_cells, read_pipeline_runs, start_pipeline_run
from compressbench.tracking.data_version import dvc_md5
from compressbench.tracking.orphans import REAPED_TAG, REPLACED_BY_TAG
from compressbench.tracking.owner import OWNER_TAGS, Owner, process_start, this_process
from support.answer_tables import TABLE, gold_where_visible, mock_lookup, write_table
from support.params import RATIO, chain_params

HOLDER = Path(__file__).parents[1] / "support" / "run_holder.py"
EXPERIMENT = "orphans"
ORPHANS_LOGGER = "compressbench.tracking.orphans"


class Holder:
    """``support/run_holder.py`` in its own process: a metrics-stage run and an open cell run."""

    def __init__(self, uri: str, root: Path) -> None:
        self.ready = root / f"ready-{time.monotonic_ns()}"
        self.proc = subprocess.Popen(
            [sys.executable, str(HOLDER), uri, EXPERIMENT, str(root), str(self.ready)],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + 180
        while not self.ready.exists():
            if self.proc.poll() is not None:
                raise AssertionError(f"run holder exited early: {self.proc.stdout.read()}")  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "run holder never opened its runs"
            time.sleep(0.2)
        self.run_id, self.open_cell = self.ready.read_text(encoding="utf-8").split(" ", 1)

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=60)
        assert self.proc.returncode == -signal.SIGKILL


def _run(uri: str, run_id: str) -> Any:
    return open_client(uri).get_run(run_id)


def _children(uri: str, run_id: str) -> dict[str, Any]:
    return {c.run_name: c for c in read_cells(uri, EXPERIMENT, parent_run_id=run_id)}


def _metrics_run(uri: str, before: set[str]) -> str:
    (new,) = [
        p.run_id
        for p in read_pipeline_runs(uri, EXPERIMENT)
        if p.run_id not in before and p.tags["dvc.stage"] == "metrics"
    ]
    return new


def _ids(uri: str) -> set[str]:
    return {p.run_id for p in read_pipeline_runs(uri, EXPERIMENT)}


def _reaped_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == ORPHANS_LOGGER and "KILLED" in r.getMessage() and r.levelno == logging.WARNING
    ]


@pytest.fixture()
def chain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The built-in chain up to the scores in ``tmp_path`` (cwd), read by the mock answering
    gold where visible, one finished metrics run; the store's URI."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(tmp_path / "answers.sqlite"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("DVC_STAGE", raising=False)
    raw = chain_params(mock_lookup(tmp_path / TABLE), tmp_path, EXPERIMENT)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    assert _stage("corpora", "--dataset", "builtin") == 0
    assert _stage("probes", "--dataset", "builtin", "--ratio", str(RATIO)) == 0
    cells = [
        ["--dataset", "builtin", "--method", method, "--ratio", str(RATIO)]
        for method in ("full_context", "recency")
    ]
    for cell in cells:
        assert _stage("contexts", *cell) == 0
    write_table(tmp_path / TABLE, gold_where_visible)
    for cell in cells:
        for stage in ("answers", "scores"):
            assert _stage(stage, *cell) == 0
    assert _stage("metrics") == 0
    yield raw["tracking"]["uri"]


def _stage(*args: str) -> int:
    return main(["stage", *args, "--params", "params.yaml"])


def test_a_stage_killed_with_9_is_reaped_by_the_next_and_never_reported(
    chain: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    uri = chain
    (first,) = _ids(uri)

    holder = Holder(uri, tmp_path)
    holder.kill()
    orphan = _run(uri, holder.run_id)
    assert orphan.info.status == "RUNNING" and orphan.info.end_time is None
    assert orphan.data.tags[OWNER_TAGS["pid"]] == str(holder.proc.pid)
    kids = _children(uri, holder.run_id)
    assert {n: c.status for n, c in kids.items()} == {
        "done · builtin/P2/seed=42/r=0.3/holder": "FINISHED",
        holder.open_cell: "RUNNING",
    }
    # While it is RUNNING, the report's query takes the older finished run.
    assert cell_runs(uri, EXPERIMENT, {}, ["builtin"])[2] == first

    # The next invocation: the real metrics stage.
    before = _ids(uri)
    caplog.set_level(logging.INFO)
    assert _stage("metrics") == 0
    second = _metrics_run(uri, before)
    orphan = _run(uri, holder.run_id)
    assert orphan.info.status == "KILLED"
    assert orphan.info.end_time is not None and orphan.info.end_time >= orphan.info.start_time
    assert orphan.data.tags[REPLACED_BY_TAG] == second
    reason = orphan.data.tags[REAPED_TAG]
    assert f"by run {second}" in reason and f"pid {holder.proc.pid}" in reason
    kids = _children(uri, holder.run_id)
    hanging = kids[holder.open_cell]
    assert hanging.status == "KILLED" and hanging.end_time is not None
    assert hanging.tags[REPLACED_BY_TAG] == second
    assert orphan.info.end_time >= max(
        c.end_time or 0 for c in kids.values() if c.status == "FINISHED"
    )
    assert kids["done · builtin/P2/seed=42/r=0.3/holder"].status == "FINISHED"
    lines = _reaped_lines(caplog)
    assert len(lines) == 2  # one per reaped run: the parent and its open cell
    assert any(holder.run_id in line for line in lines)
    assert any(hanging.run_id in line for line in lines)
    assert all(f"replaced by run {second}" in line for line in lines)
    assert _run(uri, second).info.status == "FINISHED"
    assert cell_runs(uri, EXPERIMENT, {}, ["builtin"])[2] == second

    # A KILLED run newer than every finished one: the report stage (its own run reaps it)
    # cites the newest FINISHED metrics run.
    late = Holder(uri, tmp_path)
    late.kill()
    assert _stage("report") == 0
    late_run = _run(uri, late.run_id)
    assert late_run.info.status == "KILLED"
    (report_run,) = [
        p.run_id for p in read_pipeline_runs(uri, EXPERIMENT) if p.tags["dvc.stage"] == "report"
    ]
    assert late_run.data.tags[REPLACED_BY_TAG] == report_run
    assert _run(uri, report_run).data.tags["report.metrics_run_id"] == second
    cited = Path("logs/report/runs.md").read_text(encoding="utf-8")  # the report run's runs.md
    assert f"metrics stage: MLflow run `{second}`" in cited
    assert late.run_id not in cited and holder.run_id not in cited and first not in cited

    # The stage runs also carry their owner and data version.
    tags = _run(uri, second).data.tags
    assert Owner.from_tags(tags) == this_process()
    assert tags["dvc.lock_sha256"] == "none" and tags["dvc.lock_file"] == "dvc.lock"
    scores = dvc_md5(["data/scores"], tmp_path)["data/scores"]
    assert scores.endswith(".dir") and tags["dvc.dep.data/scores"] == scores
    assert tags["dvc.dep.data/code/metrics.json"] == "missing"  # not made outside DVC


def test_a_run_whose_owner_lives_is_left_alone(
    store_uri: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    uri = store_uri
    opts: dict[str, Any] = {"tracking_uri": uri, "experiment": EXPERIMENT, "repo_root": tmp_path}
    holder = Holder(uri, tmp_path)
    try:
        caplog.set_level(logging.INFO)
        with start_pipeline_run("next", stage="report", **opts) as first:
            pass
        alive = _run(uri, holder.run_id)
        assert alive.info.status == "RUNNING" and REAPED_TAG not in alive.data.tags
        assert _children(uri, holder.run_id)[holder.open_cell].status == "RUNNING"
        assert not _reaped_lines(caplog)
        assert any(
            "left alone" in r.getMessage() and holder.run_id in r.getMessage()
            for r in caplog.records
        )
    finally:
        holder.kill()
    with start_pipeline_run("after", stage="report", **opts) as second:
        pass
    dead = _run(uri, holder.run_id)
    assert dead.info.status == "KILLED" and dead.data.tags[REPLACED_BY_TAG] == second.run_id
    assert _run(uri, first.run_id).info.status == "FINISHED"


def test_the_owner_is_one_process_not_a_reusable_pid(tmp_path: Path) -> None:
    me = this_process()
    assert me.pid == str(os.getpid()) and me.start == process_start(os.getpid())
    assert me.is_gone() is False
    assert dataclasses.replace(me, start="1").is_gone() is True  # the pid now names another
    assert dataclasses.replace(me, host="gpu-box-7").is_gone() is None  # elsewhere: cannot tell
    assert dataclasses.replace(me, boot_id="other").is_gone() is None
    assert dataclasses.replace(me, start="unknown").is_gone() is None
    assert Owner.from_tags(me.tags()) == me and Owner.from_tags({}) is None

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    owner = dataclasses.replace(me, pid=str(child.pid), start=process_start(child.pid) or "?")
    assert owner.is_gone() is False
    os.kill(child.pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while owner.is_gone() is not True:  # a zombie (killed, not yet waited for) counts as gone
        assert time.monotonic() < deadline
        time.sleep(0.05)
    child.wait()
    assert owner.is_gone() is True

    proc = tmp_path / "proc"
    (proc / "7").mkdir(parents=True)
    fields = ["S", *["0"] * 18, "4242", "0"]  # field 3 (state) .. field 22 (start time)
    (proc / "7" / "stat").write_text(f"7 (a) b (c)) {' '.join(fields)}\n", encoding="ascii")
    assert process_start(7, proc) == "4242"  # a command name with spaces and parentheses


def _foreign_run(uri: str, *, host: str | None, hours_ago: float) -> str:
    """A RUNNING run as another machine (or an older version, without owner tags) left it."""
    client = open_client(uri)
    exp = client.get_experiment_by_name(EXPERIMENT)
    tags = {"compressbench.kind": "pipeline", "dvc.stage": "metrics"}
    if host is not None:
        tags |= dataclasses.replace(this_process(), host=host, pid="12", start="99").tags()
    start = int((time.time() - hours_ago * 3600) * 1000)
    run = client.create_run(exp.experiment_id, start_time=start, tags=tags, run_name=f"{host}")
    return str(run.info.run_id)


def test_runs_owned_elsewhere_are_reaped_only_by_an_explicit_rule(
    store_uri: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = store_uri
    opts: dict[str, Any] = {"tracking_uri": uri, "experiment": EXPERIMENT, "repo_root": tmp_path}
    with start_pipeline_run("first", **opts):
        pass
    gpu = _foreign_run(uri, host="gpu-box-7", hours_ago=1)
    old = _foreign_run(uri, host=None, hours_ago=48)  # no owner recorded
    client = open_client(uri)
    exp_id = client.get_experiment_by_name(EXPERIMENT).experiment_id
    mine = client.create_run(
        exp_id, start_time=int((time.time() - 48 * 3600) * 1000), tags=this_process().tags()
    ).info.run_id  # this live process's: never reaped

    with start_pipeline_run("next", **opts):
        pass
    status = lambda run_id: _run(uri, run_id).info.status  # noqa: E731
    assert [status(r) for r in (gpu, old, mine)] == ["RUNNING"] * 3

    reap = ["runs", "reap", "--tracking-uri", uri, "--experiment", EXPERIMENT]
    assert main([*reap, "--host", "gpu-box-7", "--dry-run"]) == 0
    assert "would mark 1 run(s) KILLED" in capsys.readouterr().out
    assert status(gpu) == "RUNNING"
    assert main([*reap, "--host", "gpu-box-7"]) == 0
    assert "marked 1 run(s) KILLED" in capsys.readouterr().out
    killed = _run(uri, gpu)
    assert killed.info.status == "KILLED" and killed.info.end_time == killed.info.start_time
    assert "host declared gone" in killed.data.tags[REAPED_TAG]
    assert "compressbench runs reap" in killed.data.tags[REAPED_TAG]
    assert REPLACED_BY_TAG not in killed.data.tags

    assert main([*reap, "--older-than", "24"]) == 0
    assert "marked 1 run(s) KILLED" in capsys.readouterr().out
    assert status(old) == "KILLED" and status(mine) == "RUNNING"
    assert "RUNNING for over 24 h" in _run(uri, old).data.tags[REAPED_TAG]

    assert main([*reap, "--experiment", "nope"]) == 2
    assert "no experiment 'nope'" in capsys.readouterr().err
