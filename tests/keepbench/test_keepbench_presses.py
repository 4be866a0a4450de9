"""TPBench's KV presses on KEEP cases: names and parameters through the KEEP method family, the
budget mapping r = min(1, K / n), and real presses (SnapKV, StreamingLLM) on the
offline SmolLM2 reader, whose kept context tokens, decoded in order, are the compression."""

from __future__ import annotations

import json

import pytest

from compressbench.compress.kv.positions import GAP
from compressbench.errors import InputError
from compressbench.keepbench.cases import KeepCase, sentence_budget
from compressbench.keepbench.compressors.base import keep_source
from compressbench.keepbench.compressors.family import (
    check_keep_method,
    keep_method,
    keep_method_names,
    keep_method_parameters,
)
from compressbench.keepbench.compressors.press_span import press_prompt
from compressbench.keepbench.compressors.presses import KeepPressMethod, retained_fraction
from compressbench.keepbench.loader import builtin_cases, evaluation_cases


@pytest.fixture(scope="module")
def case() -> KeepCase:
    return evaluation_cases(builtin_cases())[0]


def in_order(text: str, context: str) -> bool:
    """Every run of ``text`` (split at the gap marker) occurs in ``context``, in order."""
    at = 0
    for piece in text.split(GAP):
        found = context.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def test_presses_are_keep_methods_with_their_tpbench_parameters() -> None:
    names = keep_method_names()
    assert {"snapkv", "pyramidkv", "streamingllm", "chunkkv", "KnormPress"} <= set(names)
    assert keep_method_parameters("snapkv") == (
        "mode",
        "window_size",
        "kernel_size",
        "model",
        "reader_options",
    )
    check_keep_method("snapkv", {"mode": "context_only", "window_size": 32})
    check_keep_method("KnormPress", {"reader_options": {"dtype": "float32"}})
    with pytest.raises(InputError, match=r"keepbench.compressors.snapkv.mode'.*context_only"):
        check_keep_method("snapkv", {"mode": "everything"})
    with pytest.raises(InputError, match=r"keepbench.compressors.snapkv.window'"):
        check_keep_method("snapkv", {"window": 32})
    method = keep_method("chunkkv", {})
    assert isinstance(method, KeepPressMethod)
    assert (method.family, method.budget_unit) == ("kv_press_on_sentences", "keep_sentences")
    assert method.describe()["mode"] == "context_only"  # the preset's TPBench default
    assert keep_method("snapkv").describe()["mode"] == "full_prompt"
    with pytest.raises(KeyError, match="window"):
        KeepPressMethod.build("snapkv", {"window": 1})


def test_budget_maps_to_the_sentence_share(case: KeepCase) -> None:
    """r = min(1, K / n): the share of the context K sentences of average length are."""
    assert retained_fraction(4, 20) == 0.2
    assert retained_fraction(25, 20) == 1.0
    with pytest.raises(ValueError):
        retained_fraction(0, 20)
    n = len(keep_source(case).units)
    assert (case.setting, case.hops, n) == ("parallel", 2, 20)
    assert [retained_fraction(sentence_budget(case, s), n) for s in (0.5, 1.0, 2.0)] == [
        0.1,
        0.2,
        0.4,
    ]


def test_the_prompt_holds_the_context_verbatim_before_the_question(case: KeepCase) -> None:
    system, user = press_prompt(case)
    assert system and user.startswith("Context:\n" + case.context)
    assert user.endswith("\n\nQuestion: " + case.query)


@pytest.mark.slow
def test_real_presses_keep_context_tokens_in_order(case: KeepCase, tmp_path) -> None:
    """SnapKV at 0.5x and 2x, StreamingLLM at 0.5x, on the offline reader."""
    from compressbench.flops.decoder import decoder_cost
    from compressbench.flops.fields import ConfigFields
    from compressbench.keepbench.flops_accounting import cell_flops
    from compressbench.keepbench.stages.keep_compressed import compress_cell
    from compressbench.readers.cache import AnswerCache

    source = keep_source(case)
    n = len(source.units)
    snapkv = keep_method("snapkv")
    small, large = snapkv.compress(source, 0.5), snapkv.compress(source, 2.0)
    for comp, scale in ((small, 0.5), (large, 2.0)):
        k = sentence_budget(case, scale)
        assert comp.text and in_order(comp.text, case.context)
        rec = comp.record
        assert json.loads(json.dumps(rec)) == rec
        assert (rec["budget_unit"], rec["budget"], comp.budget) == ("keep_sentences", k, k)
        assert rec["retained_fraction"] == k / n
        press = rec["press"]
        assert (press["mode_requested"], press["mode"], press["fallback_reason"]) == (
            "full_prompt",
            "full_prompt",
            None,
        )
        assert press["budget_unit"] == "kv_cache_entries"
        assert press["compression_ratio"] == pytest.approx(1 - k / n)
        assert 0 < press["kept_context_tokens"] < press["context_tokens"]
    assert len(small.text) < len(large.text)
    kept = [c.record["press"]["kept_context_tokens"] for c in (small, large)]
    assert kept[0] < kept[1]
    # FLOPs: the reader's forward pass over what it prefilled (plus the question), one token
    flops = cell_flops("snapkv", snapkv, [source, source], [small, large])
    cost = decoder_cost(ConfigFields(snapkv.reader().model.config.to_dict()))
    assert flops.per_case == [
        cost.case(
            c.record["press"]["prefill_tokens"] + c.record["press"]["question_tokens_after_press"],
            1,
        )
        for c in (small, large)
    ]
    assert flops.formula == "decoder" and flops.per_case[0] > 0

    # StreamingLLM in context_only mode presses what precedes the question: the sink (template
    # tokens) and the tail, i.e. the context's end; through the stage's cell, cached
    params = {"mode": "context_only"}
    with AnswerCache(tmp_path / "cache.sqlite") as cache:
        rows, stats = compress_cell("streamingllm", params, 0.5, [case], cache)
        again, stats_again = compress_cell("streamingllm", params, 0.5, [case], cache)
    assert (stats["cache"]["computed"], stats_again["cache"]["cached"]) == (1, 1)
    assert again == rows
    text = rows[0]["compressed"]
    assert text and GAP not in text and case.context.endswith(text)
    press = rows[0]["record"]["press"]
    assert (press["preset"], press["mode"], press["fallback_reason"]) == (
        "streamingllm",
        "context_only",
        None,
    )
    assert press["question_tokens_after_press"] > 0
