"""Tiny authoring DSL: write turns and slot updates; the builder computes full SGD frames."""
from dataclasses import dataclass, field


@dataclass
class U:
    text: str
    svc: str | None = None
    intent: str | None = None
    req: list = field(default_factory=list)
    slots: dict = field(default_factory=dict)


@dataclass
class S:
    text: str
    req: list = field(default_factory=list)


def u(text, _svc=None, _intent=None, _req=None, **slots):
    return U(text, _svc, _intent, list(_req or []), slots)


def s(text, req=None):
    return S(text, list(req or []))


@dataclass
class D:
    service: str
    intent: str
    turns: list
    absent: tuple = ()  # slots whose (new) value is deliberately never said literally
    note: str = ""


DIALOGUES_BY_FILE: dict[int, list[D]] = {}


def file(n, *dialogues):
    DIALOGUES_BY_FILE[n] = list(dialogues)
