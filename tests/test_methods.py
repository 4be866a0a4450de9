"""Methods by name: turn selectors and KV press presets share one namespace."""

from __future__ import annotations

import pytest

from compressbench.compress.methods import (
    is_kv_method,
    known_methods,
    kv_method,
    method_selector,
)

PUBLISHED = [
    "full_context",
    "recency",
    "random_seed42",
    "first_n",
    "uniform_stride",
    "attention_h2o",
    "embedding_mmr",
    "llmlingua2",
    "first_user_recent",
    "snapkv",
    "pyramidkv",
    "streamingllm",
    "chunkkv",
]


def test_every_published_method_is_known() -> None:
    assert set(PUBLISHED) <= set(known_methods())


@pytest.mark.parametrize("name", ["snapkv", "pyramidkv", "streamingllm", "chunkkv"])
def test_presses_read_the_full_context(name: str) -> None:
    assert is_kv_method(name)
    assert method_selector(name).name == "full_context"


def test_press_modes_default_as_published_and_can_be_set() -> None:
    assert kv_method("chunkkv").mode == "context_only"
    assert kv_method("snapkv").mode == "full_prompt"
    custom = kv_method("snapkv", {"mode": "context_only", "window_size": 32})
    assert custom.mode == "context_only"
    assert custom.overrides == {"window_size": 32}
    record = custom.record(0.3)
    assert record["compression_ratio"] == pytest.approx(0.7)
    assert record["budget_unit"] == "kv_cache_entries"


def test_selector_params_reach_the_selector() -> None:
    assert method_selector("embedding_mmr", {"trade_off": 0.25}).trade_off == 0.25  # type: ignore[attr-defined]


def test_unknown_method_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match="snapkv"):
        method_selector("no_such_method")
