"""Appendix-B cost accounting: q for KV memory, q**2 for prefill attention."""

from __future__ import annotations

import math

import pytest

from compressbench.compress.costs import (
    context_cost,
    kv_context_cost,
    kv_measured_cost,
    kv_memory_ratio,
    kv_memory_scaling,
    prefill_attention_ratio,
    prefill_attention_scaling,
    retention_fraction,
    token_counter,
)


def test_paper_example_q_030() -> None:
    # Appendix B: at q = 0.30 the full-to-compressed ratios are about 3.3 (KV) and 11.1 (prefill).
    assert kv_memory_scaling(0.3) == pytest.approx(0.3)
    assert prefill_attention_scaling(0.3) == pytest.approx(0.09)
    assert round(kv_memory_ratio(0.3), 1) == 3.3
    assert round(prefill_attention_ratio(0.3), 1) == 11.1


def test_edges() -> None:
    assert retention_fraction(0, 0) == 1.0
    assert kv_memory_ratio(1.0) == 1.0
    assert math.isinf(prefill_attention_ratio(0.0))
    with pytest.raises(ValueError):
        retention_fraction(-1, 3)
    with pytest.raises(ValueError):
        kv_memory_scaling(-0.1)


def test_context_cost_characters_without_tokenizer() -> None:
    full = "a" * 100
    comp = "a" * 25
    c = context_cost(full, comp, n_turns=10, kept_turns=[0, 5, 9])
    assert c.kept_turns == 3 and c.turn_fraction == pytest.approx(0.3)
    assert c.q_unit == "characters" and c.q == pytest.approx(0.25)
    assert c.tokens_full is None and c.token_fraction is None
    assert c.kv_memory_ratio == pytest.approx(4.0)
    assert c.prefill_attention_ratio == pytest.approx(16.0)
    assert c.to_dict()["q"] == pytest.approx(0.25)


def test_context_cost_with_callable_tokenizer() -> None:
    full = "one two three four five six seven eight nine ten"
    comp = "one two three"
    c = context_cost(full, comp, n_turns=4, kept_turns=1, tokenizer=str.split)
    assert (c.tokens_full, c.tokens_kept) == (10, 3)
    assert c.q_unit == "reader_tokens" and c.q == pytest.approx(0.3)
    assert c.prefill_attention_scaling == pytest.approx(0.09)


class _FakeHF:
    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        ids = list(range(len(text.split())))
        return ([101, *ids]) if add_special_tokens else ids


def test_token_counter_does_not_count_special_tokens() -> None:
    assert token_counter(_FakeHF())("a b c") == 3
    assert token_counter(lambda t: 7)("anything") == 7
    with pytest.raises(TypeError):
        token_counter(42)


def test_bad_turn_counts() -> None:
    with pytest.raises(ValueError):
        context_cost("ab", "a", n_turns=2, kept_turns=3)


def test_kv_cost_keeps_prefill() -> None:
    c = kv_context_cost("ctx", n_turns=6, context_tokens=200, kept_entries_per_layer=[60, 60, 60])
    assert c.q_unit == "kv_cache_entries" and c.q == pytest.approx(0.3)
    assert c.kv_memory_ratio == pytest.approx(1 / 0.3)
    assert c.prefill_attention_ratio == 1.0 and c.turn_fraction == 1.0
    with pytest.raises(ValueError):
        kv_context_cost("ctx", 1, 10, [])


def test_context_costs_say_their_basis() -> None:
    assert context_cost("ab", "a", n_turns=2, kept_turns=1).basis == "kept_text"
    assert kv_context_cost("ctx", 1, 10, [3]).basis == "nominal"


def test_measured_kv_cost_is_what_the_kept_entries_imply() -> None:
    record = {
        "mode": "context_only",
        "context_tokens": 400,
        "question_tokens": 37,
        "kept_entries_per_layer": [100, 140, 120, 120],
    }
    c = kv_measured_cost(record)
    assert (c.kept_entries_mean, c.kept_entries_min, c.kept_entries_max) == (120.0, 100, 140)
    assert c.q == pytest.approx(0.3) and c.q_unit == "kv_cache_entries"
    assert c.kv_memory_scaling == pytest.approx(0.3)
    assert c.kv_memory_ratio == pytest.approx(1 / 0.3)
    assert c.prefill_attention_scaling == c.prefill_attention_ratio == 1.0
    assert (c.mode, c.context_tokens, c.question_tokens) == ("context_only", 400, 37)
    assert c.to_dict()["basis"] == "measured"
    full = kv_measured_cost({"context_tokens": 50, "kept_entries_per_layer": [50, 50]})
    assert full.q == 1.0 and full.kv_memory_ratio == 1.0 and full.question_tokens == 0
    with pytest.raises(ValueError):
        kv_measured_cost({"context_tokens": 10, "kept_entries_per_layer": []})
