"""``llm``: a general LLM prompted to compress under a sentence budget (KEEP-Bench §4.1, C.2).

System instruction per setting + in-context demonstrations of the case's subset (each at its
own budget) + a final user message with the question, the original context and K
(:mod:`~compressbench.keepbench.compressors.llm_prompt`; templates in
``keepbench/prompts/compress/<version>/``). Greedy decoding on any reader backend (``hf``,
``openai``, ``vllm``), thinking off: nothing asks a model to think, a ``<think>`` block that
a chat template opens anyway is removed from the output, and ``no_think_suffix`` (e.g.
``/no_think`` for Qwen3, whose template thinks by default) is appended to the user message.
The output is the compressed context as written (over-long outputs are recorded, not cut,
unless ``truncate``).

Parameters
----------
backend:
    reader backend name. Default ``"hf"``.
model:
    model id / path / served name. ``None`` with ``hf`` = the offline SmolLM2-135M-Instruct.
reader_options:
    extra keyword parameters of the reader (``base_url``, ``dtype``, ``max_input_tokens``...).
prompt_version:
    packaged template version. Default ``"v1"``.
prompt_dir:
    a folder of replacement templates (e.g. the official Appendix E text). Default None.
demonstrations:
    case file holding the demonstration cases. ``None`` = the built-in sample's.
max_demonstrations:
    demonstrations per subset (None = all in the file; 0 = no ICL). Default None.
max_new_tokens:
    output cap. Default 1024 (the paper's cap for API models; open-weight runs used 65,536).
truncate:
    cut outputs to their first K sentences. Default False.
no_think_suffix:
    text appended to the user message to switch thinking off. Default "".
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from compressbench.compress.method import Source
from compressbench.keepbench.compressors.backend import shared_reader
from compressbench.keepbench.compressors.base import GenerativeCompressor
from compressbench.keepbench.compressors.llm_prompt import (
    demonstration_pool,
    demonstrations_for,
    system_message,
    user_message,
)
from compressbench.keepbench.compressors.registry import register_compressor
from compressbench.keepbench.flops_accounting import llm_flops
from compressbench.keepbench.prompts.templates import PromptSet, load_prompts
from compressbench.readers.base import ChatRequest, Reader


@register_compressor("llm")
@dataclass
class LLMCompressor(GenerativeCompressor):
    flops_account = staticmethod(llm_flops)  # counts its cells
    backend: str = "hf"
    model: str | None = None
    reader_options: dict[str, Any] | None = None
    prompt_version: str = "v1"
    prompt_dir: str | None = None
    demonstrations: str | None = None
    max_demonstrations: int | None = None
    max_new_tokens: int = 1024
    truncate: bool = False
    no_think_suffix: str = ""

    name = "llm"

    @functools.cached_property
    def prompts(self) -> PromptSet:
        return load_prompts("compress", self.prompt_version, self.prompt_dir)

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "model": self.model,
            "reader_options": self.reader_options,
            "demonstrations": self.demonstrations or "builtin-sample",
            "max_demonstrations": self.max_demonstrations,
            "max_new_tokens": self.max_new_tokens,
            "truncate": self.truncate,
            "thinking": False,
            "no_think_suffix": self.no_think_suffix,
            "icl": self.max_demonstrations != 0,
            **self.prompts.record(),
        }

    def model_record(self) -> dict[str, Any]:
        return self.prompts.record()

    def reader(self) -> Reader:
        return shared_reader(self.backend, self.model, self.reader_options)

    def reader_source(self) -> tuple[str, str | None]:
        return self.backend, self.model

    def request(self, source: Source, k: int) -> ChatRequest:
        case = source.case  # type: ignore[attr-defined]
        demos = []
        if self.max_demonstrations != 0:
            pool = demonstration_pool(self.demonstrations)
            demos = demonstrations_for(case, pool, self.max_demonstrations)
        user = user_message(self.prompts, case, k)
        if self.no_think_suffix:
            user = f"{user} {self.no_think_suffix}"
        return ChatRequest(
            id=case.case_id,
            system=system_message(self.prompts, case, demos),
            context=user,
            max_new_tokens=self.max_new_tokens,
        )
