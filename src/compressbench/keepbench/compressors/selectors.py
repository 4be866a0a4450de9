"""TPBench turn selectors on KEEP cases: the same selector code, fed sentences and K.

A turn selector only needs units with ``index`` and ``text`` and a budget ``k``; here the
units are the case's sentences and ``k`` is the case's sentence budget K at the budget scale
(instead of the TPBench rule ``k = round/floor(n * r)``). The kept sentences are joined in
context order, like every extractive KEEP compressor. Selectors that read dialogue roles
(``first_user_recent``: the first USER turn) mean nothing on sentences and are left out
(``reads_speakers``). ``full_context`` keeps every sentence (the uncompressed baseline).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.compress.method import Source
from compressbench.keepbench.compressors.base import ExtractiveCompressor


def reads_speakers(name: str) -> bool:
    """Whether selector ``name`` reads dialogue roles (``Turn.speaker``): meaningless on
    sentences."""
    from compressbench.compress.selectors import SELECTORS

    return bool(getattr(SELECTORS[name], "reads_speakers", False))


def sentence_selector_names() -> list[str]:
    """Every registered turn selector that works on sentences."""
    from compressbench.compress.selectors import SELECTORS

    return sorted(n for n in SELECTORS if not reads_speakers(n))


def selector_parameters(name: str) -> tuple[str, ...]:
    from compressbench.compress.selectors import SELECTORS

    return SELECTORS.parameters(name)


@dataclass
class SentenceSelectorMethod(ExtractiveCompressor):
    """A turn selector keeping K sentences of a KEEP case."""

    name: str
    selector: Any
    params: dict[str, Any]

    family = "turn_selector_on_sentences"

    @classmethod
    def build(cls, name: str, params: dict[str, Any]) -> SentenceSelectorMethod:
        from compressbench.compress.selectors import get_selector

        if reads_speakers(name):
            raise KeyError(f"selector {name!r} reads dialogue roles; it cannot run on sentences")
        return cls(name, get_selector(name, **params), dict(params))

    def describe(self) -> dict[str, Any]:
        return dict(self.params)

    def pick(self, source: Source, k: int) -> list[int]:
        units: Sequence[Any] = source.units
        return list(self.selector.select(units, k, source.key))
