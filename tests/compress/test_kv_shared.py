"""One forward per distinct prefilled sequence (2 per prompt with both modes; 1 with
``share_prefix``) gives every press's and ratio's kept positions, as separate pressed prefills
do (tiny random Llama, word-level tokenizer, eager and SDPA)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from compressbench.compress.kv.generate import run_with_press
from compressbench.compress.kv.shared import (
    PressJob,
    SharedPrefill,
    kept_positions_many,
    replayable,
)
from compressbench.compress.presses import get_preset, get_press
from compressbench.readers import chat, synthetic

PRESETS = ("snapkv", "pyramidkv", "streamingllm", "chunkkv")
RATIOS = (0.1, 0.3, 0.5, 0.7)
FIELDS = ("mode", "kept_entries_per_layer", "kept_positions", "kept_positions_any")


@pytest.fixture(scope="module", params=["eager", "sdpa"])
def setup(request: Any) -> tuple[Any, Any, list[tuple[str, list[int]]]]:
    cfg = {**synthetic.SMALL, "num_hidden_layers": 3}
    model = synthetic.build_model(cfg, torch.device("cpu"), torch.float32, request.param)
    tok = chat.prepare_tokenizer(synthetic.build_tokenizer(cfg["vocab_size"], 1000, 1001))
    reqs = synthetic.make_requests(tok, [180, 260], 1, 1000)
    prompts = []
    for r in reqs:
        text = chat.render_chat(tok, r.system, r.user)
        prompts.append((text, chat.encode(tok, text, 7168)))
    return model, tok, prompts


def _jobs() -> dict[tuple[str, float], PressJob]:
    return {
        (name, r): PressJob(get_press(name, r), get_preset(name).default_mode)
        for name in PRESETS
        for r in RATIOS
    }


@pytest.mark.parametrize("share_prefix", [False, True])
def test_shared_forwards_match_separate_prefills(setup: Any, share_prefix: bool) -> None:
    model, tok, prompts = setup
    for text, ids in prompts[1:]:
        jobs = _jobs()
        shared, forwards = kept_positions_many(
            model, tok, text, jobs, prompt_ids=ids, share_prefix=share_prefix
        )
        # chunkkv's context is a prefix of the full prompt: cut from its forward if shared
        assert forwards == (1 if share_prefix else 2)
        for key, job in jobs.items():
            _, record = run_with_press(model, tok, text, job.press, 1, job.mode, prompt_ids=ids)
            for f in FIELDS:
                assert shared[key][f] == getattr(record, f), (key, f)
            assert shared[key]["kept_token_text"] == record.kept_token_text
        assert shared[("chunkkv", 0.3)]["mode"] == "context_only"
        assert shared[("chunkkv", 0.3)]["context_tokens"] < len(ids)


def test_cache_computes_all_registered_jobs_once_per_prompt(setup: Any) -> None:
    model, tok, prompts = setup
    cache = SharedPrefill()
    jobs = _jobs()
    for key, job in jobs.items():
        cache.register(key, job)
    for text, ids in prompts:
        for key, job in jobs.items():
            got = cache.get(model, tok, text, ids, key, job)
            assert got["kept_positions"] is not None
    assert cache.forwards == 2 * len(prompts)  # the full prompt and chunkkv's context
    late = PressJob(get_press("snapkv", 0.9), "full_prompt")  # not registered beforehand
    cache.get(model, tok, prompts[0][0], prompts[0][1], ("snapkv", 0.9), late)
    assert cache.forwards == 2 * len(prompts) + 1


def test_a_context_that_is_not_a_prefix_gets_its_own_forward(setup: Any) -> None:
    model, tok, prompts = setup
    text, ids = prompts[0]
    job = PressJob(get_press("chunkkv", 0.3), "context_only")
    other = [5, *ids[1:]]  # full-prompt ids no longer start like the context
    shared, forwards = kept_positions_many(
        model,
        tok,
        text,
        {"c": job, "s": PressJob(get_press("snapkv", 0.3), "full_prompt")},
        prompt_ids=other,
        share_prefix=True,
    )
    assert forwards == 2
    _, record = run_with_press(model, tok, text, job.press, 1, "context_only", prompt_ids=other)
    assert shared["c"]["kept_positions"] == record.kept_positions


def test_only_known_presses_replay() -> None:
    import kvpress

    assert replayable(get_press("chunkkv", 0.3))
    assert not replayable(kvpress.KnormPress(compression_ratio=0.5))
    with pytest.raises(ValueError, match="KnormPress"):
        SharedPrefill().register("k", PressJob(kvpress.KnormPress(0.5), "full_prompt"))


@pytest.mark.slow
def test_retention_with_a_shared_prefill_equals_one_prefill_per_press_and_ratio() -> None:
    """The retention diagnostic's rows are the same with the reader's shared prefill as with
    one pressed prefill per (event, press, ratio), from one forward per event."""
    import itertools

    from compressbench.corpora.loaders import load_corpus
    from compressbench.tpbench.retention import retention_rows
    from compressbench.tpbench.retention_reader import LazyReader
    from compressbench.tpbench.transitions import dialogue_transitions

    cfg = {**synthetic.SMALL, "num_hidden_layers": 2}
    model = synthetic.build_model(cfg, torch.device("cpu"), torch.float32, "eager")
    tok = chat.prepare_tokenizer(synthetic.build_tokenizer(cfg["vocab_size"], 1000, 1001))
    dialogues = list(itertools.islice(load_corpus("builtin"), 2))
    events = sum(
        1 for d in dialogues for t in dialogue_transitions(d) if t.p2_eligible or t.p3_eligible
    )

    def rows(shared: bool) -> tuple[list[dict[str, Any]], LazyReader]:
        reader = LazyReader(lambda: synthetic.in_memory_reader(model, tok, torch.device("cpu")))
        if not shared:
            reader.shared_prefill = None  # type: ignore[assignment]
        out = retention_rows(dialogues, list(PRESETS), [0.3, 0.7], reader=reader)
        return [{k: v for k, v in r.items() if k != "seconds"} for r in out], reader

    separate, _ = rows(False)
    together, reader = rows(True)
    assert events > 0 and together == separate
    assert reader.shared_prefill.forwards == 2 * events  # full prompt + chunkkv's context
