"""``recomp_abstractive``: RECOMP's abstractive compressor (Xu, Shi and Choi, 2024), T5-large.

Input ``Question: {q}\\n Document: {docs}\\n Summary: `` (the baseline re-implementation's
format, research notes §3.3), up to 8,192 input tokens (trained on 512; T5's relative
positions run longer), greedy with one beam, the model's own length: **no sentence budget**
(KEEP-Bench runs it once, without length control; the budget is recorded, never used).
The model runs behind a small seq2seq :class:`~compressbench.readers.base.Reader`, so its
outputs go through the answer cache like any reader's.

Parameters
----------
checkpoint:
    model id or directory. Default ``fangyuan/hotpotqa_abstractive`` (also
    ``fangyuan/nq_abstractive_compressor``, ``fangyuan/tqa_abstractive_compressor``).
max_input_tokens:
    input cap (right truncation). Default 8192.
max_new_tokens:
    output cap. Default 512.
device:
    torch device. Default ``"cpu"``.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.compress.method import Source
from compressbench.keepbench.compressors.base import GenerativeCompressor
from compressbench.keepbench.compressors.registry import register_compressor
from compressbench.keepbench.flops_accounting import recomp_abstractive_flops
from compressbench.readers.base import ChatRequest, Generation, Reader, provenance
from compressbench.readers.postprocess import from_exception

PROMPT_VERSION = "recomp-abstractive-1"


def recomp_input(question: str, documents: Sequence[str]) -> str:
    return f"Question: {question}\n Document: {' '.join(documents)}\n Summary: "


class Seq2SeqReader(Reader):
    """A transformers seq2seq model as a :class:`Reader`: the user message is the input."""

    name = "seq2seq"

    def __init__(self, model: str, *, max_input_tokens: int = 8192, device: str = "cpu") -> None:
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        from compressbench.readers.env import hub_commit, model_sha256

        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.model = AutoModelForSeq2SeqLM.from_pretrained(model).to(device)
        self.model.eval()
        self.model_id = str(model)
        path = Path(model)
        self.revision = model_sha256(path) if path.exists() else (hub_commit(model) or "unknown")
        self.max_input_tokens = max_input_tokens
        self.device = device

    def decoding(self) -> dict[str, Any]:
        return {"do_sample": False, "num_beams": 1, "max_input_tokens": self.max_input_tokens}

    def generate(self, requests: Sequence[ChatRequest]) -> list[Generation]:
        return [self._one(r) for r in requests]

    def prompt_ids(self, request: ChatRequest) -> list[int]:
        """The encoder's input ids: the user message, right-truncated (no chat template)."""
        enc = self.tokenizer(request.user, truncation=True, max_length=self.max_input_tokens)
        return list(enc["input_ids"])

    def _one(self, req: ChatRequest) -> Generation:
        import torch

        start = time.perf_counter()
        prov = provenance(self, device=self.device)
        try:
            enc = self.tokenizer(
                req.user, truncation=True, max_length=self.max_input_tokens, return_tensors="pt"
            ).to(self.device)
            with torch.inference_mode():
                out = self.model.generate(
                    **enc, max_new_tokens=req.max_new_tokens, num_beams=1, do_sample=False
                )
        except Exception as exc:  # one bad row must not sink the batch
            return from_exception(req.id, exc, seconds=time.perf_counter() - start)
        ids = out[0].tolist()
        return Generation(
            id=req.id,
            raw=str(self.tokenizer.decode(ids, skip_special_tokens=True)),
            json_text=None,
            error=None,
            tokens_in=int(enc["input_ids"].shape[1]),
            tokens_out=len(ids),
            seconds=time.perf_counter() - start,
            provenance=prov,
        )


@functools.lru_cache(maxsize=2)
def load_seq2seq(checkpoint: str, max_input_tokens: int, device: str) -> Seq2SeqReader:
    return Seq2SeqReader(checkpoint, max_input_tokens=max_input_tokens, device=device)


@register_compressor("recomp_abstractive")
@dataclass
class RecompAbstractive(GenerativeCompressor):
    flops_account = staticmethod(recomp_abstractive_flops)  # counts its cells
    checkpoint: str = "fangyuan/hotpotqa_abstractive"
    max_input_tokens: int = 8192
    max_new_tokens: int = 512
    device: str = "cpu"

    name = "recomp_abstractive"
    length_control = False

    def describe(self) -> dict[str, Any]:
        return {
            "checkpoint": self.checkpoint,
            "max_input_tokens": self.max_input_tokens,
            "max_new_tokens": self.max_new_tokens,
            "num_beams": 1,
            "prompt_version": PROMPT_VERSION,
        }

    def model_record(self) -> dict[str, Any]:
        return {"prompt_version": PROMPT_VERSION}

    def reader(self) -> Reader:
        return load_seq2seq(self.checkpoint, self.max_input_tokens, self.device)

    def request(self, source: Source, k: int) -> ChatRequest:
        case = source.case  # type: ignore[attr-defined]
        return ChatRequest(
            case.case_id, "", recomp_input(case.query, case.paragraphs), self.max_new_tokens
        )
