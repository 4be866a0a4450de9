"""The one reader interface: chat requests in, one generation per request out.

A reader (a subclass of :class:`Reader`) turns :class:`ChatRequest` rows into
:class:`Generation` rows, in input order, one for one. It never drops a row (a failure becomes
a row with ``error`` set), never caches and never retries generically: caching lives in
:mod:`compressbench.readers.cache`. Transport-level retries of a remote API (HTTP 429/5xx)
belong to that backend.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from compressbench.jsonl import canonical_json
from compressbench.readers import chat
from compressbench.readers.chat import DEFAULT_MAX_INPUT_TOKENS

#: What joins a request's context and its question in the user turn (TPBench's prompt, spec
#: §3.8: ``"Context:\\n" + dialogue + QUESTION_JOIN + question + schema``). The one definition:
#: prefix reuse and KV presses split a prompt where its question starts, and a request that
#: carries its question says where that is without searching its text.
QUESTION_JOIN = "\n\nQuestion: "


def render_user(context: str, question: str | None) -> str:
    """The user turn of a request: ``context``, then ``QUESTION_JOIN`` and ``question`` when
    there is one (the one place the two are joined)."""
    return context if question is None else context + QUESTION_JOIN + question


@dataclass(frozen=True)
class ChatRequest:
    """One question for the reader.

    ``id`` is the stable probe id carried from the probes stage. The user turn is
    :attr:`user`: ``context`` and ``question`` joined by :func:`render_user`; a request with no
    question (``question=None``) has the whole user turn in ``context`` (nothing to split).
    ``max_new_tokens`` is the output budget (96 for P1/P2, 128 for P3 in the reference runs).
    ``response_schema``: a JSON Schema the answer must follow (structured output; None: free
    decoding, as published).
    """

    id: str
    system: str
    context: str
    max_new_tokens: int = 96
    response_schema: Mapping[str, Any] | None = None
    # last, so that a positional ``ChatRequest(id, system, text, budget)`` keeps its meaning
    question: str | None = None

    @property
    def user(self) -> str:
        """The rendered user turn (what the reader reads and what the cache key holds)."""
        return render_user(self.context, self.question)

    @property
    def question_at(self) -> int | None:
        """Where the question's join starts in :attr:`user` (None: no question)."""
        return None if self.question is None else len(self.context)


def question_offset(text: str, request: ChatRequest) -> int | None:
    """Where ``request``'s question join starts in ``text``, a prompt that holds its user turn
    verbatim (a chat template's rendering); None when the request has no question or the
    user turn is not in ``text`` as is."""
    if request.question_at is None:
        return None
    start = text.rfind(request.user)
    return None if start < 0 else start + request.question_at


@dataclass
class Generation:
    """What a reader produced for one request.

    ``raw`` is the decoded new text; ``json_text`` the last flat JSON object in it that parses
    (None if none); ``error`` is None, ``"no-json"`` or ``"exception:<Type>:<msg>"``.
    ``provenance`` names backend, model id, revision and decoding parameters. ``record`` is
    what a method hook (a KV press) reported for this generation, JSON-ready (see
    :func:`json_record`); None when no hook ran.
    """

    id: str
    raw: str
    json_text: str | None
    error: str | None
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    provenance: dict[str, Any] = field(default_factory=dict)
    record: dict[str, Any] | None = None

    @property
    def output_text(self) -> str:
        """The stored reader output (§6): the JSON object if found, else the stripped raw text."""
        if self.json_text is not None:
            return self.json_text
        return self.raw.strip()

    @property
    def is_exception(self) -> bool:
        """True when generation itself failed (transient; never cached)."""
        return self.error is not None and self.error.startswith("exception:")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> Generation:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in row.items() if k in names})


def json_record(record: Any) -> dict[str, Any] | None:
    """A hook's record (an object with ``to_dict()`` or a mapping) as plain JSON data with
    sorted keys, so a fresh record and one read back from the cache are equal byte for byte."""
    if record is None:
        return None
    raw = record.to_dict() if hasattr(record, "to_dict") else dict(record)
    out: dict[str, Any] = json.loads(canonical_json(raw))
    return out


@dataclass(frozen=True)
class ModelSource:
    """Where a backend reads ``reader.model`` from: ``kind`` is :data:`SERVER` (a served API),
    :data:`PACKAGED` (installed from PyPI), :data:`LOCAL` (a path) or :data:`HUB` (a Hub id)."""

    kind: str
    ref: str
    revision: str | None = None


SERVER, PACKAGED, LOCAL, HUB = "server", "packaged", "local", "hub"


class Reader:
    """A reader LLM behind one backend (``hf``, ``llamacpp``, ``openai``, ``vllm``, ``mock``).

    Every backend subclasses this class. A backend must set ``name`` (as registered),
    ``model_id`` and ``revision`` and implement :meth:`decoding` and :meth:`generate`; every
    other member below is a capability a stage, the answer cache, a press or the doctor reads,
    declared here with the value a backend without it has.
    """

    name: str  # backend name as registered
    model_id: str
    revision: str

    # -- facts of the backend (class level: read without building a reader) ---------------
    #: Python packages the backend loads (the environment check lists their versions).
    libraries: ClassVar[tuple[str, ...]] = ()
    #: True if the backend constrains an answer to a request's ``response_schema``.
    structured_output: ClassVar[bool] = False
    #: Share of the GPU's memory the backend claims when it starts, whatever the model needs.
    gpu_memory_floor: ClassVar[float] = 0.0

    # -- what a built reader holds (None / empty: it has no such thing) --------------------
    #: The KV press hook generation runs under (hf only; ``readers.press_hook.PressHook``).
    press: Any = None
    #: The loaded model object (in-process backends; its ``config`` sizes FLOPs).
    model: Any = None
    #: The tokenizer the reader encodes prompts with (in-process backends).
    tokenizer: Any = None
    #: Left truncation of the prompt, in the reader's tokens.
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS
    #: Where a served model is reached (remote backends).
    base_url: str | None = None
    #: Requests generated and committed to the answer cache together.
    commit_every: int = 8
    #: Load and run counters for the cell's ``.stats.json`` (``reader_stats``).
    stats: Mapping[str, Any] = MappingProxyType({})

    def decoding(self) -> dict[str, Any]:
        """Every parameter that can change the output (part of the cache key)."""
        raise NotImplementedError

    def generate(self, requests: Sequence[ChatRequest]) -> list[Generation]:
        """One generation per request, same order; per-row failures go in ``error``."""
        raise NotImplementedError

    def with_press(
        self, press: Any, press_spec: dict[str, Any] | None = None, **overrides: Any
    ) -> Reader:
        """A reader sharing this one's model that generates under the KV press hook ``press``
        (``press_spec``: its parameters for the cache key); only in-process backends can."""
        raise ReaderUnavailableError(f"reader {self.name!r} cannot run a KV press")

    def record(self) -> dict[str, Any]:
        """What a run records of this reader besides the decoding parameters (package version,
        model file, threads, seed); empty by default."""
        return {}

    def request_order(self, request: ChatRequest) -> Any:
        """Sort key of the order the answer cache generates misses in: by prompt length by
        default (batches of similar length pad little). Order never changes an answer."""
        return len(request.system) + len(request.user)

    def model_config(self) -> dict[str, Any] | None:
        """The model's Hugging Face config as a dict (FLOPs, sizes); None for a remote model."""
        config = getattr(self.model, "config", None)
        to_dict = getattr(config, "to_dict", None)
        return dict(to_dict()) if callable(to_dict) else None

    def prompt_ids(self, request: ChatRequest) -> list[int] | None:
        """The token ids the reader feeds for ``request`` (chat template, left truncation);
        None when the reader has no local tokenizer."""
        if self.tokenizer is None:
            return None
        text = chat.render_chat(self.tokenizer, request.system, request.user)
        return chat.encode(self.tokenizer, text, self.max_input_tokens)

    @staticmethod
    def tokenizer_for(model: str | None) -> Any:
        """The tokenizer of ``model`` loaded without the model (reader-token budgets), or
        None when the backend cannot load one here."""
        return None

    @staticmethod
    def model_problem(model: str) -> str | None:
        """Why this backend cannot read ``model`` (checked when params.yaml is read; loads no
        weights and no backend library), else None."""
        return None

    @classmethod
    def model_source(cls, model: str, revision: str | None = None) -> ModelSource:
        """Where ``reader.model`` comes from: a local path (one that exists, starts with
        ``/``, ``.`` or ``~``, or names a ``.gguf``) or else a Hub id."""
        path = Path(model).expanduser()
        if model.startswith(("/", ".", "~")) or model.endswith(".gguf") or path.exists():
            return ModelSource(LOCAL, str(path))
        return ModelSource(HUB, model, revision)

    @classmethod
    def gpu_use(cls, settings: Mapping[str, Any]) -> str | None:
        """Why this backend needs a GPU with the ``reader`` ``settings`` of params.yaml, or
        None when it does not (the default)."""
        return None

    @classmethod
    def kv_rows(cls, batch_size: int, n_ctx: int, prompt_tokens: int) -> tuple[int, int]:
        """``(sequences, tokens)`` the KV cache holds at once: one prompt of ``prompt_tokens``
        (input and answer) by default."""
        return 1, prompt_tokens


def provenance(reader: Reader, **extra: Any) -> dict[str, Any]:
    """The provenance dict every generation of ``reader`` carries."""
    out: dict[str, Any] = {
        "backend": reader.name,
        "model_id": reader.model_id,
        "revision": reader.revision,
        "decoding": reader.decoding(),
    }
    out.update(extra)
    return out


class ReaderUnavailableError(RuntimeError):
    """A backend cannot be built here (missing package, no GPU, ...)."""
