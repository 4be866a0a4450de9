"""Per-method contexts and reader prompts of a probe (spec §3.8-§3.11).

For a probe and a method (a selector name): ``k`` from the selector's budget rule at the probe's
ratio (§3.10), the kept turns from the selector, the context rendered in the selector's
published style (``markers`` for positional selectors, ``plain`` for content-aware ones) or in a
style forced for every method, then the prompt, its template hash and the task id (§6).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from compressbench.compress.budgets import budget_k
from compressbench.compress.render import render
from compressbench.compress.selectors import get_selector
from compressbench.compress.selectors.base import TurnSelector
from compressbench.corpora.model import Turn
from compressbench.tpbench.probes import ProbeRecord
from compressbench.tpbench.prompts import build_prompt, task_id

PUBLISHED = "published"
RENDER_CHOICES: tuple[str, ...] = (PUBLISHED, "markers", "plain")


@dataclass(frozen=True)
class ContextRecord:
    """One probe x method context and its prompt (the contexts stage record)."""

    probe_id: str
    probe_type: str
    method: str
    ratio: float
    k_turns: int
    kept_turn_ids: tuple[int, ...]
    render: str
    compressed_text_used: str
    prompt_system: str
    prompt_user: str
    template_sha16: str
    task_id: str

    @property
    def compressed_text_chars(self) -> int:
        return len(self.compressed_text_used)

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["kept_turn_ids"] = list(self.kept_turn_ids)
        row["compressed_text_chars"] = self.compressed_text_chars
        return row


def render_style(selector: TurnSelector, render_mode: str = PUBLISHED) -> str:
    """The rendering a method gets: its published one, or the one forced for all."""
    if render_mode not in RENDER_CHOICES:
        raise ValueError(f"unknown render mode {render_mode!r}; known: {', '.join(RENDER_CHOICES)}")
    return selector.published_render if render_mode == PUBLISHED else render_mode


def build_context(
    *,
    probe_id: str,
    probe_type: str,
    turns: Sequence[Turn],
    ratio: float,
    method: str,
    slot_human: str = "",
    selector: TurnSelector | None = None,
    render_mode: str = PUBLISHED,
) -> ContextRecord:
    """Select, render and prompt one probe with one method (``selector`` overrides the lookup
    of ``method`` in the selector registry)."""
    sel = selector if selector is not None else get_selector(method)
    k = budget_k(len(turns), ratio, sel.budget_rule)
    keep = tuple(sel.select(turns, k, probe_id))
    style = render_style(sel, render_mode)
    text = render(turns, keep, style)
    prompt = build_prompt(probe_type, text, slot_human)
    return ContextRecord(
        probe_id=probe_id,
        probe_type=probe_type,
        method=method,
        ratio=ratio,
        k_turns=k,
        kept_turn_ids=tuple(turns[p].index for p in keep),
        render=style,
        compressed_text_used=text,
        prompt_system=prompt.system,
        prompt_user=prompt.user,
        template_sha16=prompt.template_sha16,
        task_id=task_id(
            probe_id, method, probe_type, ratio, prompt.template_sha16, prompt.system, prompt.user
        ),
    )


def probe_context(
    probe: ProbeRecord,
    method: str,
    *,
    render_mode: str = PUBLISHED,
    selector: TurnSelector | None = None,
) -> ContextRecord:
    """:func:`build_context` for a probe record."""
    return build_context(
        probe_id=probe.probe_id,
        probe_type=probe.probe_type,
        turns=probe.dialogue_turns(),
        ratio=probe.ratio,
        method=method,
        slot_human=probe.slot_human,
        selector=selector,
        render_mode=render_mode,
    )
