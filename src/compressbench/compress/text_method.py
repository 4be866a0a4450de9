"""The Method members every text method shares (one that only edits the context text).

A text method (:class:`~.selector_method.SelectorMethod`, :class:`~.token_budget.
TokenBudgetSelector`, the turning-point span selector) gives ``name``, ``family``,
``budget_unit`` and ``compress``; :class:`TextMethod` adds the rest of the contract
(:mod:`compressbench.compress.method`): no reader hook, retention = the compression's
``kept_text`` (no reader involved), the text cost record, and :meth:`TextMethod._compression`,
which builds the :class:`Compression` with the record's common head (``method``, ``family``,
``budget_unit``) and tail (``render``, ``params``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from compressbench.compress.costs import ContextCost, context_cost
from compressbench.compress.method import Compression, PromptFn, ReaderHook, Source


class TextMethod:
    """Mixin for text methods: subclasses set ``name``, ``family``, ``budget_unit`` and write
    ``compress`` (usually ending in :meth:`_compression`)."""

    if TYPE_CHECKING:  # read-only for the type checker: a field or a property may give it

        @property
        def name(self) -> str: ...

    family: str
    budget_unit: str
    needs_reader = False

    def compress(self, source: Source, ratio: float) -> Compression:
        raise NotImplementedError

    def retained_text(
        self, source: Source, ratio: float, prompt: PromptFn, reader: ReaderHook | None
    ) -> str:
        return self.compress(source, ratio).kept_text

    def reader_hook(self, ratio: float, *, max_input_tokens: int) -> Any:
        return None

    def cost(self, compression: Compression, full_text: str, tokenizer: Any) -> ContextCost:
        return context_cost(
            full_text, compression.text, compression.n_units, compression.kept_ids, tokenizer
        )

    def _compression(
        self,
        units: Sequence[Any],
        ratio: float,
        *,
        text: str,
        kept_ids: tuple[int, ...],
        kept_text: str,
        render: str,
        params: dict[str, Any],
        **details: Any,
    ) -> Compression:
        """The compression of ``units`` at ``ratio``. Its record is ``method``, ``family``,
        ``budget_unit``, then ``details`` in the order given (``budget``, the number of units
        or tokens allowed, among them), then ``render`` and ``params``."""
        return Compression(
            text=text,
            kept_ids=kept_ids,
            kept_text=kept_text,
            n_units=len(units),
            budget=details["budget"],
            budget_unit=self.budget_unit,
            render=render,
            ratio=ratio,
            record={
                "method": self.name,
                "family": self.family,
                "budget_unit": self.budget_unit,
                **details,
                "render": render,
                "params": params,
            },
        )
