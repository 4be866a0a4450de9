"""The contract every compression method meets, whatever it compresses.

A method is built by name from :mod:`compressbench.compress.registry` with its ``method_params``
and is then used through four members only; no caller asks which family it belongs to.

What it needs - a :class:`Source`: the units of text (dialogue turns today, sentences for
KEEP-Bench: anything with ``index`` and ``text``), a stable key seeding random methods, the
render mode, optionally the reader's tokenizer and a query; for methods that act inside the
reader, a :class:`ReaderHook` (the reader's loaded model and its prompt rendering).

What it returns - :meth:`Method.compress` gives a :class:`Compression`: the context text the
reader gets (the kept units rendered, or for a KV press the full text), the kept unit ids,
the budget in the method's unit, and JSON-ready records of what it did; a press method also
returns the press the reader must run under (``press``: its record) and gives the live hook
through :meth:`Method.reader_hook`.

How it reports retention - :meth:`Method.retained_text`: the text the retention diagnostic
searches. A text method returns its kept units' own texts, one per line; a press prefills the
rendered prompt under the press on the reader's model and returns the text of the cache
positions it kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from compressbench.compress.costs import ContextCost
from compressbench.compress.render import PUBLISHED
from compressbench.readers.base import ChatRequest

TURN_BUDGET_UNIT = "dialogue_turns"
# The method that keeps every unit, each benchmark's uncompressed reference (registered by
# compress/selectors/positional.py); its name is written here once and imported everywhere.
FULL_CONTEXT = "full_context"


@dataclass(frozen=True)
class Source:
    """What a method compresses: ``units`` in order, ``key`` (a stable id of the item, e.g. the
    probe id: it seeds random methods), ``render`` (``published`` = the method's own style, or
    a style forced for all), the reader's ``tokenizer`` and a ``query`` for methods that use
    them."""

    units: Sequence[Any]
    key: str
    render: str = PUBLISHED
    tokenizer: Any = None
    query: str | None = None


@dataclass(frozen=True)
class Compression:
    """The result of one compression at retained fraction ``ratio``.

    ``text`` is what the reader is given as context; ``kept_ids`` the ``index`` of every kept
    unit; ``kept_text`` the kept units' own texts one per line; ``budget`` the number of units
    the budget rule allows (for a press: the nominal turn budget, every turn is kept);
    ``record`` says what the method did (JSON-ready); ``press`` is the record of the press
    the reader runs under, None for a method that only edits the text.
    """

    text: str
    kept_ids: tuple[int, ...]
    kept_text: str
    n_units: int
    budget: int
    budget_unit: str
    render: str
    ratio: float
    record: dict[str, Any] = field(default_factory=dict)
    press: dict[str, Any] | None = None


class ReaderHook(Protocol):
    """The reader as a method sees it: its loaded model and tokenizer, and the token ids of a
    prompt exactly as the reader would feed them (chat template, truncation)."""

    @property
    def model(self) -> Any: ...

    @property
    def tokenizer(self) -> Any: ...

    @property
    def max_input_tokens(self) -> int: ...

    #: Kept positions of many presses from one forward pass per prompt
    #: (:class:`~compressbench.compress.kv.shared.SharedPrefill`); None: each press runs alone.
    shared_prefill: Any

    def prompt(self, request: ChatRequest) -> tuple[str, list[int]]:
        """``(templated text, token ids)`` of ``request``'s system and user turns."""
        ...


# Turns a context text into the request the reader would get for it (context and question
# apart, so a press finds where the question starts without searching the prompt).
PromptFn = Callable[[str], ChatRequest]


class Method(Protocol):
    """A compression method (see the module docstring)."""

    @property
    def name(self) -> str: ...

    @property
    def family(self) -> str:
        """``turn_selector``, ``kv_press``... (for records and docs, never for branching)."""
        ...

    @property
    def budget_unit(self) -> str: ...

    @property
    def needs_reader(self) -> bool:
        """True if ``retained_text`` / ``reader_hook`` use the reader's model."""
        ...

    def compress(self, source: Source, ratio: float) -> Compression:
        """Compress ``source`` to the retained fraction ``ratio``."""
        ...

    def retained_text(
        self, source: Source, ratio: float, prompt: PromptFn, reader: ReaderHook | None
    ) -> str:
        """The text the retention diagnostic searches at ``ratio``."""
        ...

    def reader_hook(self, ratio: float, *, max_input_tokens: int) -> Any:
        """The hook the reader generates through (``records`` per prompt), or None."""
        ...

    def cost(self, compression: Compression, full_text: str, tokenizer: Any) -> ContextCost:
        """The cost record of ``compression`` against the uncompressed ``full_text``."""
        ...


class RetentionUnavailable(RuntimeError):
    """The method cannot say which text it kept (e.g. a press that masks instead of prunes)."""
