"""The deletion experiment in the viewer: per probe, every condition's removed turns and its
answer side by side with the full-context answer (paper §6.3; the deletion stages' rows)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from compressbench.errors import InputError
from compressbench.tpbench.deletions import FULL
from compressbench.tpbench.prompts import question

Row = Mapping[str, Any]


def deletion_cases(
    rows: Sequence[Row], turns_of: Mapping[str, Sequence[Sequence[str]]], file: Path
) -> list[dict[str, Any]]:
    """One entry per probe of the experiment, its conditions in the file's order (the full
    context first). ``turns_of`` maps a probe id to its dialogue's turns (from the probes)."""
    out: dict[str, dict[str, Any]] = {}
    for n, row in enumerate(rows, start=1):
        record = f"row {n}"
        for name in ("probe_id", "condition", "scores"):
            if name not in row:
                raise InputError(
                    "missing required field", file=str(file), record=record, field=name
                )
        pid = str(row["probe_id"])
        turns = turns_of.get(pid)
        if turns is None:
            raise InputError(
                "no probe with this id in the probes files",
                file=str(file),
                record=record,
                field="probe_id",
            )
        removed = [int(i) for i in row.get("removed_turn_ids") or ()]
        entry = out.setdefault(
            pid,
            {
                "probe_id": pid,
                "dataset": row.get("dataset"),
                "dialogue_id": row.get("dialogue_id"),
                "question": question(
                    str(row.get("probe_type") or "P2"), str(row.get("slot_human") or "")
                ),
                "gold": row.get("gold"),
                "conditions": [],
            },
        )
        entry["conditions"].append(
            {
                "condition": row["condition"],
                "full": row["condition"] == FULL,
                "removed": [[i, *turns[i]] for i in removed if 0 <= i < len(turns)],
                "prediction": row.get("prediction"),
                "output": row.get("output"),
                "strict": row["scores"].get("strict"),
            }
        )
    return list(out.values())
