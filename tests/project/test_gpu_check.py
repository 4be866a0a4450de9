"""The GPU check script in its --small CPU mode, its grid, and kvpress loaded from a wheel."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from compressbench.readers import synthetic
from compressbench.tpbench import paper_grid
from support.paths import REPO_ROOT


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}


def test_small_run_measures_every_phase(tmp_path: Path) -> None:
    out = tmp_path / "gpu_check.json"
    cmd = [
        sys.executable,
        str(REPO_ROOT / "scripts" / "gpu_check.py"),
        "--small",
        "--out",
        str(out),
    ]
    cmd += ["--prompts", "3", "--new-tokens", "2", "--budget-s", "600", "--wheels", str(tmp_path)]
    proc = subprocess.run(
        cmd, cwd=REPO_ROOT, env=_env(), capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["done"]["total_s"] > 0
    assert "environment" in proc.stdout  # progress is printed as it goes
    # the word-level tokenizer makes every templated prompt exactly the requested length
    assert data["prefill"]["prompt_tokens"] == [n // 2 for n in synthetic.P2_LENGTHS[:3]]
    assert data["prefill"]["one_at_a_time"]["prompts"] == 3
    for key in ("generate_one_at_a_time", "generate_batched"):
        assert data[key]["prompts"] == 3 and data[key]["output_tokens"] == 6, data[key]
    assert data["generate_batched"]["batch_size"] == 8
    small = synthetic.SMALL
    kv = 2 * small["num_hidden_layers"] * small["num_key_value_heads"] * small["head_dim"] * 4
    assert data["decode_bound"]["kv_bytes_per_token"] == kv
    presses = data["presses"]
    assert presses["kvpress"] == "installed"  # no wheel in tmp_path: the installed package
    for name in ("snapkv", "pyramidkv", "streamingllm", "chunkkv"):
        assert presses[name]["prompts"] == 3, presses[name]
        assert presses[name]["positions_recovered"] == 3
        assert 0.3 < presses[name]["kept_fraction_mean"] < 0.7  # r = 0.5
    assert presses["chunkkv"]["mode"] == "context_only"
    assert presses["snapkv"]["mode"] == "full_prompt"
    est = data["grid_estimate"]
    assert est["as_run"]["prompts"] == 85420
    assert est["as_run"]["gpu_hours_batched"] > 0 and "eos" in est["assumptions"]


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
