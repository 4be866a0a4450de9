"""Join the stage files of a (dataset, ratio) into the viewer's cases: one case per probe
(probe type, seed, probe id), each method's kept turns, answer, scores and answer kind.

Everything the page shows of an answer is copied from its scores row (prediction, raw output,
strict / loose, abstain, format error, reader error) and its contexts row (kept turns), so the
page's data can be compared with the scores files row by row. A row that names a probe the
probes file lacks, or a probe twice, is bad input (file, record, field).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.errors import InputError
from compressbench.tpbench.probe_types import get_probe_type
from compressbench.tpbench.probes import ProbeRecord
from compressbench.tpbench.prompts import question
from compressbench.tpbench.report.answer_kinds import answer_kind
from compressbench.tpbench.viewer.marks import press_heat, turn_marks

Row = Mapping[str, Any]


@dataclass(frozen=True)
class CellRows:
    """One method's rows of a (dataset, ratio): contexts and scores, with their files."""

    method: str
    contexts: Sequence[Row]
    scores: Sequence[Row]
    contexts_file: Path
    scores_file: Path


def case_key(dataset: str, ratio: float, probe_type: str, seed: int, probe_id: str) -> str:
    """The case's id in the page (and in ``#case=`` links)."""
    return f"{dataset}|{ratio!r}|{probe_type}|{seed}|{probe_id}"


def _row_key(row: Row, file: Path, record: str) -> tuple[str, int, str]:
    try:
        return str(row["probe_type"]), int(row["seed"]), str(row["probe_id"])
    except (KeyError, TypeError, ValueError) as exc:
        name = exc.args[0] if isinstance(exc, KeyError) else "seed"
        raise InputError(
            "missing or malformed", file=str(file), record=record, field=name
        ) from None


def probe_case(probe: ProbeRecord) -> dict[str, Any]:
    """What the page shows of a probe before any method: dialogue, marks, question, gold."""
    return {
        "key": case_key(probe.dataset, probe.ratio, probe.probe_type, probe.seed, probe.probe_id),
        "probe_id": probe.probe_id,
        "dataset": probe.dataset,
        "dialogue_id": probe.dialogue_id,
        "probe_type": probe.probe_type,
        "ratio": probe.ratio,
        "r": repr(probe.ratio),  # as the filter and the report's links spell it ("1.0")
        "seed": probe.seed,
        "question": question(probe.probe_type, probe.slot_human),
        "gold": probe.gold,
        "slot": probe.slot_human,
        "old_value": probe.old_value,
        "new_value": probe.new_value,
        "turns": [list(t) for t in probe.turns],
        "marks": turn_marks(
            probe.turns, probe.meta, probe.old_value, probe.new_value, probe.dataset
        ),
        "answers": {},
    }


def method_answer(probe: ProbeRecord, context: Row, scored: Row) -> dict[str, Any]:
    """One method's answer to a probe as the page shows it."""
    scores = scored["scores"]
    rule = get_probe_type(probe.probe_type).kind_rule  # its answer kinds (None: not classified)
    heat = press_heat(
        str(context.get("compressed_text_used") or ""), probe.turns, scored.get("kv_record")
    )
    return {
        "kept": list(context.get("kept_turn_ids") or []),
        "k": context.get("k_turns"),
        "press": bool(context.get("kv")),
        "prediction": scored.get("prediction"),
        "output": scored.get("output"),
        "strict": scores.get("strict"),
        "loose": scores.get("loose"),
        "abstain": bool(scored.get("abstain")),
        "format_error": bool(scored.get("format_error")),
        "error": scored.get("error"),
        "kind": None if rule is None else answer_kind(scored, rule),
        "heat": None if heat is None else heat.to_dict(),
    }


def _index(rows: Iterable[Row], file: Path) -> dict[tuple[str, int, str], Row]:
    out: dict[tuple[str, int, str], Row] = {}
    for n, row in enumerate(rows, start=1):
        key = _row_key(row, file, f"row {n}")
        if key in out:
            raise InputError(
                "probe appears twice", file=str(file), record=f"row {n}", field="probe_id"
            )
        out[key] = row
    return out


def build_cases(
    probes: Sequence[ProbeRecord], cells: Sequence[CellRows], probes_file: Path
) -> list[dict[str, Any]]:
    """The cases of one (dataset, ratio), in the probes file's order."""
    by_key: dict[tuple[str, int, str], tuple[ProbeRecord, dict[str, Any]]] = {}
    for n, probe in enumerate(probes, start=1):
        key = (probe.probe_type, probe.seed, probe.probe_id)
        if key in by_key:
            raise InputError(
                "probe appears twice", file=str(probes_file), record=f"row {n}", field="probe_id"
            )
        by_key[key] = (probe, probe_case(probe))
    for cell in cells:
        contexts = _index(cell.contexts, cell.contexts_file)
        for n, row in enumerate(cell.scores, start=1):
            record = f"row {n}"
            key = _row_key(row, cell.scores_file, record)
            if key not in by_key:
                raise InputError(
                    f"no such probe in {probes_file}",
                    file=str(cell.scores_file),
                    record=record,
                    field="probe_id",
                )
            if key not in contexts:
                raise InputError(
                    f"no context row in {cell.contexts_file}",
                    file=str(cell.scores_file),
                    record=record,
                    field="probe_id",
                )
            if not isinstance(row.get("scores"), Mapping):
                raise InputError(
                    "missing scores", file=str(cell.scores_file), record=record, field="scores"
                )
            probe, case = by_key[key]
            case["answers"][cell.method] = method_answer(probe, contexts[key], row)
    return [case for _, case in by_key.values()]
