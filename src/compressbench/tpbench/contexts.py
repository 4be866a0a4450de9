"""Per-method contexts and reader prompts of a probe (spec §3.8-§3.11).

For a probe and a method (any registered name, see :mod:`compressbench.compress.registry`):
the method compresses the probe's dialogue turns at the probe's ratio (a selector: ``k`` from
its budget rule, §3.10, the kept turns rendered in its published style or in a style forced
for every method; a press: the whole dialogue, the press applied by the reader), then the
prompt, its template hash and the task id (§6).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from compressbench.compress.method import Compression, Method, Source
from compressbench.compress.registry import get_method
from compressbench.compress.render import PUBLISHED, RENDER_CHOICES
from compressbench.compress.selector_method import SelectorMethod
from compressbench.compress.selectors.base import TurnSelector
from compressbench.corpora.model import Turn
from compressbench.tpbench.probes import ProbeRecord
from compressbench.tpbench.prompts import build_prompt, question, task_id

__all__ = ["PUBLISHED", "RENDER_CHOICES", "ContextRecord", "build_context", "probe_context"]


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


def context_record(
    probe_id: str, probe_type: str, method: str, comp: Compression, slot_human: str = ""
) -> ContextRecord:
    """The record of one compression: its context, the prompt around it, the task id."""
    prompt = build_prompt(probe_type, comp.text, slot_human)
    return ContextRecord(
        probe_id=probe_id,
        probe_type=probe_type,
        method=method,
        ratio=comp.ratio,
        k_turns=comp.budget,
        kept_turn_ids=comp.kept_ids,
        render=comp.render,
        compressed_text_used=comp.text,
        prompt_system=prompt.system,
        prompt_user=prompt.user,
        template_sha16=prompt.template_sha16,
        task_id=task_id(
            probe_id,
            method,
            probe_type,
            comp.ratio,
            prompt.template_sha16,
            prompt.system,
            prompt.user,
        ),
    )


def _as_method(method: str, selector: TurnSelector | None) -> Method:
    return get_method(method) if selector is None else SelectorMethod(method, selector, {})


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
    compressor: Method | None = None,
) -> ContextRecord:
    """Compress, render and prompt one probe with one method.

    ``method`` labels the record; the compression is done by ``compressor``, else by
    ``selector`` (a bare turn selector), else by the registered method named ``method``.
    """
    m = compressor or _as_method(method, selector)
    comp = m.compress(Source(turns, key=probe_id, render=render_mode), ratio)
    return context_record(probe_id, probe_type, method, comp, slot_human)


def probe_compression(
    probe: ProbeRecord,
    method: str,
    compressor: Method,
    *,
    render_mode: str = PUBLISHED,
    tokenizer: Any = None,
) -> tuple[ContextRecord, Compression]:
    """One probe compressed by ``compressor``: its record and the :class:`Compression`
    (``tokenizer``: the reader's, for methods whose budget is in reader tokens; the probe's
    question is the query a query-aware method reads, every other method ignores it)."""
    source = Source(
        probe.dialogue_turns(),
        key=probe.probe_id,
        render=render_mode,
        tokenizer=tokenizer,
        query=question(probe.probe_type, probe.slot_human),
    )
    comp = compressor.compress(source, probe.ratio)
    return context_record(probe.probe_id, probe.probe_type, method, comp, probe.slot_human), comp


def probe_context(
    probe: ProbeRecord,
    method: str,
    *,
    render_mode: str = PUBLISHED,
    selector: TurnSelector | None = None,
) -> ContextRecord:
    """:func:`build_context` for a probe record."""
    m = _as_method(method, selector)
    return probe_compression(probe, method, m, render_mode=render_mode)[0]
