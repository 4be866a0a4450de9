"""The paper's reader configurations (spec §6) as parameter files, applied by ``use-config``."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from compressbench.cli import main
from compressbench.config import load_params
from compressbench.tpbench.pipeline_spec import PROBES
from support.paths import REPO_ROOT

CONFIGS = REPO_ROOT / "configs" / "readers"
LLAMA = ("meta-llama/Llama-3.1-8B-Instruct", "0e9e39f249a16976918f6564b8830bc894c89659")
MISTRAL_REVISION = "c170c708c41dac9275d15a8fff4eca08d52bab71"
SELECTORS = [
    "full_context",
    "recency",
    "random_seed42",
    "first_n",
    "uniform_stride",
    "attention_h2o",
    "embedding_mmr",
    "llmlingua2",
    "first_user_recent",
]

# spec §6, per comparison: probes, backend, attention (hf only), new tokens of those probes,
# batch size (P1 batched by 8, P2/P3 serial; vLLM batches itself).
SPEC: dict[str, dict[str, Any]] = {
    "llama31_8b_hf_p1": dict(probes=["P1"], backend="hf", attn="eager", new={"P1": 96}, batch=8),
    "llama31_8b_hf_p2": dict(probes=["P2"], backend="hf", attn="eager", new={"P2": 96}, batch=1),
    "llama31_8b_hf_p3": dict(probes=["P3"], backend="hf", attn="sdpa", new={"P3": 128}, batch=1),
    "llama31_8b_hf_kv": dict(probes=["P2"], backend="hf", attn="sdpa", new={"P2": 96}, batch=1),
    "llama31_8b_vllm": dict(
        probes=["P1", "P2", "P3"], backend="vllm", new={"P1": 96, "P2": 96, "P3": 128}
    ),
    # fast mode (a labelled variant, docs/gpu.md): the paper's budgets, batches of 64
    "llama31_8b_hf_fast": dict(
        probes=["P1", "P2", "P3"],
        backend="hf",
        attn="sdpa",
        new={"P1": 96, "P2": 96, "P3": 128},
        batch=64,
    ),
    "llama31_8b_hf_fast_kv": dict(
        probes=["P2"], backend="hf", attn="sdpa", new={"P2": 96}, batch=64
    ),
    "mistral7b_hf_p2": dict(probes=["P2"], backend="hf", attn="sdpa", new={"P2": 128}, batch=1),
    "mistral7b_hf_p3": dict(probes=["P3"], backend="hf", attn="eager", new={"P3": 128}, batch=1),
    "mistral7b_vllm": dict(probes=["P2", "P3"], backend="vllm", new={"P2": 128, "P3": 128}),
}


def test_every_config_file_is_pinned() -> None:
    assert sorted(p.stem for p in CONFIGS.glob("*.yaml")) == sorted(SPEC)


@pytest.mark.parametrize("name", sorted(SPEC))
def test_config_has_the_spec_settings(name: str) -> None:
    want = SPEC[name]
    raw = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text(encoding="utf-8"))
    reader = raw["reader"]
    assert raw["probes"] == want["probes"]
    assert reader["backend"] == want["backend"]
    assert reader["dtype"] == "bfloat16" and reader["max_input_tokens"] == 7168
    if name.startswith("llama"):
        assert (reader["model"], reader["revision"]) == LLAMA
    else:
        assert reader["model"].startswith("mistralai/Mistral-7B-Instruct")
        assert reader["revision"] == MISTRAL_REVISION
    assert {p: reader["max_new_tokens"][p] for p in want["probes"]} == want["new"]
    assert reader.get("attn_implementation") == want.get("attn")
    assert reader.get("batch_size") == want.get("batch")
    assert reader.get("worker") is True  # a GPU run loads the weights once (commands/worker.py)
    assert reader.get("decode_mode", "paper") == ("fast" if "_fast" in name else "paper")
    if name.endswith("_kv"):
        assert raw["methods"] == ["full_context", "snapkv", "pyramidkv", "streamingllm", "chunkkv"]
    if want["backend"] == "vllm":  # kvpress has no vLLM path: turn selectors only
        assert raw["methods"] == SELECTORS


@pytest.fixture()
def params_copy(tmp_path: Path) -> Path:
    target = tmp_path / "params.yaml"
    shutil.copy(REPO_ROOT / "params.yaml", target)
    return target


@pytest.mark.parametrize("name", sorted(SPEC))
def test_use_config_applies_one_file(
    name: str, params_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = load_params(params_copy)
    code = main(["use-config", str(CONFIGS / f"{name}.yaml"), "--params", str(params_copy)])
    assert code == 0
    assert "changed reader.revision: null -> " in capsys.readouterr().out
    after = load_params(params_copy)
    want = SPEC[name]
    assert list(PROBES.of(after)) == want["probes"]
    assert after.reader.backend == want["backend"] and after.reader.dtype == "bfloat16"
    assert after.reader.revision in (LLAMA[1], MISTRAL_REVISION)
    assert {p: after.reader.max_new_tokens[p] for p in want["probes"]} == want["new"]
    # Everything the file does not name is kept, comments included.
    assert after.datasets == before.datasets and after.corpora == before.corpora
    assert after.tracking == before.tracking and after.seeds == before.seeds
    assert after.reader.concurrency == before.reader.concurrency
    assert "# compressbench pipeline parameters" in params_copy.read_text(encoding="utf-8")

    # Applying it again changes nothing.
    snapshot = params_copy.read_bytes()
    assert main(["use-config", str(CONFIGS / f"{name}.yaml"), "--params", str(params_copy)]) == 0
    assert "already as" in capsys.readouterr().out
    assert params_copy.read_bytes() == snapshot


def test_dry_run_writes_nothing(params_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = params_copy.read_bytes()
    config = str(CONFIGS / "llama31_8b_hf_p2.yaml")
    assert main(["use-config", config, "--params", str(params_copy), "--dry-run"]) == 0
    out = capsys.readouterr().out
    change = '"qwen2.5-coder-1.5b-instruct" -> "meta-llama/Llama-3.1-8B-Instruct"'
    assert f"would change reader.model: {change}" in out
    assert params_copy.read_bytes() == snapshot


@pytest.mark.parametrize(
    ("overlay", "expected"),
    [
        ("reader:\n  modle: x\n", "field 'reader': unknown key(s) modle"),
        ("reader:\n  attn_implementation: fast\n", "field 'reader.attn_implementation'"),
        ("- just a list\n", "expected a non-empty mapping of parameters"),
        ("reader: [unclosed\n", "invalid YAML"),
    ],
)
def test_bad_config_is_one_line_and_leaves_params_alone(
    overlay: str,
    expected: str,
    params_copy: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(overlay, encoding="utf-8")
    snapshot = params_copy.read_bytes()
    assert main(["use-config", str(bad), "--params", str(params_copy)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and expected in err and "bad.yaml" in err
    assert params_copy.read_bytes() == snapshot
