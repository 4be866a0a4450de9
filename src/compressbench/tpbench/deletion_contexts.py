"""A full-context P2 probe's prompt under every deletion condition (spec §4).

The removed turn blocks are dropped and the remaining ones re-rendered with their original
``[Tn]`` labels (marker rendering, §3.9); the question block is the probe's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compressbench.compress.render import render_markers
from compressbench.tpbench.deletions import ControlPlan, probe_plan
from compressbench.tpbench.probes import ProbeRecord
from compressbench.tpbench.prompts import build_prompt, task_id


@dataclass(frozen=True)
class DeletionContext:
    """One probe under one condition: what was removed, the rendered context and prompt."""

    condition: str
    removed_turn_ids: tuple[int, ...]
    kept_turn_ids: tuple[int, ...]
    compressed_text_used: str
    prompt_system: str
    prompt_user: str
    template_sha16: str
    task_id: str
    meta: dict[str, Any]

    def to_row(self) -> dict[str, Any]:
        return {
            "condition": self.condition,
            "removed_turn_ids": list(self.removed_turn_ids),
            "kept_turn_ids": list(self.kept_turn_ids),
            "compressed_text_used": self.compressed_text_used,
            "prompt_system": self.prompt_system,
            "prompt_user": self.prompt_user,
            "template_sha16": self.template_sha16,
            "task_id": self.task_id,
            "meta": self.meta,
        }


def deletion_contexts(
    probe: ProbeRecord, *, file: str = "", record: str = ""
) -> tuple[ControlPlan, list[DeletionContext]]:
    """The controls of a full-context P2 probe and its prompt under every condition it runs
    under (the question block is the probe's; the context keeps the original ``[Tn]`` labels).
    ``meta`` of each context = the probe's meta + the picks + ``removed_turn_ids``."""
    turns = probe.dialogue_turns()
    plan = probe_plan(
        turns,
        dict(probe.meta),
        probe.old_value,
        probe.new_value,
        probe.dataset,
        file=file,
        record=record or probe.probe_id,
    )
    base = {**probe.meta, **plan.meta()}
    out = []
    for condition, removed in plan.conditions():
        kept = tuple(t.index for t in turns if t.index not in removed)
        text = render_markers(turns, kept)
        prompt = build_prompt(probe.probe_type, text, probe.slot_human)
        tid = task_id(
            probe.probe_id,
            condition,
            probe.probe_type,
            probe.ratio,
            prompt.template_sha16,
            prompt.system,
            prompt.user,
        )
        out.append(
            DeletionContext(
                condition=condition,
                removed_turn_ids=tuple(sorted(removed)),
                kept_turn_ids=kept,
                compressed_text_used=text,
                prompt_system=prompt.system,
                prompt_user=prompt.user,
                template_sha16=prompt.template_sha16,
                task_id=tid,
                meta={**base, "condition": condition, "removed_turn_ids": sorted(removed)},
            )
        )
    return plan, out
