"""``brief_pro``: BRIEF-Pro (Gu et al., 2026), a Llama-3.2-3B compressor with a user-set length.

One user message (paraphrased from JasonForJoy/BRIEF
``BRIEF-Pro/eval/vllm_compression_longbench_testAll_UserControl.py``, research notes §3.4):
the instruction to write a high-quality summary of the documents with respect to the question,
the sections ``### This is the question:``, ``### These are the documents:`` and ``### This is
the summary:``, then the length control: summarise the relevant documents in K sentences, K
written between the Llama-3 reserved special tokens 100 and 101. The exact control wording of
the release is not reachable here (a reconstruction; the special-token wrapping is the
model's). The reader's chat template adds the Llama-3 headers; its system message is empty.
Decoding is greedy (the reference samples at temperature 0.01, top-p 0.95) with up to 1,024
new tokens.

Parameters
----------
backend:
    reader backend (``hf``, ``vllm``, ``openai``). Default ``"hf"``.
model:
    checkpoint id / path / served name. Default ``uclanlp/brief-pro``.
reader_options:
    extra keyword parameters of the reader.
max_new_tokens:
    output cap. Default 1024.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compressbench.compress.method import Source
from compressbench.keepbench.compressors.backend import shared_reader
from compressbench.keepbench.compressors.base import GenerativeCompressor
from compressbench.keepbench.compressors.registry import register_compressor
from compressbench.keepbench.flops_accounting import brief_pro_flops
from compressbench.readers.base import ChatRequest, Reader

PROMPT_VERSION = "brief-pro-usercontrol-reconstructed-1"
CONTROL_OPEN = "<|reserved_special_token_100|>"
CONTROL_CLOSE = "<|reserved_special_token_101|>"


def brief_prompt(question: str, documents: list[str], k: int) -> str:
    """The BRIEF-Pro user message for ``question`` over ``documents`` in ``k`` sentences."""
    docs = "\n\n".join(documents)
    return (
        "Write a high-quality summary of the provided documents with respect to the question.\n"
        f"### This is the question: {question}\n"
        f"### These are the documents:\n{docs}\n"
        "### This is the summary:\n"
        "Summarize the documents relevant to the question in "
        f"{CONTROL_OPEN}{k}{CONTROL_CLOSE} sentences."
    )


@register_compressor("brief_pro")
@dataclass
class BriefPro(GenerativeCompressor):
    flops_account = staticmethod(brief_pro_flops)  # counts its cells
    backend: str = "hf"
    model: str = "uclanlp/brief-pro"
    reader_options: dict[str, Any] | None = None
    max_new_tokens: int = 1024

    name = "brief_pro"

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "model": self.model,
            "reader_options": self.reader_options,
            "max_new_tokens": self.max_new_tokens,
            "prompt_version": PROMPT_VERSION,
        }

    def model_record(self) -> dict[str, Any]:
        return {"prompt_version": PROMPT_VERSION}

    def reader(self) -> Reader:
        return shared_reader(self.backend, self.model, self.reader_options)

    def reader_source(self) -> tuple[str, str | None]:
        return self.backend, self.model

    def request(self, source: Source, k: int) -> ChatRequest:
        case = source.case  # type: ignore[attr-defined]
        user = brief_prompt(case.query, list(case.paragraphs), k)
        return ChatRequest(case.case_id, "", user, self.max_new_tokens)
