"""Slot type groups of the paper's Table 7: what a revised slot holds (time, date, place/name,
other), from its name alone."""

from __future__ import annotations

import re

# First match wins; else "other".
SLOT_TYPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("time", re.compile(r"time|leaveat|arriveby|hour")),
    ("date", re.compile(r"date|day")),
    (
        "place/name",
        re.compile(
            r"city|location|area|name|destination|departure|address|place|airport|origin"
            r"|venue|theater|restaurant|hotel|attraction|from|to$"
        ),
    ),
)


def slot_type(slot: str) -> str:
    """``time``, ``date``, ``place/name`` or ``other`` for a slot name."""
    s = slot.lower()
    return next((group for group, pattern in SLOT_TYPES if pattern.search(s)), "other")
