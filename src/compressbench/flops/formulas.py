"""FLOPs formulas by name, and the dedicated compressors' per-case costs (paper eqs. 4-10).

:data:`FORMULAS` maps a name to ``config -> cost``; :func:`detect_formula` picks one from the
config (``is_encoder_decoder`` -> ``encoder_decoder``; a BERT-family ``model_type`` ->
``encoder``; else ``decoder``). ``exit`` is the decoder formula with EXIT's unmerged rank-64
LoRA adapter on all seven projections and logits at every position (one classification pass
per candidate sentence, no generation). Dedicated compressors get no prefix amortisation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from compressbench.errors import InputError
from compressbench.flops.decoder import DecoderCost, decoder_cost
from compressbench.flops.encdec import EncDecCost, encdec_cost
from compressbench.flops.encoder import EncoderCost, encoder_cost
from compressbench.flops.fields import ConfigFields

EXIT_LORA_RANK = 64
ENCODER_TYPES = frozenset(
    {"bert", "roberta", "xlm-roberta", "electra", "mpnet", "deberta", "deberta-v2", "modernbert"}
)


class Cost(Protocol):
    def case(self, prompt_tokens: int, output_tokens: int) -> int: ...

    def to_dict(self) -> dict[str, int]: ...


def _exit(cfg: ConfigFields) -> DecoderCost:
    return decoder_cost(cfg, lora_rank=EXIT_LORA_RANK, logits_every_position=True)


FORMULAS: dict[str, Callable[[ConfigFields], Any]] = {
    "decoder": decoder_cost,
    "encoder": encoder_cost,
    "encoder_decoder": encdec_cost,
    "exit": _exit,
}


def detect_formula(cfg: ConfigFields) -> str:
    """The formula a config's architecture calls for."""
    if cfg.top.get("is_encoder_decoder") is True:
        return "encoder_decoder"
    if cfg.model_type() in ENCODER_TYPES:
        return "encoder"
    return "decoder"


def cost_from_config(cfg: ConfigFields, formula: str | None = None) -> Any:
    """The cost object (``case`` / ``to_dict``) of ``cfg`` under ``formula`` (default: detected)."""
    name = formula or detect_formula(cfg)
    if name not in FORMULAS:
        raise InputError(f"unknown FLOPs formula {name!r}; allowed: {', '.join(sorted(FORMULAS))}")
    return FORMULAS[name](cfg)


def recomp_extractive_flops(
    cost: EncoderCost, query_tokens: int, sentence_tokens: Sequence[int]
) -> int:
    """Eq. 8: the query and each of the M candidate sentences encoded on their own, plus M dot
    products."""
    return cost.retrieval(query_tokens, sentence_tokens)


def recomp_abstractive_flops(cost: EncDecCost, input_tokens: int, output_tokens: int) -> int:
    """Eq. 9: ``n`` encoder tokens, ``r`` decoder positions, beam width 1."""
    return cost.flops(input_tokens, output_tokens)


def exit_flops(cost: DecoderCost, prompt_tokens: Sequence[int]) -> int:
    """Eq. 10: one forward pass over each classification prompt ``p_j`` (query, the sentence's
    own document, the sentence, the instruction), no prefix reuse: ``sum a'*p_j + b*A(p_j)``
    with the LM head inside ``a'`` (use the ``exit`` formula for ``cost``)."""
    return sum(cost.prefill(p) for p in prompt_tokens)
