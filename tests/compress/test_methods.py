"""Every registered method through the same contract checks, and params.yaml validation.

The matrix covers every name :func:`known_methods` returns: the turn selectors, the press
presets and every kvpress press class (whose text side - full context plus a press record -
needs no kvpress import). Model-backed selectors run on the offline models (slow).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from compressbench.compress.method import TURN_BUDGET_UNIT, Compression, Source
from compressbench.compress.registry import (
    check_method_params,
    check_methods,
    get_method,
    known_methods,
    method_entry,
)
from compressbench.compress.render import render
from compressbench.compress.turning_point.state import HEAD as STATE_HEAD
from compressbench.config import parse_params
from compressbench.corpora.model import SYSTEM, USER, Turn
from compressbench.errors import InputError
from compressbench.readers.base import ChatRequest
from support.hotel_dialogue import HOTEL_TEXTS
from support.params import pipeline_params

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
PRESETS = ["snapkv", "pyramidkv", "streamingllm", "chunkkv"]
TEXTS = HOTEL_TEXTS
TURNS = [Turn(i, USER if i % 2 == 0 else SYSTEM, t) for i, t in enumerate(TEXTS)]
MODEL_BACKED = {"attention_h2o", "embedding_mmr", "llmlingua2"}
RATIOS = [0.1, 0.3, 0.5, 1.0]
KEY = "sgd:66_00065:2"


def method_params(name: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    if name == "llmlingua2":
        return {"model": request.getfixturevalue("tiny_llmlingua2")}
    return {"seed": 7} if name == "random" else {}


def _cases() -> Iterator[Any]:
    for name in known_methods(units="dialogue_turns"):  # KEEP compressors: their own matrix
        marks = [pytest.mark.slow] if name in MODEL_BACKED else []
        yield pytest.param(name, id=name, marks=marks)


def no_prompt(text: str) -> ChatRequest:
    raise AssertionError("a text method never builds a prompt")


def state_first(comp: Compression) -> bool:
    """Whether a state-line variant's record puts its line before the pieces."""
    return comp.record.get("params", {}).get("state_at") == "start"


def kept_lines(comp: Compression) -> tuple[list[str], str]:
    """A span method's kept pieces, a line each, and its state line ("" when none: only a
    state-line variant, whose record names its ``state``, has one: last, or first where the
    record's ``state_at`` says ``start``)."""
    lines = comp.kept_text.split("\n") if comp.kept_text else []
    at = 0 if state_first(comp) else -1
    if "state" in comp.record.get("params", {}) and lines and lines[at].startswith(STATE_HEAD):
        return lines[1:] if at == 0 else lines[:-1], lines[at]
    return lines, ""


def check_compression(name: str, comp: Compression, n: int, ratio: float) -> None:
    ids = [t.index for t in TURNS[:n]]
    assert list(comp.kept_ids) == sorted(set(comp.kept_ids)) and set(comp.kept_ids) <= set(ids)
    assert (comp.n_units, comp.ratio) == (n, ratio) and comp.budget >= 1
    assert comp.record and json.loads(json.dumps(comp.record)) == comp.record
    if comp.budget_unit == "reader_tokens":  # a span method: verbatim pieces of kept turns
        assert comp.record["kept_tokens"] <= comp.budget
        lines, _ = kept_lines(comp)
        assert len(lines) == len(comp.kept_ids)
        for line, i in zip(lines, comp.kept_ids, strict=True):
            assert all(piece in TEXTS[i] for piece in line.split(" … "))
    elif comp.press is None:  # a text method: the context is its kept units, rendered
        assert comp.budget_unit == TURN_BUDGET_UNIT
        assert comp.text == render(TURNS[:n], comp.kept_ids, comp.render)
        assert comp.kept_text == "\n".join(TEXTS[i] for i in comp.kept_ids)
        expected = n if name == "full_context" else min(comp.budget, n)
        assert len(comp.kept_ids) == expected
    else:  # a press: the whole context, and the press the reader runs under
        assert comp.kept_ids == tuple(ids) and comp.budget_unit == "kv_cache_entries"
        assert comp.text == render(TURNS[:n], range(n), "markers")
        assert comp.press["compression_ratio"] == pytest.approx(1 - ratio)
        assert comp.press["budget_unit"] == comp.budget_unit and comp.press["preset"] == name
        assert json.loads(json.dumps(comp.press)) == comp.press


@pytest.mark.parametrize("name", list(_cases()))
def test_every_registered_method_meets_the_contract(
    name: str, request: pytest.FixtureRequest
) -> None:
    params = method_params(name, request)
    method = get_method(name, params)
    twin = get_method(name, params)
    assert method.name == name and isinstance(method.needs_reader, bool)
    assert method_entry(name) is not None
    for n in (12, 3, 1):
        source = Source(TURNS[:n], key=KEY)
        kept_counts = []
        for ratio in RATIOS:
            comp = method.compress(source, ratio)
            check_compression(name, comp, n, ratio)
            assert method.compress(source, ratio) == comp  # same instance, same answer
            assert twin.compress(source, ratio) == comp  # fresh instance, same answer
            kept_counts.append(len(comp.kept_ids))
            full = render(TURNS[:n], range(n), "markers")
            cost = method.cost(comp, full, None)
            # a token budget below every segment keeps nothing (never more than the budget)
            assert cost.q > 0.0 or comp.budget_unit == "reader_tokens"
            assert cost.q <= 1.0 and cost.n_turns == n
            if not method.needs_reader:  # text methods report their kept units, no reader
                assert method.retained_text(source, ratio, no_prompt, None) == comp.kept_text
                assert method.reader_hook(ratio, max_input_tokens=64) is None
                assert cost.kept_turns == len(comp.kept_ids)
                if comp.budget_unit == "reader_tokens":  # what it keeps grows with the budget
                    kept_counts[-1] = comp.record["kept_tokens"]
            else:
                assert cost.q == pytest.approx(int(cost.tokens_full * ratio) / cost.tokens_full)
        assert kept_counts == sorted(kept_counts)  # a larger ratio never keeps fewer units
    forced = method.compress(Source(TURNS, key=KEY, render="plain"), 0.5)
    pieces, state = kept_lines(forced)  # a state line stays a line of its own
    assert forced.render == "plain"
    parts = (" ".join(pieces), state)
    if state_first(forced):
        parts = parts[::-1]
    assert forced.text == "\n".join(filter(None, parts))


def test_every_published_method_is_registered() -> None:
    assert set(PUBLISHED) <= set(known_methods())
    assert {"KnormPress", "SnapKVPress", "ChunkKVPress"} <= set(known_methods("kvpress_class"))
    assert "BasePress" not in known_methods()


@pytest.mark.parametrize("name", PRESETS)
def test_presses_read_the_full_context_and_default_to_their_published_mode(name: str) -> None:
    method = get_method(name)
    assert method.needs_reader and method.budget_unit == "kv_cache_entries"
    comp = method.compress(Source(TURNS, key=KEY), 0.3)
    full = get_method("full_context").compress(Source(TURNS, key=KEY), 0.3)
    assert (comp.text, comp.kept_ids, comp.budget) == (full.text, full.kept_ids, full.budget)
    assert comp.press == {
        "preset": name,
        "mode": "context_only" if name == "chunkkv" else "full_prompt",
        "compression_ratio": pytest.approx(0.7),
        "budget_unit": "kv_cache_entries",
    }


def test_press_mode_and_settings_reach_the_record() -> None:
    comp = get_method("snapkv", {"mode": "context_only", "window_size": 32}).compress(
        Source(TURNS, key=KEY), 0.3
    )
    assert comp.press is not None
    assert comp.press["mode"] == "context_only"
    assert comp.press["overrides"] == {"window_size": 32}
    assert get_method("KnormPress").compress(Source(TURNS, key=KEY), 0.5).press == {
        "preset": "KnormPress",
        "mode": "full_prompt",
        "compression_ratio": 0.5,
        "budget_unit": "kv_cache_entries",
    }


def test_selector_params_reach_the_selector() -> None:
    method = get_method("embedding_mmr", {"trade_off": 0.25})
    assert method.selector.trade_off == 0.25  # type: ignore[attr-defined]


def test_unknown_method_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match="snapkv") as err:
        get_method("no_such_method")
    assert "recency" in str(err.value) and "KnormPress" in str(err.value)


# -- validation of params.yaml ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("methods", "method_params", "retention", "field", "allowed"),
    [
        (["recency", "first_n", "snapkvv"], {}, None, "methods[2]", "snapkv"),
        (["recency"], {}, ["recency", 3], "retention.methods[1]", "first_n"),
        (["recency"], {"nope": {}}, None, "method_params.nope", "chunkkv"),
        (
            ["chunkkv"],
            {"chunkkv": {"chunk_lenght": 20}},
            None,
            "method_params.chunkkv.chunk_lenght",
            "mode, chunk_length, window_size, kernel_size",
        ),
        (
            ["chunkkv"],
            {"chunkkv": {"mode": "prefill"}},
            None,
            "method_params.chunkkv.mode",
            "full_prompt",
        ),
        (
            ["embedding_mmr"],
            {"embedding_mmr": {"trade_of": 0.5}},
            None,
            "method_params.embedding_mmr.trade_of",
            "encoder, trade_off, device, batch_size",
        ),
        (["recency"], {"recency": {"k": 3}}, None, "method_params.recency.k", "(none)"),
        (
            ["KnormPress"],
            {"KnormPress": {"window_size": 8}},
            None,
            "method_params.KnormPress.window_size",
            "mode, compression_ratio",
        ),
    ],
)
def test_bad_method_config_names_file_field_and_allowed_values(
    methods: list[Any],
    method_params: dict[str, Any],
    retention: list[Any] | None,
    field: str,
    allowed: str,
) -> None:
    with pytest.raises(InputError) as err:
        check_methods(methods, method_params, retention_methods=retention, source="params.yaml")
    message = str(err.value)
    assert message.startswith(f"file params.yaml, field '{field}': ")
    assert allowed in message
    assert err.value.field == field


def test_good_method_config_passes() -> None:
    check_methods(
        [*PUBLISHED, "KnormPress"],
        {
            "chunkkv": {"mode": "context_only", "chunk_length": 20},
            "snapkv": {"mode": None},
            "embedding_mmr": {"encoder": None, "trade_off": 0.5},
            "llmlingua2": {"model": "microsoft/llmlingua-2-xlm-roberta-large-meetingbank"},
            "KnormPress": {"compression_ratio": 0.5, "mode": "full_prompt"},
            "random": {"seed": 43},
        },
        retention_methods=["recency", "snapkv"],
    )
    assert check_method_params("pyramidkv", {"beta": 4}).family == "kv_press"


def test_params_yaml_is_validated_without_importing_torch_or_kvpress() -> None:
    code = (
        "import sys\n"
        "from compressbench.config import parse_params\n"
        "from compressbench.errors import InputError\n"
        "raw = {'corpora': {'builtin': {'source': 'builtin'}}, 'datasets': ['builtin'],\n"
        "       'methods': ['recency', 'snapkv', 'KnormPress'],\n"
        "       'method_params': {'chunkkv': {'mode': 'context_only', 'chunk_length': 10}}}\n"
        "parse_params(raw)\n"
        "raw['method_params']['chunkkv']['chunk_lenght'] = 3\n"
        "try:\n"
        "    parse_params(raw)\n"
        "except InputError as exc:\n"
        "    print(exc)\n"
        "print(sorted(m for m in ('torch', 'kvpress', 'transformers') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0].startswith("file params.yaml, field 'method_params.chunkkv.chunk_lenght'")
    assert out[1] == "[]"


def test_parse_params_checks_methods_against_the_registry() -> None:
    raw = pipeline_params(grid=False, methods=["recency", "bogus"])
    with pytest.raises(InputError, match=r"field 'methods\[1\]'.*unknown method 'bogus'"):
        parse_params(raw)


# -- methods that run inside the reader, on the real default reader (SmolLM2, CPU) ------------


@pytest.fixture(scope="module")
def reader() -> Any:
    from compressbench.readers.registry import get_reader
    from compressbench.tpbench.retention_reader import LazyReader

    return LazyReader(lambda: get_reader("hf", attn_implementation="sdpa"))


def p2_prompt(context: str) -> ChatRequest:
    from compressbench.tpbench.prompts import build_prompt

    return build_prompt("P2", context, "number of nights").request("t:0", 4)


@pytest.mark.slow
@pytest.mark.parametrize("name", [*PRESETS, "KnormPress"])
def test_reader_methods_measure_retention_and_plug_into_the_reader(name: str, reader: Any) -> None:
    method = get_method(name)
    source = Source(TURNS, key=KEY)
    small = method.retained_text(source, 0.1, p2_prompt, reader)
    large = method.retained_text(source, 0.7, p2_prompt, reader)
    assert 0 < len(small) < len(large)
    hook = method.reader_hook(0.3, max_input_tokens=reader.max_input_tokens)
    request = p2_prompt(method.compress(source, 0.3).text)
    gens = reader.reader.with_press(hook, hook.spec).generate([request])
    assert len(gens) == 1 and len(hook.records) == 1
    record = hook.records[0].to_dict()
    assert record["mode_requested"] == method.mode  # type: ignore[attr-defined]
    assert record["budget_unit"] == "kv_cache_entries" and 0 < record["kept_fraction"] < 1
    assert record["compression_ratio"] == pytest.approx(0.7)
