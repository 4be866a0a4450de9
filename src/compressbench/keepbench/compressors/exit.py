"""``exit``: EXIT (Hwang et al., 2025), sentence classification with a LoRA-tuned Gemma, top-K.

For every candidate sentence one forward pass reads a Gemma chat prompt holding the query, the
sentence's **own document** (its paragraph, never the whole context), the sentence and the
question whether the sentence helps answer the query; the score is P("Yes") from a softmax
over the logits of the "Yes" and "No" tokens at the last position. The reference selects by a
0.5 threshold; KEEP-Bench keeps the K highest scores instead (C.2), in context order.
Prompt wording after ThisIsHwang/EXIT ``compressors/baselines/exit/core.py`` (research notes
§3.1); the model turn is opened by the Gemma chat markers written out, as the reference does.

Parameters
----------
base:
    base model id or directory. Default ``google/gemma-2b-it``.
adapter:
    PEFT LoRA adapter id or directory (loaded with ``PeftModel.from_pretrained``, left
    unmerged as the FLOPs formula assumes), or ``None`` for the bare base. Default
    ``doubleyyh/exit-gemma-2b``.
dtype:
    torch dtype name. Default ``"float32"`` (the reference's 4-bit load needs a GPU).
device:
    torch device. Default ``"cpu"``.
max_length:
    token cap per classification prompt (left part kept). Default 4096.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.compress.method import Compression, Source
from compressbench.flops.decoder import decoder_cost
from compressbench.flops.formulas import EXIT_LORA_RANK, exit_flops
from compressbench.keepbench.compressors.base import ExtractiveCompressor, top_k_positions
from compressbench.keepbench.compressors.registry import register_compressor
from compressbench.keepbench.flops_accounting import CellFlops, model_config

PROMPT = (
    "<start_of_turn>user\n"
    "Query:\n{query}\n"
    "Full context:\n{context}\n"
    "Sentence:\n{sentence}\n"
    'Is this sentence useful in answering the query? Answer only "Yes" or "No".'
    "<end_of_turn>\n<start_of_turn>model\n"
)


def exit_prompt(query: str, document: str, sentence: str) -> str:
    """The classification prompt of one sentence within its own document."""
    return PROMPT.format(query=query, context=document, sentence=sentence)


@functools.lru_cache(maxsize=2)
def load_classifier(
    base: str, adapter: str | None, dtype: str, device: str
) -> tuple[Any, Any, int, int]:
    """(tokenizer, model, id of "Yes", id of "No"), loaded once per process."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(base)
    model: Any = AutoModelForCausalLM.from_pretrained(base, dtype=getattr(torch, dtype))
    if adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter)
    model.to(device)
    model.eval()
    yes = tokenizer.encode("Yes", add_special_tokens=False)
    no = tokenizer.encode("No", add_special_tokens=False)
    if not yes or not no:
        raise ValueError(f"tokenizer of {base} cannot encode 'Yes' / 'No'")
    return tokenizer, model, int(yes[0]), int(no[0])


def exit_account(
    method: Any, sources: Sequence[Source], comps: Sequence[Compression], override: str | None
) -> CellFlops:
    tokenizer, model, _, _ = load_classifier(
        method.base, method.adapter, method.dtype, method.device
    )
    rank = EXIT_LORA_RANK if method.adapter else 0
    cfg = model_config(model, override, "exit")
    cost = decoder_cost(cfg, lora_rank=rank, logits_every_position=True)
    per_case: list[float | None] = []
    for s, c in zip(sources, comps, strict=True):
        if c.budget >= len(s.units):
            per_case.append(0)
            continue
        case = s.case  # type: ignore[attr-defined]
        prompts = [
            exit_prompt(s.query or "", case.paragraphs[u.paragraph], u.text) for u in s.units
        ]
        lengths = [min(len(tokenizer(p)["input_ids"]), method.max_length) for p in prompts]
        per_case.append(exit_flops(cost, lengths))
    return CellFlops(per_case, "exit", cost.to_dict(), note=f"LoRA rank {rank}, logits everywhere")


@register_compressor("exit")
@dataclass
class Exit(ExtractiveCompressor):
    flops_account = staticmethod(exit_account)  # counts its cells
    base: str = "google/gemma-2b-it"
    adapter: str | None = "doubleyyh/exit-gemma-2b"
    dtype: str = "float32"
    device: str = "cpu"
    max_length: int = 4096

    name = "exit"

    def describe(self) -> dict[str, Any]:
        return {"base": self.base, "adapter": self.adapter, "dtype": self.dtype}

    def p_yes(self, prompts: list[str]) -> list[float]:
        """P("Yes") of each classification prompt (one forward pass each, unpadded)."""
        import torch

        tokenizer, model, yes, no = load_classifier(
            self.base, self.adapter, self.dtype, self.device
        )
        out = []
        for prompt in prompts:
            ids = tokenizer(prompt, return_tensors="pt")["input_ids"][:, -self.max_length :]
            with torch.inference_mode():
                logits = model(input_ids=ids.to(self.device)).logits[0, -1]
            pair = torch.stack([logits[yes], logits[no]]).float()
            out.append(float(torch.softmax(pair, dim=0)[0]))
        return out

    def pick(self, source: Source, k: int) -> list[int]:
        units = source.units
        if k >= len(units):
            return list(range(len(units)))
        documents: dict[int, str] = {}
        for u in units:
            documents[u.paragraph] = (documents.get(u.paragraph, "") + " " + u.text).strip()
        case = getattr(source, "case", None)
        if case is not None:  # the paragraph as written in the case, not re-joined sentences
            documents = {p: case.paragraphs[p] for p in documents}
        prompts = [exit_prompt(source.query or "", documents[u.paragraph], u.text) for u in units]
        return top_k_positions(self.p_yes(prompts), k)
