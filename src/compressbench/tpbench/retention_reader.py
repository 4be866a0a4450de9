"""The reader as the retention diagnostic hands it to methods, loaded on first use.

Methods that act inside the reader (KV presses) measure their retained text on the reader's
model, with the prompt exactly as the reader feeds it (its chat template, left truncation at
``max_input_tokens``). Text methods never touch the reader, so it is only loaded when one
of the measured methods needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compressbench.compress.kv.shared import SharedPrefill
from compressbench.readers.base import ChatRequest
from compressbench.readers.chat import encode, render_chat


class LazyReader:
    """A :class:`~compressbench.compress.method.ReaderHook` over ``make_reader()`` (an
    ``HFReader``), built on first access."""

    def __init__(self, make_reader: Callable[[], Any], *, share_prefix: bool = False) -> None:
        self._make = make_reader
        self._reader: Any = None
        # kept positions of every registered press and ratio: one forward pass per prompt and
        # prefilled sequence (share_prefix: per prompt, see compress.kv.shared)
        self.shared_prefill = SharedPrefill(share_prefix=share_prefix)

    @property
    def reader(self) -> Any:
        if self._reader is None:
            self._reader = self._make()
        return self._reader

    @property
    def model(self) -> Any:
        return self.reader.model

    @property
    def tokenizer(self) -> Any:
        return self.reader.tokenizer

    @property
    def max_input_tokens(self) -> int:
        return int(self.reader.max_input_tokens)

    def prompt(self, request: ChatRequest) -> tuple[str, list[int]]:
        text = render_chat(self.tokenizer, request.system, request.user)
        return text, encode(self.tokenizer, text, self.max_input_tokens)
