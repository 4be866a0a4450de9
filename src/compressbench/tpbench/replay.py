"""Rebuild TPBench's released probe rows with this project's selectors, budgets, rendering and
prompts, and say for each row whether the texts match byte for byte.

Every released row is rebuilt from the ``full_context`` row of the same dialogue and probe type,
at the row's ``meta.ratio``, with the method's selector from the registry (released names map to
selector names by :data:`METHOD_RULES`). Rows that cannot be rebuilt from text alone get
``match: None`` and a reason - never silently skipped.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.compress.selectors import SELECTORS, get_selector
from compressbench.compress.selectors.base import TurnSelector
from compressbench.tpbench.contexts import PUBLISHED, build_context
from compressbench.tpbench.probes import ProbeRecord
from compressbench.tpbench.released import ReleasedRow, released_probes

log = logging.getLogger(__name__)

COMPARED = ("compressed_text_used", "prompt_system", "prompt_user")


@dataclass(frozen=True)
class ReplayRecord:
    """One replayed released row (the replay output record)."""

    dialogue_id: str
    method: str
    probe_type: str  # as released
    compressed_text_used: str | None
    prompt_system: str | None
    prompt_user: str | None
    match: bool | None
    reason: str = ""
    mismatched: tuple[str, ...] = ()

    def to_row(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "dialogue_id": self.dialogue_id,
            "method": self.method,
            "probe_type": self.probe_type,
            "compressed_text_used": self.compressed_text_used,
            "prompt_system": self.prompt_system,
            "prompt_user": self.prompt_user,
            "match": self.match,
        }
        if self.reason:
            row["reason"] = self.reason
        if self.mismatched:
            row["mismatched"] = list(self.mismatched)
        return row


# --- released method name -> selector ---------------------------------------------------------


@dataclass(frozen=True)
class MethodRule:
    """How released method names with ``suffix`` map to a selector (or why they cannot)."""

    suffix: str
    selector: Callable[[str], str] | None  # released name -> selector name; None: never rebuilt
    reason: str


METHOD_RULES: tuple[MethodRule, ...] = (
    MethodRule(
        "_cache",
        lambda m: m.removesuffix("_cache"),
        "content-aware selector {selector!r} is not registered "
        "(the release holds its frozen output)",
    ),
    MethodRule(
        "_kvpress",
        None,
        "KV-cache press: compression happens inside the reader's cache, not in the context text",
    ),
)


def resolve_method(method: str) -> tuple[str | None, str]:
    """(registered selector name, "") or (None, reason) for a released method name."""
    if method in SELECTORS:
        return method, ""
    for rule in METHOD_RULES:
        if method.endswith(rule.suffix):
            if rule.selector is None:
                return None, rule.reason
            name = rule.selector(method)
            if name in SELECTORS:
                return name, ""
            return None, rule.reason.format(selector=name)
    if method.startswith("cf_"):
        return None, "deletion condition: rebuilt by the deletion-controls stage, not by a selector"
    return None, f"no selector registered for method {method!r}"


def _unbuilt(row: ReleasedRow, reason: str) -> ReplayRecord:
    return ReplayRecord(row.dialogue_id, row.method, row.probe_type, None, None, None, None, reason)


def replay_row(
    row: ReleasedRow,
    probe: ProbeRecord | None,
    render_mode: str = PUBLISHED,
    methods: Collection[str] | None = None,
    failed: dict[str, str] | None = None,
) -> ReplayRecord:
    """Rebuild one released row from its dialogue's full-context probe and compare
    (``methods``: rebuild only these released method names; ``failed``: selector name ->
    reason, filled and consulted so a selector whose model cannot load is tried once)."""
    if probe is None:
        return _unbuilt(row, "no full_context row for this dialogue and probe type")
    if methods is not None and row.method not in methods:
        return _unbuilt(row, "method not requested (--methods)")
    name, reason = resolve_method(row.method)
    if name is None:
        return _unbuilt(row, reason)
    failed = {} if failed is None else failed
    if name in failed:
        return _unbuilt(row, failed[name])
    try:
        selector: TurnSelector = get_selector(name)
        ctx = build_context(
            probe_id=row.dialogue_id,
            probe_type=row.paper_probe_type,
            turns=probe.dialogue_turns(),
            ratio=row.ratio,
            method=row.method,
            slot_human=row.get("slot_human"),
            selector=selector,
            render_mode=render_mode,
        )
    except Exception as exc:  # a content-aware selector whose model cannot be loaded here
        log.warning("%s %s: selector %r failed: %s", row.dialogue_id, row.method, name, exc)
        failed[name] = f"selector {name!r} unavailable: {type(exc).__name__}: {exc}"
        return _unbuilt(row, failed[name])
    rebuilt = {
        "compressed_text_used": ctx.compressed_text_used,
        "prompt_system": ctx.prompt_system,
        "prompt_user": ctx.prompt_user,
    }
    released = {
        "compressed_text_used": row.compressed_text_used,
        "prompt_system": row.prompt_system,
        "prompt_user": row.prompt_user,
    }
    mismatched = tuple(f for f in COMPARED if rebuilt[f] != released[f])
    return ReplayRecord(
        row.dialogue_id,
        row.method,
        row.probe_type,
        rebuilt["compressed_text_used"],
        rebuilt["prompt_system"],
        rebuilt["prompt_user"],
        match=not mismatched,
        mismatched=mismatched,
    )


def replay(
    rows: Sequence[ReleasedRow],
    render_mode: str = PUBLISHED,
    methods: Collection[str] | None = None,
) -> Iterator[ReplayRecord]:
    """Replay every released row, in input order."""
    probes = released_probes(rows)
    failed: dict[str, str] = {}
    for row in rows:
        probe = probes.get((row.dialogue_id, row.probe_type))
        yield replay_row(row, probe, render_mode, methods, failed)


def summarize(records: Iterable[ReplayRecord]) -> dict[str, Counter[str]]:
    """Per method: counts of ``match`` / ``mismatch`` / ``not rebuilt``."""
    out: dict[str, Counter[str]] = {}
    for r in records:
        outcome = "not rebuilt" if r.match is None else "match" if r.match else "mismatch"
        out.setdefault(r.method, Counter())[outcome] += 1
    return out
