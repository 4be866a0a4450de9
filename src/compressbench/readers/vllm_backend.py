"""Offline batch reader on ``vllm.LLM`` (GPU images): same prompt rules as ``hf``.

The prompt is built with the tokenizer's chat template and left-truncated to
``max_input_tokens`` exactly as in :mod:`compressbench.readers.hf`, then handed to vLLM as
token ids; decoding is greedy (``temperature=0``) with ``max_tokens`` per request.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from compressbench.readers import chat
from compressbench.readers.base import (
    ChatRequest,
    Generation,
    Reader,
    ReaderUnavailableError,
    provenance,
)
from compressbench.readers.env import hub_commit, model_sha256
from compressbench.readers.postprocess import from_exception, from_text

DEFAULT_GPU_MEMORY_UTILIZATION = 0.9
NOT_INSTALLED = (
    "the 'vllm' reader needs the vllm package, which is not installed here; it ships in the "
    "CUDA image (docker/Dockerfile.cuda). Use reader 'hf' or 'openai' otherwise."
)


def _import_vllm() -> Any:
    try:
        import vllm
    except ImportError as exc:
        raise ReaderUnavailableError(NOT_INSTALLED) from exc
    return vllm


class VLLMReader(Reader):
    """Parameters: ``model`` (Hub id or local directory), ``revision``, ``model_id`` /
    ``model_revision`` (provenance overrides), ``dtype``, ``max_input_tokens``,
    ``tensor_parallel_size``, ``gpu_memory_utilization``, ``seed``; other keyword arguments go
    to ``vllm.LLM``.
    """

    name = "vllm"
    libraries = ("torch", "vllm")
    # vLLM claims this share of the GPU's memory at start (the default gpu_memory_utilization)
    gpu_memory_floor = DEFAULT_GPU_MEMORY_UTILIZATION

    @classmethod
    def gpu_use(cls, settings: Mapping[str, Any]) -> str | None:
        return "reader vllm runs only on a GPU"

    def __init__(
        self,
        model: str,
        *,
        revision: str | None = None,
        model_id: str | None = None,
        model_revision: str | None = None,
        dtype: str = "bfloat16",
        max_input_tokens: int = chat.DEFAULT_MAX_INPUT_TOKENS,
        max_new_tokens_limit: int = 512,
        tensor_parallel_size: int = 1,
        gpu_memory_utilization: float = DEFAULT_GPU_MEMORY_UTILIZATION,
        seed: int = 0,
        **llm_kwargs: Any,
    ) -> None:
        vllm = _import_vllm()
        self._sampling = vllm.SamplingParams
        self.dtype = dtype
        self.max_input_tokens = max_input_tokens
        self.llm = vllm.LLM(
            model=model,
            revision=revision,
            dtype=dtype,
            tensor_parallel_size=tensor_parallel_size,
            gpu_memory_utilization=gpu_memory_utilization,
            seed=seed,
            max_model_len=max_input_tokens + max_new_tokens_limit,
            **llm_kwargs,
        )
        self.tokenizer = chat.prepare_tokenizer(self.llm.get_tokenizer())
        self.tokenizer_sha = chat.tokenizer_fingerprint(self.tokenizer)
        self.model_id = model_id or model
        if model_revision:
            self.revision = model_revision
        elif Path(model).exists():
            self.revision = model_sha256(model)
        else:
            self.revision = hub_commit(model, revision) or revision or "unknown"

    def decoding(self) -> dict[str, Any]:
        return {
            "temperature": 0.0,
            "max_input_tokens": self.max_input_tokens,
            "truncation_side": "left",
            "chat_template": chat.has_chat_template(self.tokenizer),
            "tokenizer": self.tokenizer_sha,
            "dtype": self.dtype,
        }

    def generate(self, requests: Sequence[ChatRequest]) -> list[Generation]:
        out: list[Generation | None] = [None] * len(requests)
        todo: list[tuple[int, list[int]]] = []
        for i, req in enumerate(requests):
            try:
                prompt = chat.render_chat(self.tokenizer, req.system, req.user)
                todo.append((i, chat.encode(self.tokenizer, prompt, self.max_input_tokens)))
            except Exception as exc:
                out[i] = from_exception(req.id, exc, provenance=self._provenance(req))
        try:
            self._run(requests, todo, out)
        except Exception:
            for item in todo:  # isolate the failing row; the others still get answers
                try:
                    self._run(requests, [item], out)
                except Exception as exc:
                    req = requests[item[0]]
                    out[item[0]] = from_exception(req.id, exc, provenance=self._provenance(req))
        return [g for g in out if g is not None]

    def _run(
        self,
        requests: Sequence[ChatRequest],
        todo: list[tuple[int, list[int]]],
        out: list[Generation | None],
    ) -> None:
        if not todo:
            return
        prompts = [{"prompt_token_ids": ids} for _, ids in todo]
        params = [
            self._sampling(temperature=0.0, max_tokens=requests[i].max_new_tokens) for i, _ in todo
        ]
        start = time.perf_counter()
        results = self.llm.generate(prompts, params, use_tqdm=False)
        seconds = (time.perf_counter() - start) / len(todo)
        for (i, ids), res in zip(todo, results, strict=True):
            completion = res.outputs[0]
            out[i] = from_text(
                requests[i].id,
                completion.text,
                tokens_in=len(ids),
                tokens_out=len(completion.token_ids),
                seconds=seconds,
                provenance=self._provenance(requests[i]),
            )

    def _provenance(self, req: ChatRequest) -> dict[str, Any]:
        prov = provenance(self)
        prov["decoding"]["max_new_tokens"] = req.max_new_tokens
        return prov
