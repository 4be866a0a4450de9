"""Offline, deterministic sentence splitting for KEEP-Bench budgets and extractive compressors.

Sentences are what the budget K counts and what RECOMP-extractive / EXIT rank. The reference
compressors split with spaCy's ``en_core_web_sm``, which does not install from PyPI; this module
uses ``pysbd`` (rule-based Pragmatic Segmenter port, pure Python, no model files), which keeps
abbreviations (``Dr.``, ``U.S.``, ``e.g.``), decimals (``3.5``) and quoted sentences whole.
Paragraph breaks (blank lines) always end a sentence, and each sentence remembers its
paragraph, so EXIT can score a sentence against its own document.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import pysbd

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Sentence:
    """One sentence of a context: its paragraph, its index in the whole context, its text."""

    paragraph: int
    index: int
    text: str


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` in order, whitespace collapsed, empty pieces dropped."""
    out: list[str] = []
    for block in _PARAGRAPH_BREAK.split(text):
        block = _SPACES.sub(" ", block).strip()
        if not block:
            continue
        for piece in _segmenter().segment(block):
            piece = piece.strip()
            if piece:
                out.append(piece)
    return out


def split_paragraphs(paragraphs: Sequence[str]) -> list[Sentence]:
    """Sentences of every paragraph, numbered through the whole context."""
    out: list[Sentence] = []
    for p, paragraph in enumerate(paragraphs):
        for text in split_sentences(paragraph):
            out.append(Sentence(paragraph=p, index=len(out), text=text))
    return out


def count_sentences(text: str) -> int:
    """Number of sentences in ``text`` (0 for empty or blank text)."""
    return len(split_sentences(text))


def truncate_to_budget(text: str, k: int) -> str:
    """The first ``k`` sentences of ``text`` joined by single spaces (for over-long outputs)."""
    if k < 0:
        raise ValueError(f"sentence budget must be >= 0, got {k}")
    return " ".join(split_sentences(text)[:k])
