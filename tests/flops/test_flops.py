"""FLOPs coefficients from configs: the KEEP-Bench paper's printed numbers (App. C.4, eqs. 4-10).

The configs (tests/support/flops_configs.py) are written from each model's published architecture
(research notes §4.3-4.4); the expected numbers are the paper's, reproduced exactly.
"""

from __future__ import annotations

import pytest

from compressbench.flops.attention import pairs_causal, pairs_window
from compressbench.flops.decoder import DecoderCost, decoder_cost
from compressbench.flops.encdec import EncDecCost
from compressbench.flops.encoder import EncoderCost
from compressbench.flops.fields import ConfigFields
from compressbench.flops.formulas import (
    cost_from_config,
    detect_formula,
    exit_flops,
    recomp_abstractive_flops,
    recomp_extractive_flops,
)
from support.flops_configs import (
    BERT_BASE,
    GEMMA4_E4B,
    GEMMA_2B,
    LLAMA_31_8B,
    LLAMA_32_3B,
    QWEN3_4B,
    T5_LARGE,
)


def cost(raw: dict, formula: str | None = None):  # type: ignore[no-untyped-def]
    return cost_from_config(ConfigFields(raw, "test.json"), formula)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (QWEN3_4B, {"a": 7_266_631_680, "b": 589_824, "c": 777_912_320}),
        (LLAMA_31_8B, {"a": 13_958_643_712, "b": 524_288, "c": 1_050_673_152}),
        (
            GEMMA4_E4B,
            {
                "a": 7_945_584_640,
                "b": 114_688,
                "c": 1_342_177_280,
                "b_local": 286_720,
                "b_global": 114_688,
                "window": 512,
            },
        ),
        # research notes §4.3 (BRIEF-Pro's backbone), same recipe, not printed in the paper
        (LLAMA_32_3B, {"a": 5_637_144_576, "b": 344_064, "c": 788_004_864}),
    ],
    ids=["qwen3-4b", "llama-3.1-8b", "gemma-4-e4b", "llama-3.2-3b"],
)
def test_decoder_coefficients_match_the_paper(raw: dict, expected: dict) -> None:
    c = cost(raw)
    assert isinstance(c, DecoderCost)
    assert c.to_dict() == expected


def test_dedicated_compressor_coefficients_match_the_paper() -> None:
    assert cost(BERT_BASE) == EncoderCost(a=169_869_312, b=36_864, dot=1_536)
    assert cost(T5_LARGE) == EncDecCost(
        enc_token=704_643_072, enc_pairs=98_304, dec_token=770_441_216, dec_pairs=98_304
    )
    exit_cost = cost(GEMMA_2B, "exit")
    assert (exit_cost.a, exit_cost.b, exit_cost.window) == (5_169_086_464, 147_456, None)
    # without the adapter and the full-sequence LM head: the plain Gemma-2B decoder
    plain = cost(GEMMA_2B)
    assert plain.a == 3_963_617_280 and plain.c == 2 * 2048 * 256_000


def test_formula_detection() -> None:
    assert [detect_formula(ConfigFields(r)) for r in (BERT_BASE, T5_LARGE, QWEN3_4B)] == [
        "encoder",
        "encoder_decoder",
        "decoder",
    ]


def test_attention_pairs() -> None:
    assert pairs_causal(0) == 0 and pairs_causal(4) == 10
    assert pairs_window(512, 512) == pairs_causal(512) == 131_328
    assert pairs_window(1000, 512) == 512 * 1000 - 512 * 511 // 2 == 381_184
    assert pairs_window(3, 1) == 3  # each position sees only itself


def test_case_uses_t_equals_p_plus_g_minus_1_and_z_equals_g() -> None:
    c = cost(LLAMA_31_8B)
    t = 3063 + 120 - 1
    expected = 13_958_643_712 * t + 524_288 * t * (t + 1) // 2 + 1_050_673_152 * 120
    assert c.case(3063, 120) == expected
    assert c.case(0, 0) == 0


def test_gemma_case_splits_local_and_global_attention() -> None:
    c = cost(GEMMA4_E4B)
    t = 2000 + 200 - 1
    local = 512 * t - 512 * 511 // 2
    expected = (
        7_945_584_640 * t + 286_720 * local + 114_688 * (t * (t + 1) // 2) + 1_342_177_280 * 200
    )
    assert c.case(2000, 200) == expected


def test_dedicated_compressor_case_formulas() -> None:
    ext = cost(BERT_BASE)
    # query of 12 tokens, candidates of 20 and 30 tokens (eq. 8)
    expected = sum(169_869_312 * n + 36_864 * n * n for n in (12, 20, 30)) + 1_536 * 2
    assert recomp_extractive_flops(ext, 12, [20, 30]) == expected
    abs_cost = cost(T5_LARGE)
    n, r = 3000, 90  # eq. 9
    expected = (
        704_643_072 * n + 98_304 * n * n + 770_441_216 * r + 98_304 * (r * (r + 1) // 2 + n * r)
    )
    assert recomp_abstractive_flops(abs_cost, n, r) == expected
    exit_cost = cost(GEMMA_2B, "exit")
    prompts = [400, 650]  # eq. 10
    expected = sum(5_169_086_464 * p + 147_456 * (p * (p + 1) // 2) for p in prompts)
    assert exit_flops(exit_cost, prompts) == expected


def test_kv_sharing_and_k_eq_v_and_double_wide_mlp_change_only_their_terms() -> None:
    text = dict(GEMMA4_E4B["text_config"])  # type: ignore[arg-type]
    base = cost(text)
    unshared = cost({**text, "num_kv_shared_layers": 0})
    # the 18 shared layers: 15 sliding (k, v of 2 heads x 256) and 3 full (2 heads x 512)
    assert unshared.a - base.a == 2 * (15 * 2 * 2560 * 512 + 3 * 2 * 2560 * 1024)
    assert unshared.b == base.b and unshared.b_local == base.b_local
    k_eq_v = cost({**text, "attention_k_eq_v": True})
    # the 4 full layers that still compute k, v (indices 5, 11, 17, 23) lose v
    assert base.a - k_eq_v.a == 2 * 4 * 2560 * 1024
    wide = cost({**text, "use_double_wide_mlp": True})
    assert wide.a - base.a == 2 * 18 * 3 * 2560 * 10240


def test_windowed_tail_and_gemma3_patterns() -> None:
    mistral = {**LLAMA_31_8B, "model_type": "mistral", "sliding_window": 4096}
    c = cost(mistral)
    assert (c.b, c.b_local, c.window) == (0, 524_288, 4096)
    qwen_swa = {**QWEN3_4B, "use_sliding_window": True, "sliding_window": 4096}
    assert cost({**qwen_swa, "max_window_layers": 28}).b_local == 4 * 32 * 128 * 8
    gemma3 = {**GEMMA_2B, "model_type": "gemma3_text", "sliding_window": 1024}
    g = cost({**gemma3, "num_hidden_layers": 12})
    assert (g.b_local, g.b) == (10 * 4 * 8 * 256, 2 * 4 * 8 * 256)


def test_lora_adds_in_plus_out_times_rank_per_adapted_projection() -> None:
    base = decoder_cost(ConfigFields(GEMMA_2B))
    q_only = decoder_cost(ConfigFields(GEMMA_2B), lora_rank=8, lora_targets=("q",))
    assert q_only.a - base.a == 2 * 18 * 8 * (2048 + 2048)
