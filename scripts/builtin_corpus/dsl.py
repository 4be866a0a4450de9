"""Tiny authoring DSL for the built-in corpus.

A dialogue is written as alternating USER (`u`) and SYSTEM (`s`) turns. A USER turn lists only
the slot values it *changes*; `build.py` derives the full SGD frames (actions, spans, cumulative
dialogue state) from that.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

SlotValue = str | list[str]


@dataclass
class U:
    """A USER turn: its text, an optional service/intent switch, requested slots, slot updates."""

    text: str
    svc: str | None = None
    intent: str | None = None
    req: list[str] = field(default_factory=list)
    slots: dict[str, SlotValue] = field(default_factory=dict)


@dataclass
class S:
    """A SYSTEM turn: its text and the slots the system asks for."""

    text: str
    req: list[str] = field(default_factory=list)


def u(
    text: str,
    _svc: str | None = None,
    _intent: str | None = None,
    _req: Iterable[str] | None = None,
    **slots: SlotValue,
) -> U:
    """USER turn; keyword arguments are slot updates (`city="Oakland"`).

    `_svc` switches the active service, `_intent` its active intent, `_req` lists requested slots.
    """
    return U(text, _svc, _intent, list(_req or []), slots)


def s(text: str, req: Iterable[str] | None = None) -> S:
    """SYSTEM turn; `req` lists the slots the system requests."""
    return S(text, list(req or []))


@dataclass
class D:
    """One dialogue: starting service and intent, then the turns (USER first, alternating)."""

    service: str
    intent: str
    turns: list[U | S]
    absent: tuple[str, ...] = ()  # slots whose (new) value is deliberately never said literally
    note: str = ""  # what the dialogue exercises; for authors only, not written to the JSON
