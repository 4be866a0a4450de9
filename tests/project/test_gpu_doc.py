"""docs/gpu.md stays true: its GPU-hour figures follow from the measured H200 run and the paper's
grid, and the parameter files it applies exist and apply cleanly on top of each other."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from compressbench.cli import main
from compressbench.config import load_params
from compressbench.tpbench import paper_grid
from support.paths import REPO_ROOT

DOC = (REPO_ROOT / "docs" / "gpu.md").read_text(encoding="utf-8")
RUN = json.loads((REPO_ROOT / "benchmarks/results/gpu_check_h200_2026-11-30.json").read_text())


def table3() -> tuple[Counter[str], Counter[str]]:
    """Prompts and answer tokens per probe of Table 3's turn-selector cells (Llama, r = 0.30)."""
    prompts: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    for cell in paper_grid.grid("as_run"):
        if cell.reader.startswith("llama") and cell.ratio == 0.3 and not cell.kv:
            prompts[cell.probe] += cell.prompts
            tokens[cell.probe] += cell.prompts * cell.new_tokens
    return prompts, tokens


def test_the_cost_figures_follow_from_the_measurements() -> None:
    prefill = RUN["prefill"]["one_at_a_time"]
    mean = prefill["tokens"] / prefill["prompts"]
    serial = RUN["generate_one_at_a_time"]["decode_tokens_per_s"]
    batched = RUN["generate_batched"]["decode_tokens_per_s"]
    press = RUN["presses"]["chunkkv"]["seconds_per_prompt"]
    prompts, tokens = table3()
    assert dict(prompts) == {"P1": 9600, "P2": 7056, "P3": 9600}
    rate = {"P1": batched, "P2": serial, "P3": serial}
    hours = {p: (prompts[p] * mean / prefill["tokens_per_s"] + tokens[p] / rate[p]) / 3600
             for p in prompts}  # fmt: skip
    kv = (289 * press + 400 * press * 128 / 96) / 3600  # ChunkKV P2 + P3, seed 42
    for probe, text in (("P1", "2.16"), ("P2", "5.03"), ("P3", "9.07")):
        assert f"{hours[probe]:.2f}" == text and f"| {text} |" in DOC
    assert f"| {kv:.2f} |" in DOC
    assert f"**{sum(hours.values()) + kv:.1f}**" in DOC
    deletions = 289 * 5 * (mean / prefill["tokens_per_s"] + 128 / serial) / 3600
    assert f"1,445 prompts of 128 tokens, {deletions:.1f} hours" in DOC
    bound = RUN["decode_bound"]
    step = (bound["weight_bytes"] + 64 * bound["context_tokens"] * bound["kv_bytes_per_token"]) / (
        bound["bandwidth_bytes_per_s"]
    )
    vllm = (sum(prompts.values()) * mean / prefill["tokens_per_s"]
            + sum(tokens.values()) / (0.25 * 64 / step)) / 3600  # fmt: skip
    assert f"{64 / step:,.0f} tokens/s" in DOC and f"**{vllm:.1f} hours**" in DOC
    assert f"{vllm + kv:.1f} with ChunkKV" in DOC
    whole = RUN["grid_estimate"]["as_run"]
    assert f"{whole['gpu_hours_one_at_a_time']:.1f} hours one prompt at a time" in DOC
    assert f"{whole['gpu_hours_batched']:.1f} batched by 8" in DOC


def test_the_configs_it_applies_exist_and_apply_in_order(tmp_path: Path) -> None:
    named = sorted(set(re.findall(r"configs/(?:readers|studies)/\w+\.yaml", DOC)))
    assert "configs/studies/paper_table3.yaml" in named
    for name in named:
        assert (REPO_ROOT / name).is_file(), name
    for reader in (n for n in named if "/readers/" in n):
        params = tmp_path / f"{Path(reader).stem}.yaml"
        shutil.copy(REPO_ROOT / "params.yaml", params)
        for fragment in ("configs/studies/paper_table3.yaml", reader):
            assert main(["use-config", str(REPO_ROOT / fragment), "--params", str(params)]) == 0
        loaded = load_params(params)
        assert loaded.datasets == ("sgd_upstream", "multiwoz_upstream")
        assert loaded.seeds == (42, 43, 44) and loaded.n_per_cell == 200
        assert loaded.corpora["sgd_upstream"].splits == ("test",)
        assert loaded.reader.model == "meta-llama/Llama-3.1-8B-Instruct"


@pytest.mark.parametrize("check", ["params", "gpu", "versions", "image", "reader", "disk",
                                   "gpu-memory", "tracking"])  # fmt: skip
def test_every_doctor_check_is_documented(check: str) -> None:
    from compressbench.doctor.checks import check_names

    assert check in check_names() and f"| `{check}` |" in DOC
