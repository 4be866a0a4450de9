"""KEEP-Bench compressors running for real: RECOMP-extractive on the offline MiniLM encoder,
EXIT / RECOMP-abstractive / BRIEF-Pro through their real loaders on tiny random models built
from configs here (the released checkpoints load from the Hub only), and ``llm`` on the
offline SmolLM2 reader through the answer cache. Random weights make the texts meaningless;
the tests check what the code computes and keeps, never quality.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compressbench.keepbench.cases import KeepCase, case_from_dict, sentence_budget
from compressbench.keepbench.compressors.base import keep_source
from compressbench.keepbench.compressors.family import keep_method
from compressbench.keepbench.compressors.llm_prompt import SAMPLE_FILE
from compressbench.readers.cache import AnswerCache
from support.tiny_llama import save_tiny_llama, word_tokenizer

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytestmark = pytest.mark.slow

SCALES = (0.5, 1.0, 2.0)


@pytest.fixture(scope="module")
def cases() -> list[KeepCase]:
    rows = json.loads(SAMPLE_FILE.read_text(encoding="utf-8"))["cases"]
    return [case_from_dict(r) for r in rows if not r.get("demonstration")]


def one_per_subset(cases: list[KeepCase]) -> list[KeepCase]:
    seen: dict[str, KeepCase] = {}
    for c in cases:
        seen.setdefault(c.subset, c)
    return list(seen.values())


@pytest.fixture(scope="module")
def tokenizer(cases: list[KeepCase]) -> Any:
    from compressbench.keepbench.compressors.brief_pro import brief_prompt
    from compressbench.keepbench.compressors.exit import PROMPT

    texts = [PROMPT, brief_prompt("q", ["d"], 1), "Question: Document: Summary:"]
    texts += [c.query for c in cases] + [p for c in cases for p in c.paragraphs]
    return word_tokenizer(texts)


# -- RECOMP extractive on the offline encoder --------------------------------------------------


def test_recomp_extractive_keeps_top_k_by_dot_product_of_mean_pooled_embeddings(cases) -> None:
    import torch

    from compressbench.keepbench.compressors.recomp_extractive import (
        default_checkpoint,
        load_encoder,
    )

    method = keep_method("recomp_extractive")
    tokenizer, model = load_encoder(default_checkpoint(), "cpu")

    def alone(text: str) -> torch.Tensor:  # each text encoded by itself, no padding at all
        enc = tokenizer(text, return_tensors="pt")
        with torch.inference_mode():
            hidden = model(**enc).last_hidden_state[0]
        return hidden.mean(0)

    for case in one_per_subset(cases):
        source = keep_source(case)
        texts = [u.text for u in source.units]
        scores = method.scores(case.query, texts)  # type: ignore[attr-defined]
        q = alone(case.query)
        expected = [float(alone(t) @ q) for t in texts]
        assert scores == pytest.approx(expected, rel=1e-4, abs=1e-4)
        for scale in SCALES:
            k = sentence_budget(case, scale)
            comp = method.compress(source, scale)
            order = sorted(range(len(texts)), key=lambda i: (-expected[i], i))[:k]
            assert list(comp.kept_ids) == sorted(source.units[i].index for i in order)
            assert comp.text == " ".join(texts[i] for i in sorted(order))
            assert comp.record["params"]["normalize"] is False


# -- EXIT on a tiny Gemma with a LoRA adapter --------------------------------------------------


@pytest.fixture(scope="module")
def tiny_exit(tmp_path_factory: pytest.TempPathFactory, tokenizer: Any) -> tuple[str, str]:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import GemmaConfig, GemmaForCausalLM

    root = tmp_path_factory.mktemp("exit")
    base, adapter = root / "gemma", root / "lora"
    config = GemmaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=2048,
        pad_token_id=0, eos_token_id=1, bos_token_id=3,
    )  # fmt: skip
    torch.manual_seed(0)
    model = GemmaForCausalLM(config)
    model.save_pretrained(base)
    tokenizer.save_pretrained(base)
    lora = LoraConfig(
        r=4, lora_alpha=8, init_lora_weights=False,
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                        "down_proj"],
    )  # fmt: skip
    get_peft_model(model, lora).save_pretrained(adapter)
    return str(base), str(adapter)


def test_exit_scores_each_sentence_in_its_own_document_and_keeps_top_k(
    cases, tiny_exit: tuple[str, str]
) -> None:
    import torch

    from compressbench.keepbench.compressors.exit import exit_prompt, load_classifier

    base, adapter = tiny_exit
    method = keep_method("exit", {"base": base, "adapter": adapter})
    bare = keep_method("exit", {"base": base, "adapter": None})
    tok, model, yes, no = load_classifier(base, adapter, "float32", "cpu")
    from peft import PeftModel

    assert isinstance(model, PeftModel)  # the adapter is loaded and left unmerged
    assert any("lora_A" in name for name, _ in model.named_parameters())
    assert (yes, no) == (tok.convert_tokens_to_ids("Yes"), tok.convert_tokens_to_ids("No"))
    case = one_per_subset(cases)[0]
    source = keep_source(case)
    prompts = [exit_prompt(case.query, case.paragraphs[u.paragraph], u.text) for u in source.units]
    assert case.paragraphs[source.units[0].paragraph] in prompts[0]
    assert case.paragraphs[-1] not in prompts[0]  # never the whole context
    p_yes = method.p_yes(prompts)  # type: ignore[attr-defined]
    ids = tok(prompts[0], return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        logits = model(input_ids=ids).logits[0, -1]
    manual = torch.softmax(torch.stack([logits[yes], logits[no]]), 0)[0]
    assert p_yes[0] == pytest.approx(float(manual), abs=1e-6)
    assert p_yes != pytest.approx(bare.p_yes(prompts))  # type: ignore[attr-defined]
    for scale in SCALES:
        k = sentence_budget(case, scale)
        comp = method.compress(source, scale)
        order = sorted(range(len(p_yes)), key=lambda i: (-p_yes[i], i))[:k]
        assert list(comp.kept_ids) == sorted(order) and len(comp.kept_ids) == k


# -- RECOMP abstractive on a tiny T5 -----------------------------------------------------------


def test_recomp_abstractive_runs_its_loader_without_a_budget_and_caches(
    cases, tmp_path: Path, tokenizer: Any
) -> None:
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    model_dir = tmp_path / "t5"
    config = T5Config(
        vocab_size=len(tokenizer), d_model=16, d_ff=32, d_kv=8, num_layers=1,
        num_decoder_layers=1, num_heads=2, pad_token_id=0, eos_token_id=1,
        decoder_start_token_id=0,
    )  # fmt: skip
    torch.manual_seed(0)
    T5ForConditionalGeneration(config).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    method = keep_method("recomp_abstractive", {"checkpoint": str(model_dir), "max_new_tokens": 12})
    sources = [keep_source(c) for c in one_per_subset(cases)]
    with AnswerCache(tmp_path / "cache.sqlite") as cache:
        comps = method.compress_many(sources, 0.5, cache=cache)  # type: ignore[attr-defined]
        again = method.compress_many(sources, 2.0, cache=cache)  # type: ignore[attr-defined]
        assert len(cache) == len(sources)  # no budget: every scale asks the same
    for comp, rerun, source in zip(comps, again, sources, strict=True):
        assert comp.text == rerun.text and comp.record["length_control"] is False
        assert comp.record["over_budget"] is False and comp.kept_ids == ()
        assert 0 < comp.record["tokens_out"] <= 13 and comp.record["backend"] == "seq2seq"
        assert comp.budget == sentence_budget(source.case, 0.5)  # recorded, never used


# -- BRIEF-Pro on a tiny Llama through the hf reader -------------------------------------------


def test_brief_pro_sends_k_between_the_reserved_tokens(cases, tmp_path: Path, tokenizer) -> None:
    model_dir = save_tiny_llama(tmp_path / "llama", tokenizer, num_hidden_layers=2)
    method = keep_method("brief_pro", {"model": model_dir, "max_new_tokens": 8})
    case = one_per_subset(cases)[0]
    source = keep_source(case)
    request = method.request(source, 4)  # type: ignore[attr-defined]
    ids = tokenizer(request.user)["input_ids"]
    open_id = tokenizer.convert_tokens_to_ids("<|reserved_special_token_100|>")
    close_id = tokenizer.convert_tokens_to_ids("<|reserved_special_token_101|>")
    at = ids.index(open_id)
    assert ids[at + 2] == close_id and tokenizer.decode([ids[at + 1]]) == "4"
    comp = method.compress(source, 1.0)
    assert comp.record["backend"] == "hf" and comp.record["model_id"] == model_dir
    assert comp.record["tokens_out"] <= 8 and comp.budget == 4


# -- llm on the offline reader, through the cache ----------------------------------------------


def test_llm_compressor_on_the_offline_reader_is_cached(cases, tmp_path: Path) -> None:
    method = keep_method("llm", {"max_new_tokens": 16, "max_demonstrations": 0})
    shortest = min(cases, key=lambda c: len(c.context))
    sources = [keep_source(shortest)]
    with AnswerCache(tmp_path / "cache.sqlite") as cache:
        comps = method.compress_many(sources, 1.0, cache=cache)  # type: ignore[attr-defined]
        stored = len(cache)
        again = method.compress_many(sources, 1.0, cache=cache)  # type: ignore[attr-defined]
        assert stored == len(sources) == len(cache)
    for comp, rerun, source in zip(comps, again, sources, strict=True):
        assert comp == rerun and comp.text and comp.record["error"] is None
        assert comp.record["backend"] == "hf" and comp.record["prompt_version"] == "v1"
        assert comp.record["tokens_out"] <= 16
        assert comp.record["budget"] == sentence_budget(source.case, 1.0)
        assert comp.record["over_budget"] == (comp.record["output_sentences"] > comp.budget)
