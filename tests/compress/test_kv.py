"""KV-cache presses via kvpress on the real default reader (SmolLM2-135M-Instruct, CPU).

Checks that every preset really shrinks the cache to the requested fraction (measured from the
cache, per layer), that context-only mode leaves the question uncompressed, that any kvpress
press works by class name, that modes and fallbacks are recorded, and that generation under a
no-op press equals plain greedy ``generate``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from support.hotel_dialogue import HOTEL_TEXTS

kvpress = pytest.importorskip("kvpress")

from compressbench.compress.kv.build import build_press, press_spec  # noqa: E402
from compressbench.compress.kv.generate import (  # noqa: E402
    generate_ids_with_press,
    generate_with_press,
    split_prompt,
)
from compressbench.compress.kv.hook import KVPressHook  # noqa: E402
from compressbench.compress.kv.presets import PRESS_PRESETS, compression_ratio_for  # noqa: E402
from compressbench.compress.presses import get_preset, get_press  # noqa: E402

SYSTEM = (
    "You are reading a conversation that may be partial or compressed. Answer ONLY using the "
    "provided context. Reply with a single JSON object and no other text. Do not add markdown "
    "fences."
)
TURNS = [
    *HOTEL_TEXTS[:-1],
    HOTEL_TEXTS[-1] + " Anything else?",
    "Can you recommend a restaurant near the hotel serving Italian food?",
    "Pizza Hut Fen Ditton is nearby and serves Italian food. Want a table?",
    "Yes, a table for two at 7 pm on Friday.",
    "Your table is booked, reference 55TRQ1.",
]
QUESTION = (
    "After the most recent change visible in the context, what is the user's CURRENT value for "
    "number of nights? Reply with one short value."
)
SCHEMA = (
    '{"value": <string>, "support": <verbatim span from context, <= 30 words>, '
    '"abstain": <true if you cannot tell, else false>}'
)
MAX_NEW = 6


def user_prompt(turns: list[str]) -> str:
    speakers = ("USER", "SYSTEM")
    context = "\n".join(f"[T{i}] {speakers[i % 2]}: {t}" for i, t in enumerate(turns))
    return (
        "Context:\n"
        + context
        + "\n\nQuestion: "
        + QUESTION
        + "\n\nRequired JSON schema:\n"
        + SCHEMA
        + "\nReply with only the JSON object."
    )


@pytest.fixture(scope="module")
def lm() -> Iterator[tuple[Any, Any]]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from compressbench.readers.smollm import prepare_default_model

    start = time.perf_counter()
    path = prepare_default_model().path
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(
        path, dtype=torch.float32, attn_implementation="sdpa"
    )
    model.eval()
    print(f"SmolLM2 load: {time.perf_counter() - start:.2f}s")
    yield model, tokenizer


def templated(tokenizer: Any, turns: list[str] = TURNS) -> str:
    return str(
        tokenizer.apply_chat_template(
            [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": user_prompt(turns)},
            ],
            tokenize=False,
            add_generation_prompt=True,
        )
    )


def split_ids(tokenizer: Any, prompt: str) -> tuple[list[int], list[int]]:
    parts = split_prompt(prompt, "\n\nQuestion:")
    assert parts is not None
    ctx = tokenizer(parts[0], add_special_tokens=False)["input_ids"]
    q = tokenizer(parts[1], add_special_tokens=False)["input_ids"]
    return list(ctx), list(q)


# -- no model needed ----------------------------------------------------------------------------


def test_build_press_by_name_and_nested_spec() -> None:
    snap = build_press("SnapKVPress", compression_ratio=0.7, window_size=64, kernel_size=5)
    assert isinstance(snap, kvpress.SnapKVPress)
    assert (snap.compression_ratio, snap.window_size, snap.kernel_size) == (0.7, 64, 5)
    spec = {
        "name": "ChunkKVPress",
        "chunk_length": 20,
        "press": {"name": "SnapKVPress", "compression_ratio": 0.7, "window_size": 64},
    }
    chunk = build_press(spec)
    assert isinstance(chunk, kvpress.ChunkKVPress) and isinstance(chunk.press, kvpress.SnapKVPress)
    assert chunk.compression_ratio == 0.7 and chunk.chunk_length == 20
    assert build_press(press_spec(chunk)) == chunk  # spec round trip
    assert press_spec(snap) == {
        "name": "SnapKVPress",
        "compression_ratio": 0.7,
        "window_size": 64,
        "kernel_size": 5,
    }
    with pytest.raises(KeyError, match="unknown kvpress press"):
        build_press("NoSuchPress")
    with pytest.raises(TypeError, match="SnapKVPress"):
        build_press("SnapKVPress", no_such_field=1)


def test_presets_registry() -> None:
    assert compression_ratio_for(0.3) == 0.7 and compression_ratio_for(0.1) == 0.9
    with pytest.raises(ValueError):
        compression_ratio_for(0.0)
    snap = get_press("snapkv", 0.3)
    assert set(PRESS_PRESETS) >= {"snapkv", "pyramidkv", "streamingllm", "chunkkv"}
    assert isinstance(snap, kvpress.SnapKVPress)
    assert (snap.compression_ratio, snap.window_size, snap.kernel_size) == (0.7, 64, 5)
    pyr = get_press("pyramidkv", 0.3)
    assert isinstance(pyr, kvpress.PyramidKVPress) and (pyr.window_size, pyr.kernel_size) == (64, 5)
    stream = get_press("streamingllm", 0.3)
    assert isinstance(stream, kvpress.StreamingLLMPress) and stream.n_sink == 4
    chunk = get_press("chunkkv", 0.3)
    assert isinstance(chunk, kvpress.ChunkKVPress) and chunk.chunk_length == 20
    assert (chunk.press.compression_ratio, chunk.press.window_size) == (0.7, 64)
    assert get_press("chunkkv", 0.3, chunk_length=40).chunk_length == 40
    assert get_preset("chunkkv").default_mode == "context_only"
    assert get_preset("snapkv").default_mode == "full_prompt"
    knorm = get_press("KnormPress", 0.5)  # any kvpress class by name, ratio from r
    assert isinstance(knorm, kvpress.KnormPress) and knorm.compression_ratio == 0.5
    with pytest.raises(KeyError):
        get_preset("nope")


# -- real model ---------------------------------------------------------------------------------


def expected_kept(preset: str, n: int, r: float) -> tuple[int, int]:
    """(expected mean kept entries, tolerance) for a uniform-budget context of n tokens."""
    if preset == "chunkkv":  # max(1, int(n_chunks * r)) whole chunks of 20 (one may be short)
        chunks = max(1, int(-(-n // 20) * r))
        return chunks * 20, 20 - n % 20 if n % 20 else 0
    if preset == "pyramidkv":
        return round(n * r), 1  # short context: kvpress falls back to a uniform budget
    return int(n * r), 0  # SnapKV / StreamingLLM: int(n * (1 - compression_ratio))


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["snapkv", "pyramidkv", "streamingllm", "chunkkv"])
@pytest.mark.parametrize("r", [0.3, 0.1])
def test_preset_shrinks_cache_to_requested_fraction(
    lm: tuple[Any, Any], preset: str, r: float
) -> None:
    model, tokenizer = lm
    prompt = templated(tokenizer)
    press = get_press(preset, r)
    start = time.perf_counter()
    text, rec = generate_with_press(model, tokenizer, prompt, press, MAX_NEW, "context_only")
    seconds = time.perf_counter() - start
    ctx, q = split_ids(tokenizer, prompt)
    assert rec.mode == "context_only" and rec.fallback_reason is None
    assert rec.context_tokens == len(ctx) and rec.question_tokens == len(q)
    assert rec.compression_ratio == pytest.approx(1 - r)
    assert rec.budget_unit == "kv_cache_entries"
    n_layers = model.config.num_hidden_layers
    assert len(rec.kept_entries_per_layer) == n_layers
    want, tol = expected_kept(preset, len(ctx), r)
    mean = sum(rec.kept_entries_per_layer) / n_layers
    assert abs(mean - want) <= tol, (preset, rec.kept_entries_per_layer, want)
    assert all(want - tol <= k <= want for k in rec.kept_entries_per_layer)
    # the requested fraction: exact up to int rounding, ChunkKV within two chunks (it floors the
    # number of kept chunks and one chunk may be the short remainder)
    assert abs(mean - r * len(ctx)) <= (40 if preset == "chunkkv" else 1)
    assert rec.kept_fraction == pytest.approx(mean / len(ctx))
    # the question was appended uncompressed to every layer
    assert rec.cache_entries_after_question == [k + len(q) for k in rec.kept_entries_per_layer]
    uneven = len(set(rec.kept_entries_per_layer)) > 1  # e.g. ChunkKV's short remainder chunk
    assert rec.question_feed == ("token_by_token" if uneven else "block")
    # kept positions recovered from the cache and decodable
    assert rec.kept_tokens_unavailable_reason is None
    assert rec.kept_positions is not None and rec.kept_positions_any is not None
    assert set(rec.kept_positions) <= set(rec.kept_positions_any)
    assert all(0 <= p < len(ctx) for p in rec.kept_positions_any)
    assert rec.kept_token_text
    if preset == "streamingllm":
        kept = rec.kept_entries_per_layer[0]
        expect = list(range(4)) + list(range(len(ctx) - (kept - 4), len(ctx)))
        assert rec.kept_positions == expect == rec.kept_positions_any
    if preset == "chunkkv":  # whole 20-token chunks (the same in every head of a layer)
        kept_any = set(rec.kept_positions_any)
        for p in kept_any:
            start = p - p % 20
            assert set(range(start, min(start + 20, len(ctx)))) <= kept_any
    print(
        f"{preset} r={r}: context {len(ctx)} -> kept {rec.kept_entries_per_layer[0]}"
        f" (+{len(q)} question) in {seconds:.2f}s; answer {text!r}"
    )


@pytest.mark.slow
def test_context_only_keeps_question_keys_uncompressed(lm: tuple[Any, Any]) -> None:
    import torch
    from transformers import DynamicCache

    model, tokenizer = lm
    ctx, q = split_ids(tokenizer, templated(tokenizer))
    press = get_press("streamingllm", 0.3)
    cache = DynamicCache()
    new, info = generate_ids_with_press(model, tokenizer, ctx, q, press, 3, cache=cache)
    kept = info["kept_entries_per_layer"][0]
    # reference: one uncompressed pass over context + question
    ref = DynamicCache()
    with torch.inference_mode():
        model(input_ids=torch.tensor([ctx + q]), past_key_values=ref, use_cache=True)
    ref_layer, got_layer = ref.layers[0].keys, cache.layers[0].keys
    assert ref_layer is not None and got_layer is not None
    ref_keys = ref_layer[0]  # [kv_heads, C + Q, d]
    got = got_layer[0]  # [kv_heads, kept + Q + generated - 1, d]
    # layer-0 keys depend only on token and position: question keys must match exactly
    torch.testing.assert_close(
        got[:, kept : kept + len(q)], ref_keys[:, len(ctx) :], atol=1e-4, rtol=1e-4
    )
    # and the kept context keys (stored in the press's top-k order, not by position) are the
    # prefill keys at the recorded positions
    for h in range(got.shape[0]):
        dist = torch.cdist(
            got[h, :kept], ref_keys[h, : len(ctx)], compute_mode="donot_use_mm_for_euclid_dist"
        )
        nearest = dist.argmin(dim=1)
        assert float(dist.min(dim=1).values.max()) < 1e-3
        assert sorted(nearest.tolist()) == info["kept_positions"]
    assert got.shape[1] == kept + len(q) + len(new) - 1


@pytest.mark.slow
def test_noop_press_equals_plain_greedy_generate(lm: tuple[Any, Any]) -> None:
    import torch

    model, tokenizer = lm
    ctx, q = split_ids(tokenizer, templated(tokenizer))
    press = build_press("SnapKVPress", compression_ratio=0.0)
    new, info = generate_ids_with_press(model, tokenizer, ctx, q, press, 12)
    assert info["kept_entries_per_layer"] == [len(ctx)] * model.config.num_hidden_layers
    with torch.inference_mode():
        out = model.generate(
            input_ids=torch.tensor([ctx + q]),
            attention_mask=torch.ones(1, len(ctx) + len(q), dtype=torch.long),
            max_new_tokens=12,
            do_sample=False,
            pad_token_id=tokenizer.eos_token_id,
        )
    assert new == out[0, len(ctx) + len(q) :].tolist()[: len(new)]


@pytest.mark.slow
def test_full_prompt_mode_and_fallbacks_are_recorded(lm: tuple[Any, Any]) -> None:
    model, tokenizer = lm
    prompt = templated(tokenizer)
    press = get_press("snapkv", 0.3)
    _, full = generate_with_press(model, tokenizer, prompt, press, MAX_NEW, "full_prompt")
    n_full = len(tokenizer(prompt)["input_ids"])
    assert (full.mode_requested, full.mode, full.fallback_reason) == (
        "full_prompt",
        "full_prompt",
        None,
    )
    assert full.context_tokens == n_full and full.question_tokens == 0
    assert full.kept_entries_per_layer[0] == int(n_full * 0.3)
    assert full.cache_entries_after_question is None and full.question_feed is None
    # no marker -> full prompt, recorded
    _, no_marker = generate_with_press(
        model, tokenizer, prompt, press, MAX_NEW, "context_only", question_marker="\n\nQ>>"
    )
    assert (no_marker.mode_requested, no_marker.mode) == ("context_only", "full_prompt")
    assert "marker" in (no_marker.fallback_reason or "")
    # a context of <= window + 4 tokens -> full prompt, recorded
    short = templated(tokenizer, ["Hi."])
    n_short_ctx = len(split_ids(tokenizer, short)[0])
    assert len(tokenizer(short)["input_ids"]) > n_short_ctx + 4  # the full prompt can be pressed
    tiny = build_press("SnapKVPress", compression_ratio=0.7, window_size=n_short_ctx, kernel_size=5)
    _, fallback = generate_with_press(model, tokenizer, short, tiny, MAX_NEW, "context_only")
    assert fallback.mode == "full_prompt" and "window_size + 4" in (fallback.fallback_reason or "")
    assert fallback.to_dict()["fallback_reason"] == fallback.fallback_reason


@pytest.mark.slow
def test_any_press_by_name(lm: tuple[Any, Any]) -> None:
    model, tokenizer = lm
    prompt = templated(tokenizer)
    ctx, _ = split_ids(tokenizer, prompt)
    press = build_press("KnormPress", compression_ratio=0.5)
    _, rec = generate_with_press(model, tokenizer, prompt, press, MAX_NEW)
    assert rec.kept_entries_per_layer == [int(len(ctx) * 0.5)] * model.config.num_hidden_layers
    assert rec.press == {"name": "KnormPress", "compression_ratio": 0.5}
    assert rec.kept_tokens_unavailable_reason is None
    _, untracked = generate_with_press(model, tokenizer, prompt, press, 2, track_positions=False)
    assert untracked.kept_positions is None and untracked.kept_token_text is None
    assert "not tracked" in (untracked.kept_tokens_unavailable_reason or "")
    assert untracked.kept_entries_per_layer == rec.kept_entries_per_layer


@pytest.mark.slow
def test_uneven_layer_budgets_feed_the_question_token_by_token(lm: tuple[Any, Any]) -> None:
    model, tokenizer = lm
    prompt = templated(tokenizer)
    ctx, q = split_ids(tokenizer, prompt)
    press = build_press("PyramidKVPress", compression_ratio=0.7, window_size=16, beta=2)
    _, rec = generate_with_press(model, tokenizer, prompt, press, MAX_NEW)
    kept = rec.kept_entries_per_layer
    assert len(set(kept)) > 1 and kept[0] > kept[-1]  # a real pyramid
    assert abs(sum(kept) / len(kept) - 0.3 * len(ctx)) <= 2
    assert rec.question_feed == "token_by_token"
    assert rec.cache_entries_after_question == [k + len(q) for k in kept]


@pytest.mark.slow
def test_uneven_layer_budgets_decode_under_eager_as_under_sdpa(lm: tuple[Any, Any]) -> None:
    """Eager attention adds a mask sized from layer 0; with per-layer budgets every later
    single-token step must still see each layer's own keys, and decode as SDPA does."""
    model, tokenizer = lm
    prompt = templated(tokenizer)
    press = build_press("PyramidKVPress", compression_ratio=0.7, window_size=16, beta=2)
    answers = {}
    for attn in ("eager", "sdpa"):
        model.set_attn_implementation(attn)
        try:
            for mode in ("context_only", "full_prompt"):
                text, rec = generate_with_press(model, tokenizer, prompt, press, MAX_NEW, mode)
                assert len(set(rec.kept_entries_per_layer)) > 1
                assert rec.attn_implementation == attn
                answers[(attn, mode)] = text
        finally:
            model.set_attn_implementation("sdpa")
    for mode in ("context_only", "full_prompt"):
        assert answers[("eager", mode)] == answers[("sdpa", mode)] != ""


@pytest.mark.slow
def test_chunkkv_runs_under_eager_attention(lm: tuple[Any, Any]) -> None:
    model, tokenizer = lm
    prompt = templated(tokenizer)
    ctx, _ = split_ids(tokenizer, prompt)
    model.set_attn_implementation("eager")
    try:
        _, rec = generate_with_press(model, tokenizer, prompt, get_press("chunkkv", 0.3), MAX_NEW)
    finally:
        model.set_attn_implementation("sdpa")
    assert rec.attn_implementation == "eager"
    assert abs(rec.kept_entries_per_layer[0] - 0.3 * len(ctx)) <= 20


@pytest.mark.slow
def test_hook_plugs_into_the_hf_reader() -> None:
    from compressbench.readers.base import ChatRequest
    from compressbench.readers.hf import HFReader

    hook = KVPressHook(get_press("chunkkv", 0.3), mode="context_only", preset="chunkkv")
    reader = HFReader(press=hook, attn_implementation="sdpa")
    gens = reader.generate([ChatRequest("t:0", SYSTEM, user_prompt(TURNS), MAX_NEW)])
    assert len(gens) == 1 and len(hook.records) == 1
    rec = hook.records[0]
    assert rec.mode == "context_only" and rec.kept_entries_per_layer
    assert reader.decoding()["press"]["press"]["name"] == "ChunkKVPress"


@pytest.mark.slow
def test_masking_press_is_measured_and_explained(lm: tuple[Any, Any]) -> None:
    # AdaKV masks entries head by head instead of pruning: the cache is not smaller, and the
    # record says why no kept subset exists.
    model, tokenizer = lm
    prompt = templated(tokenizer)
    ctx, _ = split_ids(tokenizer, prompt)
    press = build_press(
        {"name": "AdaKVPress", "press": {"name": "SnapKVPress", "compression_ratio": 0.5}}
    )
    _, rec = generate_with_press(model, tokenizer, prompt, press, 2)
    assert rec.kept_entries_per_layer == [len(ctx)] * model.config.num_hidden_layers
    assert rec.kept_positions is None
    assert "masks entries" in (rec.kept_tokens_unavailable_reason or "")
