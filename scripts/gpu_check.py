"""GPU check (issue 28): the real stage commands on a random-weight model of the paper reader's
shape, in paper and fast mode, with the reader worker, and Table 3 extrapolated from them.

Builds a Llama-3.1-8B-shaped folder with random bf16 weights
(:func:`compressbench.readers.synthetic.save_model_folder`; ``--small``: a tiny Llama, fp32, on
CPU), copies the project into a scratch folder per pass, applies the mode's reader config with
``compressbench use-config`` plus a fragment (the local model, answers stopped at
``--new-tokens`` = 32, the built-in corpus, a few methods), and runs every stage command of
``dvc.yaml`` that ``answers`` and ``deletion_answers`` need, in DVC's order, exactly as dvc.yaml
writes them (``dvc`` itself is not needed). With ``reader.worker: true`` the reader stages of a
pass run in one worker process; it is stopped after each pass. Per cell, from the cell's own
``.stats.json`` and run log: mode, batch size, prompts, s/prompt, tokens/s, the answering
process and its model loads, weight-hashing seconds, peak GPU memory (the worker's
``torch.cuda.max_memory_allocated``). Then Table 3's grid (``tpbench.paper_grid.table3``: turn
methods P1/P2/P3 at r = 0.30 over three seeds, the four presses, the deletion experiment) is
extrapolated per mode from those measured rates at the 1.5B study reader's mean answer lengths,
and checked against issue 28's targets; the before figures (one H200, the project at 9bc2bca)
are printed beside. Results: ``benchmarks/results/gpu_check_<machine>.json`` (``--out``),
rewritten after every step, so a run cut off keeps what it measured.

GPU:  python scripts/gpu_check.py          (or the kit: scripts/gpu_kit.sh, docs/gpu.md)
CPU:  python scripts/gpu_check.py --small  (under 5 minutes; fast/paper there is a CPU figure)
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from gpu_check_figures import by_label, cell_figures, extrapolate, print_table, verdict
from gpu_stage_plan import stage_plan  # scripts/, beside this file

from compressbench.pipeline.run_log import with_observations

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ("answers", "deletion_answers")  # the reader stages measured (and what they need)
# the checkout's top-level entries a pass's copy leaves out (outputs, stores, tools, tests)
COPY_IGNORE = {
    ".git",
    ".venv",
    ".gpu",
    "data",
    "mlruns",
    "mlartifacts",
    "metrics",
    "reports",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    "node_modules",
    "gpu_wheels",
    "benchmarks",
    "tests",
    "docs",
    "docker",
    "dvc.lock",
}
# (mode, pass, reader config, methods, probes or None for the config's): the paper mode's
# P2/press settings and its P1 settings (batch 8, eager), and the fast mode in one pass
# (recency first: the cell that pays torch.compile's first shapes on CUDA)
PASSES = (
    ("paper", "kv", "configs/readers/llama31_8b_hf_kv.yaml", ["full_context", "snapkv"], None),
    ("paper", "p1", "configs/readers/llama31_8b_hf_p1.yaml", ["full_context"], None),
    (
        "fast",
        "fast",
        "configs/readers/llama31_8b_hf_fast.yaml",
        ["recency", "full_context", "snapkv"],
        None,
    ),
)
T0 = time.monotonic()


class Report:
    """The result JSON, rewritten (atomically) after every step."""

    def __init__(self, path: Path) -> None:
        self.path, self.data = path, {"started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ")}
        path.parent.mkdir(parents=True, exist_ok=True)

    def put(self, key: str, value: Any) -> None:
        self.data[key] = value
        self.data["elapsed_s"] = round(time.monotonic() - T0, 1)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(self.data, indent=1, default=str), encoding="utf-8")
        os.replace(tmp, self.path)
        print(
            f"[{self.data['elapsed_s']:7.1f}s] {key}: {json.dumps(value, default=str)[:240]}",
            flush=True,
        )


def machine() -> str:
    import torch

    if not torch.cuda.is_available():
        return "cpu"
    name = torch.cuda.get_device_name(0).lower().replace("nvidia", "").strip()
    return re.sub(r"[^a-z0-9]+", "_", name).strip("_")


def run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> dict[str, Any]:
    """Run a command; its exit code, wall seconds, start time and output tail."""
    started, t = time.time(), time.monotonic()
    try:
        proc = subprocess.run(
            argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=max(1.0, timeout)
        )
        rc: Any = proc.returncode
        out = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out = "timeout", str(exc.stdout or "") + str(exc.stderr or "")
    return {
        "rc": rc,
        "wall_s": round(time.monotonic() - t, 2),
        "started_at": started,
        "tail": out[-2500:],
    }


def _ignore(folder: str, names: list[str]) -> set[str]:
    top = Path(folder) == ROOT
    return {
        n
        for n in names
        if n == "__pycache__"
        or (top and (n in COPY_IGNORE or n.endswith((".db", ".sqlite", ".tmp"))))
    }


def fragment(a: argparse.Namespace, model: Path, methods: list[str], deletions: bool) -> str:
    n = a.new_tokens
    frag: dict[str, Any] = {
        "datasets": ["builtin"],
        "seeds": [42],
        "ratios": [0.3],
        "n_per_cell": a.n_per_cell,
        "methods": methods,
        "deletions": {"enabled": deletions, "max_new_tokens": n, "max_probes": a.deletion_probes},
        "reader": {
            "model": str(model),
            "revision": None,
            "max_new_tokens": {"P1": n, "P2": n, "P3": n},
        },
    }
    if a.small:
        frag["reader"]["dtype"] = "float32"
    return yaml.safe_dump(frag, sort_keys=False)


def run_pass(
    a: argparse.Namespace,
    spec: tuple[Any, ...],
    work: Path,
    env: dict[str, str],
    report: Report,
    cells: list[dict[str, Any]],
) -> None:
    mode, label, config, methods, _ = spec
    proj = work / label
    shutil.rmtree(proj, ignore_errors=True)
    shutil.copytree(ROOT, proj, ignore=_ignore)
    env = {**env, "COMPRESSBENCH_ANSWER_CACHE": str(proj / "answers.sqlite")}
    cb = [sys.executable, "-m", "compressbench.cli"]
    frag = proj / "gpu_check_fragment.yaml"
    frag.write_text(fragment(a, a.model, methods, deletions=(label != "p1")), encoding="utf-8")
    for f in (config, str(frag)):
        r = run([*cb, "use-config", f], proj, env, 120)
        if r["rc"] != 0:
            raise RuntimeError(f"use-config {f}: {r['tail']}")
    params = yaml.safe_load((proj / "params.yaml").read_text(encoding="utf-8"))
    dvc = yaml.safe_load((proj / "dvc.yaml").read_text(encoding="utf-8"))
    plan = stage_plan(dvc, params, TARGETS)
    reader = params["reader"]
    try:
        for step in plan:
            left = T0 + a.budget_s - time.monotonic()
            if left < 5:
                cells.append(
                    {
                        "mode": mode,
                        "pass": label,
                        "stage": step["stage"],
                        "rc": "skipped: out of time",
                    }
                )
                break
            argv = shlex.split(step["cmd"])
            argv = [*cb, *argv[1:]] if argv[0] == "compressbench" else argv
            r = run(argv, proj, {**env, "DVC_STAGE": step["stage"]}, left)
            if r["rc"] != 0:
                cells.append({"mode": mode, "pass": label, "stage": step["stage"], **r})
                break
            stats = [o for o in step["outs"] if o.endswith(".stats.json")]
            if step["name"] in TARGETS and stats:
                # the cell's facts and its run log's timings (compressbench.pipeline.run_log)
                facts = json.loads((proj / stats[0]).read_text(encoding="utf-8"))
                st = with_observations(stats[0], facts, root=proj)
                if not st.get("requests"):  # e.g. deletion_answers with deletions off
                    continue
                cells.append(
                    {
                        "mode": mode,
                        "pass": label,
                        "stage": step["stage"],
                        "method": (st.get("cell") or {}).get("method", "deletions"),
                        "batch_size": reader["batch_size"],
                        "wall_s": r["wall_s"],
                        **cell_figures(st, r["started_at"]),
                    }
                )
                report.put("cells", cells)
    finally:  # one worker per pass: its loads are this pass's, its GPU memory freed
        run([*cb, "worker", "stop"], proj, env, 60)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--small", action="store_true", help="a tiny random Llama on CPU (< 5 min)")
    p.add_argument("--out", type=Path, help="default: benchmarks/results/gpu_check_<machine>.json")
    p.add_argument("--work", type=Path, help="scratch folder (default: a new one under /tmp)")
    p.add_argument("--model", type=Path, help="model folder (default: <work>/model; reused)")
    p.add_argument(
        "--new-tokens",
        type=int,
        default=32,
        help="every answer's length (random"
        " weights never stop early); the 1.5B study's P2 answers average 32",
    )
    p.add_argument("--n-per-cell", type=int, help="default: 64 (GPU), 4 (--small)")
    p.add_argument("--deletion-probes", type=int, help="default: 6 (GPU), 1 (--small)")
    p.add_argument("--modes", default="paper,fast")
    p.add_argument("--budget-s", type=float, default=540, help="stop starting stages after this")
    a = p.parse_args(argv)
    import torch

    from compressbench.readers import synthetic

    a.n_per_cell = a.n_per_cell or (4 if a.small else 64)
    a.deletion_probes = a.deletion_probes or (1 if a.small else 6)
    name = "cpu_small" if a.small else machine()
    report = Report(a.out or ROOT / "benchmarks" / "results" / f"gpu_check_{name}.json")
    work = a.work or Path(tempfile.mkdtemp(prefix="cbgc"))  # short: the worker's socket path
    if a.work is None:  # the scratch folder (and the model in it) goes when this run ends
        atexit.register(shutil.rmtree, work, True)
    a.model = (a.model or work / "model").resolve()
    device = torch.device("cuda" if torch.cuda.is_available() and not a.small else "cpu")
    report.put(
        "settings",
        {
            "machine": name,
            "device": str(device),
            "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name(0) if device.type == "cuda" else None,
            **{k: str(v) for k, v in vars(a).items()},
        },
    )
    cfg = synthetic.SMALL if a.small else synthetic.LLAMA_31_8B
    dtype = torch.float32 if a.small else torch.bfloat16
    report.put("model", synthetic.save_model_folder(cfg, a.model, device, dtype))
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TMPDIR": str(work),
        "COMPRESSBENCH_CACHE": str(work / "cache"),  # the weights' fingerprints: hashed once
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("MLFLOW_TRACKING_URI", None)
    cells: list[dict[str, Any]] = []
    modes = a.modes.split(",")
    for spec in PASSES:
        if spec[0] in modes:
            try:
                run_pass(a, spec, work, env, report, cells)
            except Exception as exc:  # the other passes still run
                cells.append(
                    {
                        "mode": spec[0],
                        "pass": spec[1],
                        "stage": "setup",
                        "rc": f"{type(exc).__name__}: {exc}"[:2000],
                    }
                )
            report.put("cells", cells)
    grid = extrapolate(cells)
    report.put("table3_extrapolated", grid)
    result = {"machine": name, "verdict": verdict(cells, grid)}
    got = by_label(cells)
    pf, ff = got.get("paper/kv:full_context"), got.get("fast/fast:full_context")
    if pf and ff and pf.get("tokens_per_s"):
        result["fast_over_paper_tokens_per_s"] = round(ff["tokens_per_s"] / pf["tokens_per_s"], 2)
    report.put("verdict", result["verdict"])
    report.put(
        "fast_over_paper_tokens_per_s",  # full_context: paper P2 at batch 1, fast P1-P3 at 64
        result.get("fast_over_paper_tokens_per_s"),
    )
    print_table(cells, result)
    failed = [c for c in cells if "method" not in c]
    report.put("done", {"total_s": round(time.monotonic() - T0, 1), "failed": len(failed)})
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
