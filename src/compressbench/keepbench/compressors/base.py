"""KEEP-Bench compressors under the project's Method contract (``compress/method.py``).

A KEEP case becomes a :class:`KeepSource`: a :class:`~compressbench.compress.method.Source`
whose ``units`` are the context's sentences (``keepbench.sentences``: ``index``, ``text``,
``paragraph``), ``key`` the case id, ``query`` the question, plus the case itself (its setting
and hop/perspective count fix the sentence budget). For these methods the contract's ``ratio``
is the **budget scale** (0.5 / 1 / 2): K = ``sentence_budget(case, ratio)``, i.e. 2h or 2n+1
at 1x (C.2). ``budget_unit`` says so: ``keep_sentences``.

Two shapes share the plumbing here:

* :class:`ExtractiveCompressor` (RECOMP-extractive, EXIT, turn selectors on sentences) scores
  or picks sentences and keeps K of them, in context order, joined by single spaces;
* :class:`GenerativeCompressor` (``llm``, BRIEF-Pro, RECOMP-abstractive) builds one
  :class:`~compressbench.readers.base.ChatRequest` per case and reads the model's text back.
  :meth:`GenerativeCompressor.compress_many` sends all requests through the pipeline's answer
  cache when it is given one (the method itself never caches).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.compress.method import Compression, PromptFn, ReaderHook, Source
from compressbench.compress.text_method import TextMethod
from compressbench.keepbench.cases import KeepCase, sentence_budget
from compressbench.keepbench.compression_cache import compress_cached
from compressbench.keepbench.sentences import count_sentences, split_paragraphs, truncate_to_budget
from compressbench.readers.base import ChatRequest, Generation, Reader
from compressbench.readers.cache import AnswerCache

KEEP_BUDGET_UNIT = "keep_sentences"
FAMILY = "keep_compressor"
RENDER = "sentences"  # kept sentences in context order, joined by one space
_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL)


@dataclass(frozen=True)
class KeepSource(Source):
    """A KEEP case as a method's source (units = its sentences)."""

    case: KeepCase | None = None


def keep_source(case: KeepCase, tokenizer: Any = None) -> KeepSource:
    """The source of ``case``: its sentences, keyed by the case id, with its query."""
    units = tuple(split_paragraphs(case.paragraphs))
    return KeepSource(
        units=units, key=case.case_id, tokenizer=tokenizer, query=case.query, case=case
    )


def budget_of(source: Source, scale: float) -> int:
    """Sentence budget K of the source's case at ``scale``."""
    case = getattr(source, "case", None)
    if not isinstance(case, KeepCase):
        raise TypeError("KEEP compressors need a KeepSource (keep_source(case))")
    return sentence_budget(case, scale)


def join_kept(units: Sequence[Any], keep: Sequence[int]) -> str:
    """The kept units' texts in context order, joined by one space."""
    return " ".join(units[p].text for p in sorted(keep))


def strip_thinking(text: str) -> str:
    """``text`` without ``<think>...</think>`` blocks (thinking is off; some templates still
    open one), stripped."""
    return _THINK.sub("", text).strip()


class KeepMethodBase(TextMethod):
    """The Method members every KEEP compressor shares (``name``/``params`` set by subclasses);
    retention is the compression's text (an abstractive compression keeps no source span)."""

    name: str
    family = FAMILY
    budget_unit = KEEP_BUDGET_UNIT

    def describe(self) -> dict[str, Any]:
        """The method's parameters as recorded (JSON-ready)."""
        return {}

    def retained_text(
        self, source: Source, ratio: float, prompt: PromptFn, reader: ReaderHook | None
    ) -> str:
        return self.compress(source, ratio).text

    def compress_many(
        self, sources: Sequence[Source], ratio: float, *, cache: Any = None, progress: bool = False
    ) -> list[Compression]:
        """Compress several sources (extractive methods: one by one; ``cache`` unused)."""
        return [self.compress(s, ratio) for s in sources]

    def compress_cell(
        self, sources: Sequence[Source], scale: float, cache: AnswerCache
    ) -> tuple[list[Compression], dict[str, int]]:
        """Every source compressed at ``scale`` through the answer cache, and the cache counts:
        each whole compression is stored under the hash of the method and its input."""
        return compress_cached(self.name, self, sources, scale, cache)

    def _record(self, k: int, extra: dict[str, Any]) -> dict[str, Any]:
        return {
            "method": self.name,
            "family": self.family,
            "budget_unit": self.budget_unit,
            "budget": k,
            "params": self.describe(),
            **extra,
        }


class ExtractiveCompressor(KeepMethodBase):
    """Keeps K sentences: subclasses give :meth:`pick` (positions to keep, ascending)."""

    def pick(self, source: Source, k: int) -> list[int]:
        raise NotImplementedError

    def compress(self, source: Source, ratio: float) -> Compression:
        k = budget_of(source, ratio)
        units = source.units
        keep = sorted(self.pick(source, k)) if units else []
        return Compression(
            text=join_kept(units, keep),
            kept_ids=tuple(units[p].index for p in keep),
            kept_text="\n".join(units[p].text for p in keep),
            n_units=len(units),
            budget=k,
            budget_unit=self.budget_unit,
            render=RENDER,
            ratio=ratio,
            record=self._record(k, {"kept": len(keep), "n_sentences": len(units)}),
        )


def top_k_positions(scores: Sequence[float], k: int) -> list[int]:
    """Positions of the ``k`` highest scores (ties -> lower position), ascending."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return sorted(order[: max(0, k)])


class GenerativeCompressor(KeepMethodBase):
    """Writes the compressed context with a model: subclasses give :meth:`request` and
    :meth:`reader` (built lazily, once); ``length_control`` False marks a method that gets no
    budget (RECOMP-abstractive)."""

    length_control = True
    truncate = False  # cut an over-long output to its first K sentences (off: the paper's way)

    def request(self, source: Source, k: int) -> ChatRequest:
        raise NotImplementedError

    def reader(self) -> Reader:
        raise NotImplementedError

    def reader_source(self) -> tuple[str, str | None] | None:
        """The registered reader backend and model :meth:`reader` builds (None: a model of its
        own, not a registered backend); ``compressbench doctor`` checks that it loads."""
        return None

    def model_record(self) -> dict[str, Any]:
        """Extra identity of the request format (e.g. prompt version), recorded per row."""
        return {}

    def compress(self, source: Source, ratio: float) -> Compression:
        return self.compress_many([source], ratio)[0]

    def compress_cell(
        self, sources: Sequence[Source], scale: float, cache: AnswerCache
    ) -> tuple[list[Compression], dict[str, int]]:
        """A generative method's requests go through the answer cache one by one (a killed
        cell resumes at the request in flight)."""
        before = len(cache)
        comps = self.compress_many(sources, scale, cache=cache, progress=True)
        return comps, {"new_cache_entries": len(cache) - before}

    def compress_many(
        self, sources: Sequence[Source], ratio: float, *, cache: Any = None, progress: bool = False
    ) -> list[Compression]:
        """One compression per source; through ``cache`` (an ``AnswerCache``) when given."""
        budgets = [budget_of(s, ratio) for s in sources]
        requests = [self.request(s, k) for s, k in zip(sources, budgets, strict=True)]
        reader = self.reader()
        if cache is None:
            generations = reader.generate(requests)
        else:
            from compressbench.readers.cache import generate_cached

            generations = generate_cached(reader, requests, cache, progress=progress).generations
        return [
            self._generated_compression(s, k, g, ratio)
            for s, k, g in zip(sources, budgets, generations, strict=True)
        ]

    def _generated_compression(
        self, source: Source, k: int, gen: Generation, ratio: float
    ) -> Compression:
        text = strip_thinking(gen.raw)
        n_out = count_sentences(text)
        if self.truncate and self.length_control and n_out > k:
            text = truncate_to_budget(text, k)
        reader = self.reader()
        extra = {
            "length_control": self.length_control,
            "n_sentences": len(source.units),
            "output_sentences": n_out,
            "over_budget": self.length_control and n_out > k,
            "truncated": self.truncate and self.length_control and n_out > k,
            "error": gen.error if gen.is_exception else None,
            "tokens_in": gen.tokens_in,
            "tokens_out": gen.tokens_out,
            "model_id": reader.model_id,
            "model_revision": reader.revision,
            "backend": reader.name,
            **self.model_record(),
        }
        return Compression(
            text=text,
            kept_ids=(),
            kept_text=text,
            n_units=len(source.units),
            budget=k,
            budget_unit=self.budget_unit,
            render="generated",
            ratio=ratio,
            record=self._record(k, extra),
        )
