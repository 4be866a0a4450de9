"""scripts/gpu_check.py: the real stage commands in paper and fast mode with the reader worker
(--small on CPU, for real), its stage plan, Table 3's grid and its extrapolation, and kvpress
loaded from a wheel."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import zipfile
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from compressbench.tpbench import paper_grid
from support.paths import REPO_ROOT
from support.scripts import load_script

CELL_FIELDS = ("mode", "pass", "stage", "method", "batch_size", "prompts", "s_per_prompt",
               "tokens_per_s", "model_loads", "weights_hash_s", "weight_files_hashed",
               "peak_gpu_memory_gib", "pid", "before_first_answer_s", "decoding")  # fmt: skip


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}


@pytest.mark.slow
def test_small_run_measures_both_modes_with_one_load_per_pass(tmp_path: Path) -> None:
    out = tmp_path / "gpu_check.json"
    cmd = [
        sys.executable,
        str(REPO_ROOT / "scripts" / "gpu_check.py"),
        "--small",
        "--out",
        str(out),
    ]
    proc = subprocess.run(
        cmd, cwd=REPO_ROOT, env=_env(), capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads(out.read_text())
    assert data["done"]["failed"] == 0 and data["done"]["total_s"] < 300
    assert "before (1 x NVIDIA H200" in proc.stdout and "after (cpu_small)" in proc.stdout
    cells = {f"{c['mode']}/{c['pass']}:{c['method']}": c for c in data["cells"]}
    assert set(cells) == {
        "paper/kv:full_context", "paper/kv:snapkv", "paper/kv:deletions",
        "paper/p1:full_context",
        "fast/fast:recency", "fast/fast:full_context", "fast/fast:snapkv", "fast/fast:deletions",
    }  # fmt: skip
    for label, cell in cells.items():
        assert all(k in cell for k in CELL_FIELDS), (label, cell)
        assert cell["prompts"] > 0 and cell["tokens_per_s"] > 0 and cell["s_per_prompt"] > 0
        assert cell["model_loads"] == 1, label  # the worker built one reader per pass
        assert cell["peak_gpu_memory_gib"] is None  # CPU: no CUDA figure
        assert cell["tokens_out"] <= 32 * cell["prompts"]  # answers stop at 32 tokens
    for p in ("kv", "p1", "fast"):  # one answering process per pass, a new one each pass
        assert len({c["pid"] for c in data["cells"] if c["pass"] == p}) == 1
    assert len({c["pid"] for c in data["cells"]}) == 3
    sizes = [
        cells[f"{k}:full_context"]["batch_size"] for k in ("paper/kv", "paper/p1", "fast/fast")
    ]
    assert sizes == [1, 8, 64]
    assert cells["fast/fast:full_context"]["decoding"]["decode_mode"] == "fast"
    assert cells["paper/kv:full_context"]["decoding"]["decode_mode"] is None  # paper: no key
    assert cells["paper/kv:snapkv"]["decoding"]["press"]["preset"] == "snapkv"
    # the weights are hashed once: the first pass hashes the file, the later passes read it
    # from the fingerprint cache
    assert cells["paper/kv:full_context"]["weight_files_hashed"] == 1
    assert cells["paper/p1:full_context"]["weight_files_hashed"] == 0
    assert cells["fast/fast:recency"]["weight_files_hashed"] == 0
    grid = data["table3_extrapolated"]
    total = sum(c.prompts for c in paper_grid.table3())
    for mode, passes in (("paper", 4), ("fast", 2)):
        assert grid[mode]["prompts"] == total and grid[mode]["hours"] > 0
        assert grid[mode]["loads"] == passes
        assert sum(p["prompts"] for p in grid[mode]["parts"].values()) == total
    assert set(grid["fast"]["parts"]) == {"fast/fast:full_context", "fast/fast:snapkv",
                                          "fast/fast:deletions"}  # fmt: skip
    assert "extrapolated" in grid and "1.5B" in grid["extrapolated"]
    verdict = data["verdict"]
    assert verdict["loads_per_pass"] == {"fast": [1], "kv": [1], "p1": [1]}
    assert verdict["fast_batched_tokens_per_s"] == cells["fast/fast:full_context"]["tokens_per_s"]
    assert verdict["before"]["full_context_batch1"]["tokens_per_s"] == 21.9
    assert data["fast_over_paper_tokens_per_s"] > 0  # a CPU benchmark figure, not a target


def test_stage_plan_is_dvcs_order_of_what_the_reader_stages_need() -> None:
    plan_of = load_script("gpu_stage_plan").stage_plan
    dvc = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text())
    params = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    params["methods"] = ["full_context", "snapkv"]
    plan = plan_of(dvc, params, ("answers", "deletion_answers"))
    order = [step["stage"] for step in plan]
    assert order.index("code_base") < order.index("corpora@builtin") < order.index(
        "probes@builtin-0.3") < order.index("contexts@builtin-snapkv-0.3") < order.index(
        "answers@builtin-snapkv-0.3")  # fmt: skip
    assert order.index("deletions@builtin") < order.index("deletion_answers@builtin")
    names = {step["name"] for step in plan}
    assert not names & {"scores", "metrics", "report", "retention", "keep_cases", "judge"}
    step = next(s for s in plan if s["stage"] == "answers@builtin-full_context-0.3")
    assert step["cmd"] == (
        "compressbench stage answers --dataset builtin --method full_context --ratio 0.3"
    )
    assert "data/answers/builtin/full_context/0.3.stats.json" in step["outs"]


def test_study_answer_lengths_are_the_carried_answers_means() -> None:
    lengths: dict[str, list[int]] = defaultdict(list)
    path = REPO_ROOT / "benchmarks/results/sgd_cpu_qwen15_answers.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            gen = json.loads(json.loads(line)["generation"])
            kind = gen["id"].split("|")[0]
            lengths[kind if kind in ("P1", "P2", "P3") else "deletions"].append(gen["tokens_out"])
    means = {k: round(statistics.mean(v), 1) for k, v in lengths.items()}
    assert means == paper_grid.STUDY_ANSWER_TOKENS


def test_table3_and_its_extrapolation() -> None:
    cells = paper_grid.table3()
    assert sum(c.prompts for c in cells if not c.kv and c.method != "deletions") == 26256
    assert sum(c.prompts for c in cells if c.kv) == 4 * (128 + 161)
    assert sum(c.prompts for c in cells if c.method == "deletions") == 5 * (128 + 161) == 1445
    one = [paper_grid.Cell("r", "sgd", "P3", "recency", 0.3, 100, 128, False),
           paper_grid.Cell("r", "sgd", "P2", "deletions", 0.3, 10, 128, False)]  # fmt: skip
    est = paper_grid.extrapolate(
        one, {"a": 70.7, "b": 27.9}, lambda c: "b" if c.method == "deletions" else "a",
        answer_tokens={"P3": 70.7, "deletions": 27.9}, loads=2, load_seconds=10.0,
    )  # fmt: skip
    assert est["parts"]["a"]["seconds"] == 100.0 and est["parts"]["b"]["seconds"] == 10.0
    assert est["seconds"] == 130.0 and est["prompts"] == 110


def test_paper_grid_counts() -> None:
    """As run: per reader and dataset, P1 and P3 for 8 methods x 3 seeds x 200 rows, P2 for
    8 methods at r = 0.10 and 0.30 and 5 at 0.50 and 0.70 (26 x the seeds' P2 rows: SGD 385,
    MultiWOZ 497), plus four presses on Llama P2 seed 42 (SGD 128, MultiWOZ 161)."""
    cells = paper_grid.grid("as_run")
    per_reader = 2 * 8 * 600 * 2 + 26 * (385 + 497)
    assert sum(c.prompts for c in cells) == 2 * per_reader + 4 * (128 + 161)
    assert sum(c.prompts for c in cells if c.kv) == 4 * (128 + 161)
    assert len(cells) == 4 * 42 + 2 * 4
    assert {c.new_tokens for c in cells if c.reader.startswith("mistral")} == {128}
    full = paper_grid.grid("full_factorial")
    assert len(full) == 2 * 2 * 3 * 12 * 4
    with pytest.raises(ValueError, match="as_run"):
        paper_grid.grid("nope")


def test_gpu_hours_arithmetic() -> None:
    cells = [paper_grid.Cell("r", "sgd", "P2", "recency", 0.3, 3600, 100, False)]
    est = paper_grid.gpu_hours(
        cells, prompt_tokens=1000, prefill_tps=1000, decode_tps_serial=100, decode_tps_batched=400
    )
    assert est["prefill_hours"] == 1.0  # 3600 prompts x 1 s
    assert est["gpu_hours_one_at_a_time"] == 2.0  # + 360,000 tokens / 100 per s
    assert est["gpu_hours_batched"] == 1.25


def test_kvpress_loads_bare_from_a_wheel(tmp_path: Path) -> None:
    """A zip of kvpress's package (what a wheel is) loads without running its __init__."""
    spec = importlib.util.find_spec("kvpress")  # locates the installed package, no import
    assert spec is not None and spec.origin is not None
    package = Path(spec.origin).parent
    wheel = tmp_path / "kvpress-0.0.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path in package.rglob("*.py"):
            if path != package / "__init__.py":
                zf.write(path, path.relative_to(package.parent).as_posix())
        # a package __init__ that would fail if run: the bare loader must not run it
        zf.writestr("kvpress/__init__.py", "raise ImportError('kvpress __init__ ran')\n")
    code = (
        "import sys\n"
        "from compressbench.compress.kv.vendored import find_wheel, load_kvpress\n"
        f"kv, how = load_kvpress(find_wheel({str(tmp_path)!r}))\n"
        "from compressbench.compress.presses import get_press\n"
        "p = get_press('chunkkv', 0.3)\n"
        "print(how, type(p).__name__, type(p.press).__name__, p.press.compression_ratio)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    how, cls, inner, ratio = proc.stdout.split()
    assert how == f"bare:{wheel}/kvpress"
    assert (cls, inner, float(ratio)) == ("ChunkKVPress", "SnapKVPress", 0.7)


def test_reader_records_no_cuda_memory_on_cpu() -> None:
    import torch

    from compressbench.readers.env import cuda_peak_memory

    assert cuda_peak_memory(torch.device("cpu")) == {}
