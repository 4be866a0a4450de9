"""Press prompts compressed one by one and decoded together give the one-at-a-time answers and
records (tiny random Llamas, fp32, CPU, eager and SDPA), for every registered preset in every
mode, with per-layer budgets (PyramidKV's pyramid) and rows ending at different steps; through
the hf reader in fast mode too; ``context_shared`` compresses each distinct context once."""

from __future__ import annotations

import random
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("kvpress")

from compressbench.compress.kv.batched import ContextStore, run_batch_with_press  # noqa: E402
from compressbench.compress.kv.generate import eos_ids, run_with_press  # noqa: E402
from compressbench.compress.kv.hook import KVPressHook  # noqa: E402
from compressbench.compress.kv.presets import PRESS_PRESETS  # noqa: E402
from compressbench.compress.kv.record import MODES  # noqa: E402
from compressbench.compress.presses import get_press  # noqa: E402
from compressbench.readers import chat, synthetic  # noqa: E402
from compressbench.readers.base import ChatRequest  # noqa: E402

MAX_NEW = 8
R = 0.3
# Small windows put these prompts past kvpress's short-context fallbacks: PyramidKV gives every
# layer its own budget, ChunkKV keeps chunks of 7 (a short last one in some layers).
SMALL_WINDOWS: dict[str, dict[str, Any]] = {
    "snapkv": {"window_size": 4},
    "pyramidkv": {"window_size": 4, "beta": 2},
    "chunkkv": {"window_size": 4, "chunk_length": 7},
    "streamingllm": {},
}


def _words(rng: random.Random, n: int) -> str:
    return " ".join(f"w{rng.randrange(900)}" for _ in range(n))


def requests(n_contexts: int = 3, questions: int = 2) -> list[ChatRequest]:
    """``n_contexts`` contexts of different lengths, each asked ``questions`` questions."""
    rng = random.Random(7)
    system = _words(rng, 20)
    out = []
    for c in range(n_contexts):
        context = _words(rng, 150 + 60 * c)
        for q in range(questions):
            question = _words(rng, 10 + 3 * q)  # the request says where its question starts
            out.append(
                ChatRequest(f"c{c}q{q}", system, f"Context: {context}", MAX_NEW, question=question)
            )
    return out


@pytest.fixture(scope="module", params=["eager", "sdpa"])
def lm(request: Any) -> tuple[Any, Any]:
    cfg = {**synthetic.SMALL, "num_hidden_layers": 4}
    model = synthetic.build_model(cfg, torch.device("cpu"), torch.float32, request.param)
    tok = chat.prepare_tokenizer(synthetic.build_tokenizer(cfg["vocab_size"], 1000, 1001))
    return model, tok


def prompts(tok: Any) -> tuple[list[str], list[list[int]]]:
    texts = [chat.render_chat(tok, r.system, r.user) for r in requests()]
    return texts, [chat.encode(tok, t, 7168) for t in texts]


def _end(ids: list[int], eos: set[int]) -> int:
    return next((i + 1 for i, t in enumerate(ids) if t in eos), len(ids))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("preset", PRESS_PRESETS.names())
@pytest.mark.parametrize("windows", ["default", "small"])
def test_batched_answers_and_records_equal_one_at_a_time(
    lm: tuple[Any, Any], preset: str, mode: str, windows: str
) -> None:
    model, tok = lm
    overrides = SMALL_WINDOWS[preset] if windows == "small" else {}
    press = get_press(preset, R, **overrides)
    texts, ids = prompts(tok)
    # an eos the rows reach at different steps (or never), from a first run without one
    first = run_batch_with_press(model, tok, texts, ids, press, MAX_NEW, mode, set())
    eos = {first[0][0][2]} | eos_ids(model, tok)
    serial = []
    for text, prompt_ids in zip(texts, ids, strict=True):
        new, record = run_with_press(model, tok, text, press, MAX_NEW, mode, prompt_ids=prompt_ids)
        serial.append((new, record.to_dict()))
    # run_with_press finds eos from the model; here every row is cut at ``eos`` the same way
    store = ContextStore() if mode == "context_shared" else None
    batched = run_batch_with_press(model, tok, texts, ids, press, MAX_NEW, mode, eos, store=store)
    for (b_ids, b_rec), (s_ids, s_rec) in zip(batched, serial, strict=True):
        assert b_ids == s_ids[: _end(s_ids, eos)]
        b_dict = b_rec.to_dict()
        for field in ("kept_positions", "kept_positions_any", "kept_entries_per_layer"):
            assert b_dict[field] == s_rec[field], field
        assert {k: v for k, v in b_dict.items() if k != "new_tokens"} == {
            k: v for k, v in s_rec.items() if k != "new_tokens"
        }
    assert len(batched[0][0]) <= 3  # row 0 left the batch early
    if store is not None:
        assert store.compressions == 3 and store.hits == 3  # 3 contexts, 2 questions each
    if preset == "pyramidkv" and windows == "small" and mode != "full_prompt":
        kept = [rec.kept_entries_per_layer for _, rec in batched]
        assert all(len(set(k)) > 1 for k in kept)  # a budget per layer
        assert len({tuple(k) for k in kept}) > 1  # and per row


def test_context_shared_answers_equal_context_only(lm: tuple[Any, Any]) -> None:
    model, tok = lm
    press = get_press("snapkv", R, window_size=4)
    texts, ids = prompts(tok)
    only = run_batch_with_press(model, tok, texts, ids, press, MAX_NEW, "context_only", set())
    store = ContextStore()
    shared = run_batch_with_press(
        model, tok, texts, ids, press, MAX_NEW, "context_shared", set(), store=store
    )
    assert (store.compressions, store.hits) == (3, 3)
    for (a, ra), (b, rb) in zip(only, shared, strict=True):
        assert a == b
        assert ra.mode_requested == "context_only" and rb.mode_requested == "context_shared"
        assert rb.mode == "context_only"
        assert {**ra.to_dict(), "mode_requested": None} == {**rb.to_dict(), "mode_requested": None}


@pytest.mark.parametrize("preset", PRESS_PRESETS.names())
def test_hf_reader_fast_mode_batches_presses_with_paper_answers(
    lm: tuple[Any, Any], preset: str
) -> None:
    """The reader in fast mode hands the hook a batch to decode together; the answers and
    records equal paper mode's one-at-a-time ones; the cache keys differ."""
    from compressbench.readers.cache import cache_key

    model, tok = lm
    reqs = requests()
    answers = {}
    keys = {}
    for mode in ("paper", "fast"):
        reader = synthetic.in_memory_reader(model, tok, torch.device("cpu"), 6, mode)
        hook = KVPressHook(
            get_press(preset, R, **SMALL_WINDOWS[preset]), mode="context_only", preset=preset
        )
        hooked = reader.with_press(hook, hook.spec)
        gens = hooked.generate(reqs)
        assert {g.provenance["batch_size"] for g in gens} == {6}
        answers[mode] = [(g.raw, g.tokens_out, g.record) for g in gens]
        keys[mode] = cache_key(hooked, reqs[0])
        assert ("decode_mode" in hooked.decoding()) == (mode == "fast")
    assert answers["fast"] == answers["paper"]
    assert keys["fast"] != keys["paper"]
