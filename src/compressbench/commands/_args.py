"""Small argument parsers shared by the TPBench subcommands."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def csv_of(kind: Callable[[str], T]) -> Callable[[str], list[T]]:
    """argparse type: a comma-separated list of ``kind`` values (``"42,43"`` -> ``[42, 43]``)."""

    def parse(text: str) -> list[T]:
        items = [s.strip() for s in text.split(",") if s.strip()]
        if not items:
            raise argparse.ArgumentTypeError("expected a comma-separated list")
        try:
            return [kind(s) for s in items]
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def ratio(text: str) -> float:
    """A retained fraction in (0, 1]."""
    value = float(text)
    if not 0 < value <= 1:
        raise ValueError(f"ratio {text} is not in (0, 1]")
    return value


def probe_type(text: str) -> str:
    """``p1``/``P1`` ... -> ``P1``."""
    value = text.strip().upper()
    if value not in ("P1", "P2", "P3"):
        raise ValueError(f"unknown probe {text!r} (p1, p2, p3)")
    return value
