"""Check ``reader``: the Hub (a real local server as ``HF_ENDPOINT``), OpenAI-compatible servers
(a real one on loopback and a closed port), packaged and local models."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from compressbench.doctor.base import Context, Options, Result
from compressbench.doctor.checks import run_one
from support.http_server import Routes, json_route

Serve = Callable[[Routes], str]
REV = "0e9e39f249a16976918f6564b8830bc894c89659"
TINY = {"model_type": "llama", "vocab_size": 64, "hidden_size": 16, "intermediate_size": 32,
        "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1}  # fmt: skip


def check(name: str, params: Path, **options: object) -> Result:
    return run_one(name, Context(Options(params=params, **options)))  # type: ignore[arg-type]


def hub_routes(repo: str, rev: str = "main", **errors: str) -> Routes:
    """A Hub serving ``config.json`` of ``repo`` at ``rev``; ``error=<X-Error-Code>`` refuses."""
    path = f"/{repo}/resolve/{rev}/config.json"
    if errors:
        return {path: json_route({"error": "no"}, 403 if "Gated" in errors["error"] else 404,
                                 **{"X-Error-Code": errors["error"]})}  # fmt: skip
    return {path: json_route(TINY, ETag='"abc"', **{"X-Repo-Commit": REV})}


def test_gated_model_without_token_fails_naming_the_token(
    doctor: Callable[..., subprocess.CompletedProcess[str]],
    write_params: Callable[..., Path],
    closed_port: int,
) -> None:
    params = write_params({"backend": "hf", "model": "meta-llama/Llama-3.1-8B-Instruct"})
    proc = doctor("--params", str(params), "--only", "reader",
                  env={"HF_ENDPOINT": f"http://127.0.0.1:{closed_port}"})  # fmt: skip
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        "FAIL  reader      meta-llama/Llama-3.1-8B-Instruct is gated and no Hugging Face token "
        "is set (HF_TOKEN or `hf auth login`)"
    ]


def test_hub_model_reachable_passes(
    serve: Serve, write_params: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", serve(hub_routes("meta-llama/Tiny", REV)))
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    params = write_params({"backend": "hf", "model": "meta-llama/Tiny", "revision": REV})
    result = check("reader", params)
    assert result.status == "PASS", result.summary
    assert "meta-llama/Tiny@0e9e39f2: config.json answers" in result.summary
    assert "token set" in result.summary


@pytest.mark.parametrize(
    ("error", "says"),
    [
        ("GatedRepo", "the token has no access to this gated repo"),
        ("RepoNotFound", "no such repo"),
        ("RevisionNotFound", "is not in the repo"),
    ],
)
def test_hub_refusals_fail_with_the_reason(
    serve: Serve,
    write_params: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    error: str,
    says: str,
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", serve(hub_routes("meta-llama/Tiny", REV, error=error)))
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    params = write_params({"backend": "hf", "model": "meta-llama/Tiny", "revision": REV})
    result = check("reader", params)
    assert result.status == "FAIL" and says in result.summary, result.summary


def test_hub_unreachable_fails(
    write_params: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, closed_port: int
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    params = write_params({"backend": "hf", "model": "someone/open-model"})
    result = check("reader", params, timeout=2.0)
    assert result.status == "FAIL" and "unreachable" in result.summary, result.summary


def models(*ids: str) -> Routes:
    return {"/v1/models": json_route({"object": "list", "data": [{"id": i} for i in ids]})}


def test_openai_server_listing_the_model_passes(
    serve: Serve, write_params: Callable[..., Path]
) -> None:
    url = serve(models("llama-3.1-8b", "other")) + "/v1"
    params = write_params({"backend": "openai", "model": "llama-3.1-8b", "base_url": url})
    result = check("reader", params)
    assert result.status == "PASS", result.summary
    # then the reader KEEP-Bench's `llm` compressor writes with (the shipped params: llama.cpp)
    first, keep = result.summary.split("; ")
    assert first == f"1 server(s) list 'llama-3.1-8b': {url}"
    assert keep.startswith("keepbench.compressors.llm (llamacpp): packaged qwen2.5-coder-1.5b")


def test_openai_server_on_a_closed_port_fails(
    write_params: Callable[..., Path], closed_port: int
) -> None:
    url = f"http://127.0.0.1:{closed_port}/v1"
    params = write_params({"backend": "openai", "model": "m", "base_url": url})
    result = check("reader", params)
    assert result.status == "FAIL"
    assert result.summary == f"{url}/models unreachable: Connection refused"


def test_openai_pool_fails_on_its_bad_server_and_on_a_model_not_served(
    serve: Serve, write_params: Callable[..., Path], closed_port: int
) -> None:
    good = serve(models("m")) + "/v1"
    params = write_params({"backend": "openai", "model": "m"})
    bad = f"http://127.0.0.1:{closed_port}/v1"
    result = check("reader", params, base_urls=(good, bad))
    assert result.status == "FAIL" and "(server 2 of 2)" in result.summary, result.summary
    assert check("reader", params, base_urls=(good, good)).status == "PASS"
    other = serve(models("x", "y")) + "/v1"
    result = check("reader", params, base_urls=(other,))
    assert result.status == "FAIL"
    assert "does not list model 'm'" in result.summary and "x, y" in result.summary


def test_packaged_and_local_models(write_params: Callable[..., Path], tmp_path: Path) -> None:
    result = check("reader", write_params({"backend": "llamacpp", "model": "smollm2"}))
    assert result.status == "PASS" and result.summary.startswith("packaged smollm2-135m-instruct")
    missing = tmp_path / "nowhere" / "model.gguf"
    params = write_params({"backend": "llamacpp", "model": str(missing)})
    result = check("params", params)  # a llamacpp model that is not there is invalid params
    assert result.status == "FAIL" and "field 'reader.model'" in result.summary
    assert f"{str(missing)!r} is neither a packaged model" in result.summary
    assert check("reader", params).status == "SKIP"
    folder = tmp_path / "local-model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"\0" * 2048)
    result = check("reader", write_params({"backend": "hf", "model": str(folder)}))
    assert result.status == "PASS"
    assert result.summary.split("; ")[0] == f"local model {folder} (0.0 MiB)"
