"""Benchmark: logging pipeline cells to a real MLflow sqlite store.

``log_cell`` (child run with provenance tags, sha256 digests, one artifact) against a baseline
measured in the same run: the plain ``MlflowClient`` calls an MLflow user would write for the
same content (create_run, log_batch, log_artifact, set_terminated) on a store with MLflow's
default sqlite settings. Both stores are created and migrated before the clock starts.

    python benchmarks/bench_tracking.py [--cells 100] [--limit-s 30]

Exits 1 if ``log_cell`` takes ``--limit-s`` seconds or more for ``--cells`` cells.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compressbench.tracking import log_cell, read_cells, start_pipeline_run

METRICS = {"P1": 0.1, "P2": 0.2, "P3": 0.3, "tokens_in": 100.0, "wall_s": 1.0}
PARAMS = {"max_new_tokens": 32, "model": "smollm2"}


def make_repo(root: Path) -> Path:
    """A git repo with one commit and one scored file to attach as the artifact."""
    root.mkdir()
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@example.org"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    scored = root / "scores.jsonl"
    scored.write_text('{"probe_id": "x", "strict": 1}\n' * 200, encoding="utf-8")
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=root, check=True)
    return scored


def time_log_cell(repo: Path, scored: Path, n: int) -> float:
    uri = f"sqlite:///{repo / 'ours.db'}"
    with start_pipeline_run("warm", tracking_uri=uri, repo_root=repo):
        pass  # schema migrations outside the clock
    start = time.perf_counter()
    with start_pipeline_run("bench", tracking_uri=uri, repo_root=repo) as parent:
        for i in range(n):
            log_cell(
                parent,
                {"dataset": "sgd", "probe": "P2", "seed": i, "ratio": 0.3, "method": "recency"},
                params=PARAMS,
                metrics=METRICS,
                artifacts=[scored],
                model_id="m",
                model_revision="r",
                stage="scores",
                outputs=[scored],
            )
    seconds = time.perf_counter() - start
    assert len(read_cells(uri)) == n, "not every cell was logged"
    return seconds


def time_plain_client(repo: Path, scored: Path, n: int) -> float:
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    db = repo / "plain.db"
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    exp = client.create_experiment("plain", artifact_location=(repo / "plain-art").as_uri())
    start = time.perf_counter()
    parent = client.create_run(exp, run_name="bench").info.run_id
    for i in range(n):
        run = client.create_run(exp, tags={"mlflow.parentRunId": parent}).info.run_id
        now = int(time.time() * 1000)
        client.log_batch(
            run,
            metrics=[Metric(k, v, now, 0) for k, v in METRICS.items()],
            params=[Param(k, str(v)) for k, v in {**PARAMS, "seed": i}.items()],
            tags=[RunTag("model.id", "m")],
        )
        client.log_artifact(run, str(scored))
        client.set_terminated(run, "FINISHED")
    client.set_terminated(parent, "FINISHED")
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=100)
    parser.add_argument("--limit-s", type=float, default=30.0)
    args = parser.parse_args()
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("MLFLOW_ENABLE_SYSTEM_METRICS_LOGGING", "false")
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        scored = make_repo(repo)
        plain = time_plain_client(repo, scored, args.cells)
        ours = time_log_cell(repo, scored, args.cells)
    per_cell = {name: sec / args.cells * 1e3 for name, sec in (("plain", plain), ("ours", ours))}
    print(f"cells: {args.cells}")
    print(f"plain MlflowClient (default sqlite): {plain:.2f} s ({per_cell['plain']:.1f} ms/cell)")
    print(
        f"compressbench log_cell (provenance, WAL): {ours:.2f} s ({per_cell['ours']:.1f} ms/cell)"
    )
    print(f"ratio log_cell / plain: {ours / plain:.2f}x")
    if ours >= args.limit_s:
        print(f"FAIL: {ours:.2f} s >= limit {args.limit_s} s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
