"""A reader of the paper reader's shape with random weights, for GPU speed checks.

A bare GPU machine has torch and transformers but no weights and no tokenizer files. Speed
does not depend on the weights' values, so :func:`build_model` builds the model from its
config with random weights on the device; :func:`build_tokenizer` is a word-level tokenizer
(``w<i>`` is token ``i``) with a Llama-like chat template, so a prompt of ``n`` words is ``n``
tokens; :func:`in_memory_reader` wraps both in the project's :class:`~.hf.HFReader` (which
otherwise loads from a path). Answers are meaningless.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from compressbench.readers import chat
from compressbench.readers.base import ChatRequest, render_user
from compressbench.readers.decode_modes import DEFAULT_DECODE_MODE, StaticCachePool, get_decode_mode
from compressbench.readers.hf import HFReader

# Llama-3.1-8B-Instruct's config.json (revision 0e9e39f2, spec §6), model fields only.
LLAMA_31_8B: dict[str, Any] = {
    "vocab_size": 128256,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "hidden_act": "silu",
    "max_position_embeddings": 131072,
    "rms_norm_eps": 1e-05,
    "rope_theta": 500000.0,
    "rope_scaling": {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
    "tie_word_embeddings": False,
    "attention_bias": False,
    "mlp_bias": False,
    "bos_token_id": 128000,
    "eos_token_id": [128001, 128008, 128009],
}
SMALL: dict[str, Any] = {
    **LLAMA_31_8B,
    "vocab_size": 1024,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "bos_token_id": 1000,
    "eos_token_id": [1001],
}
# 50 quantiles ((i + 0.5) / 50) of SGD P2 prompt lengths in tokens, measured on the first 400
# SGD test dialogues: every change event's full-context P2 prompt in the reader's chat template
# with the SmolLM2 tokenizer (381 prompts; mean 475, min 284, max 682).
P2_LENGTHS = (
    288, 328, 339, 351, 363, 368, 374, 380, 385, 397, 406, 413, 417, 422, 425, 428, 434,
    436, 441, 445, 450, 456, 462, 466, 469, 469, 474, 476, 481, 484, 491, 494, 499, 510,
    521, 523, 525, 537, 546, 552, 562, 570, 575, 582, 583, 588, 601, 619, 622, 679,
)  # fmt: skip


def build_model(cfg: dict[str, Any], device: Any, dtype: Any, attn: str) -> Any:
    """A LlamaForCausalLM from ``cfg`` with random weights, created on ``device``."""
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(**copy.deepcopy(cfg))  # LlamaConfig rewrites rope_scaling in place
    torch.manual_seed(0)
    with torch.device(device):
        try:
            model = AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation=attn)
        except TypeError:  # transformers < 4.56 names it torch_dtype
            model = AutoModelForCausalLM.from_config(
                config, torch_dtype=dtype, attn_implementation=attn
            )
    return model.eval()


def build_tokenizer(vocab_size: int, bos: int, eos: int) -> Any:
    """Word-level tokenizer: ``w<i>`` is token i, whitespace separates, Llama-like template.

    A few structural words and the specials take ids at the top of the vocabulary; prompt
    words are drawn below :data:`WORD_IDS_BELOW` of the model's vocabulary."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    names = [f"w{i}" for i in range(vocab_size)]
    words = ["system", "user", "assistant", "<hdr>", "</hdr>", "Context:", "Question:", "<unk>"]
    for i, w in enumerate(words):
        names[vocab_size - 1 - i] = w
    names[bos], names[eos] = "<bos>", "<eos>"
    vocab = {w: i for i, w in enumerate(names)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>")
    fast.chat_template = (
        "<bos>{% for m in messages %} <hdr> {{ m['role'] }} </hdr> {{ m['content'] }} <eos>"
        "{% endfor %}{% if add_generation_prompt %} <hdr> assistant </hdr>{% endif %}"
    )
    return fast


def make_requests(
    tokenizer: Any, lengths: list[int], new_tokens: int, vocab: int
) -> list[ChatRequest]:
    """Chat requests whose templated prompts have exactly ``lengths`` tokens."""
    rng = random.Random(20261130)

    def words(n: int) -> str:  # ids below ``vocab``: no special or structural word
        return " ".join(f"w{rng.randrange(vocab)}" for _ in range(n))

    system, question = words(60), words(30)
    out = []
    for i, n in enumerate(lengths):
        base = len(
            chat.encode(
                tokenizer,
                chat.render_chat(tokenizer, system, render_user("Context: ", question)),
                10**6,
            )
        )
        if n <= base:
            raise ValueError(f"prompt length {n} must exceed the fixed part's {base} tokens")
        context = f"Context: {words(n - base)}"  # a press prefills this, then the question
        out.append(ChatRequest(f"p{i:02d}", system, context, new_tokens, question=question))
    return out


def in_memory_reader(
    model: Any,
    tokenizer: Any,
    device: Any,
    batch_size: int = 1,
    decode_mode_name: str = DEFAULT_DECODE_MODE,
) -> HFReader:
    """An :class:`HFReader` around an in-memory model (there are no weights to load), in
    decode mode ``decode_mode_name``."""
    reader = HFReader.__new__(HFReader)
    chat.prepare_tokenizer(tokenizer)
    reader.__dict__.update(
        dtype=str(model.dtype).removeprefix("torch."),
        attn_implementation=model.config._attn_implementation,
        batch_size=batch_size,
        max_batch_tokens=None,
        max_input_tokens=chat.DEFAULT_MAX_INPUT_TOKENS,
        press=None,
        press_spec=None,
        decode_mode=get_decode_mode(decode_mode_name),
        static_caches=StaticCachePool(),
        device=device,
        model=model,
        tokenizer=tokenizer,
        tokenizer_sha=chat.tokenizer_fingerprint(tokenizer),
        model_id="random-llama-3.1-8b-shape",
        revision="random",
        pad_token_id=int(tokenizer.eos_token_id),
        eos_token_ids={int(tokenizer.eos_token_id)},
        stats={},
    )
    return reader


FOLDER_MARKER = "compressbench_synthetic.json"  # written last: a folder without it is incomplete


def save_model_folder(cfg: dict[str, Any], out: Any, device: Any, dtype: Any) -> dict[str, Any]:
    """Write a model folder of ``cfg``'s shape with random weights that the hf reader loads like
    any local model (``config.json``, ``generation_config.json``, safetensors shards, the
    word-level tokenizer of :func:`build_tokenizer` splitting punctuation too, so English
    prompts come out near a BPE tokenizer's length, every unknown word one ``<unk>``). An
    existing complete folder of the same config is kept. Returns sizes and timings."""
    import json
    import time
    from pathlib import Path

    import torch
    from tokenizers import pre_tokenizers
    from transformers import GenerationConfig

    folder = Path(out)
    marker = folder / FOLDER_MARKER
    wanted = json.dumps(cfg, sort_keys=True) + str(dtype)
    if marker.is_file() and json.loads(marker.read_text())["shape"] == wanted:
        return {**json.loads(marker.read_text())["report"], "reused": True}
    start = time.perf_counter()
    model = build_model(cfg, device, dtype, "sdpa")
    eos = cfg["eos_token_id"] if isinstance(cfg["eos_token_id"], list) else [cfg["eos_token_id"]]
    model.generation_config = GenerationConfig(
        bos_token_id=cfg["bos_token_id"], eos_token_id=eos, do_sample=False
    )
    tokenizer = build_tokenizer(cfg["vocab_size"], cfg["bos_token_id"], eos[-1])
    tokenizer.backend_tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()]
    )
    built = time.perf_counter() - start
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder, max_shard_size="5GB")
    tokenizer.save_pretrained(folder)
    del model
    if device.type == "cuda":
        torch.cuda.empty_cache()
    weights = sum(f.stat().st_size for f in folder.glob("*.safetensors"))
    report = {"build_s": round(built, 2), "save_s": round(time.perf_counter() - start - built, 2),
              "weights_bytes": weights, "dtype": str(dtype), "reused": False}  # fmt: skip
    marker.write_text(json.dumps({"shape": wanted, "report": report}))
    return report
