"""The hf reader's decode modes: ``fast`` (static cache, padded widths) is labelled in every
answer cache key and leaves ``paper``'s keys as they were; it answers a tiny random Llama in
fp32 on CPU as ``paper`` does; ``params.yaml`` names it under ``reader.decode_mode``."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")

from compressbench.config import parse_params  # noqa: E402
from compressbench.errors import InputError  # noqa: E402
from compressbench.readers import chat, synthetic  # noqa: E402
from compressbench.readers.cache import cache_key, key_payload  # noqa: E402
from compressbench.readers.decode_modes import FAST, PAPER, get_decode_mode, mode_of  # noqa: E402
from compressbench.readers.hf import HFReader  # noqa: E402
from compressbench.readers.registry import reader_parameters  # noqa: E402


@pytest.fixture(scope="module")
def lm() -> tuple[Any, Any]:
    cfg = {**synthetic.SMALL, "num_hidden_layers": 2}
    model = synthetic.build_model(cfg, torch.device("cpu"), torch.float32, "sdpa")
    tok = chat.prepare_tokenizer(synthetic.build_tokenizer(cfg["vocab_size"], 1000, 1001))
    return model, tok


def test_modes_are_declared_and_paper_adds_nothing_to_the_key() -> None:
    assert "decode_mode" in reader_parameters("hf")
    assert PAPER.decoding() == {} and PAPER.cache_implementation is None
    assert FAST.decoding()["decode_mode"] == "fast" and FAST.cache_implementation == "static"
    assert (PAPER.padded_width(70), FAST.padded_width(70), FAST.padded_width(128)) == (70, 128, 128)
    assert mode_of({}) == "paper" and mode_of(FAST.decoding()) == "fast"
    with pytest.raises(ValueError, match="paper, fast"):
        get_decode_mode("turbo")


def test_fast_mode_answers_as_paper_and_keys_differ(lm: tuple[Any, Any]) -> None:
    model, tok = lm
    requests = synthetic.make_requests(tok, [130, 150, 170, 200, 240], 12, 900)
    paper = synthetic.in_memory_reader(model, tok, torch.device("cpu"), 1, "paper")
    fast = synthetic.in_memory_reader(model, tok, torch.device("cpu"), 4, "fast")
    a = paper.generate(requests)
    b = fast.generate(requests)
    assert [(g.raw, g.tokens_out) for g in b] == [(g.raw, g.tokens_out) for g in a]
    assert [g.tokens_in for g in b] == [g.tokens_in for g in a]  # padding is not counted
    assert {g.provenance["batch_size"] for g in b} == {4, 1}
    assert b[0].provenance["decoding"]["decode_mode"] == "fast"
    assert "decode_mode" not in a[0].provenance["decoding"]
    # one static cache per batch shape: (4 rows, 192 + 12) then (1 row, 256 + 12)
    assert fast.static_caches.built == 2 and fast.static_caches.shape == (1, 268)
    fast.generate(requests[-1:])
    assert fast.static_caches.built == 2  # the same shape again: the cache is reset, not rebuilt
    assert cache_key(paper, requests[0]) != cache_key(fast, requests[0])
    assert "decode_mode" not in key_payload(paper, requests[0])["decoding"]


def test_reader_decode_mode_in_params() -> None:
    base: dict[str, Any] = {
        "corpora": {"builtin": {"source": "builtin"}},
        "datasets": ["builtin"],
        "methods": ["full_context"],
    }
    assert parse_params(base).reader.decode_mode == "paper"
    fast = parse_params({**base, "reader": {"backend": "hf", "decode_mode": "fast"}})
    assert fast.reader.decode_mode == "fast"
    with pytest.raises(InputError, match=r"reader\.decode_mode.*paper, fast"):
        parse_params({**base, "reader": {"decode_mode": "turbo"}})
    with pytest.raises(InputError, match=r"reader\.decode_mode.*hf backend's, not llamacpp's"):
        parse_params({**base, "reader": {"backend": "llamacpp", "decode_mode": "fast"}})


def test_hf_reader_signature_declares_decode_mode() -> None:
    import inspect

    param = inspect.signature(HFReader).parameters["decode_mode"]
    assert param.default == "paper"
