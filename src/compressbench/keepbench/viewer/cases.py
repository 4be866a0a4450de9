"""Join KEEP-Bench's cases, compressed outputs and verdicts into the viewer's cases.

One case per KEEP case; each (compressor, budget scale) output carries the compressed text and,
per evidence proposition, the judge's verdict (``preserved``: kept, lost, or undecided when the
judge failed), its judgement, the shortcut that decided it without a call, any error and the
judge's raw response (its reason). A row naming an unknown case or proposition is bad input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.errors import InputError
from compressbench.keepbench.cases import KeepCase

Row = Mapping[str, Any]


@dataclass(frozen=True)
class OutputRows:
    """One (compressor, budget scale): its compressed rows and verdict rows, with their files."""

    compressor: str
    scale: float
    compressed: Sequence[Row]
    verdicts: Sequence[Row]
    compressed_file: Path
    verdicts_file: Path

    @property
    def label(self) -> str:
        return f"{self.compressor} x{self.scale!r}"


def keep_case(case: KeepCase) -> dict[str, Any]:
    """What the page shows of a case before any compressor."""
    return {
        "case_id": case.case_id,
        "subset": case.subset,
        "setting": case.setting,
        "query": case.query,
        "paragraphs": list(case.paragraphs),
        "propositions": [
            {"id": p.id, "text": p.text, "role": p.role, "group": p.group}
            for p in case.propositions
        ],
        "outputs": {},
    }


def _verdict(row: Row) -> dict[str, Any]:
    return {
        "preserved": row.get("preserved"),
        "judgement": row.get("judgement"),
        "shortcut": row.get("shortcut"),
        "error": row.get("error"),
        "reason": row.get("raw"),
    }


def _need(row: Row, name: str, file: Path, n: int) -> Any:
    if name not in row:
        raise InputError("missing required field", file=str(file), record=f"row {n}", field=name)
    return row[name]


def build_keep_cases(
    cases: Sequence[KeepCase], outputs: Sequence[OutputRows]
) -> list[dict[str, Any]]:
    """The viewer's KEEP-Bench cases, in the cases file's order."""
    by_id = {c.case_id: (c, keep_case(c)) for c in cases}
    for out in outputs:
        entries: dict[str, dict[str, Any]] = {}
        for n, row in enumerate(out.compressed, start=1):
            case_id = str(_need(row, "case_id", out.compressed_file, n))
            if case_id not in by_id:
                raise InputError(
                    "no such case",
                    file=str(out.compressed_file),
                    record=f"row {n}",
                    field="case_id",
                )
            entry = {
                "compressor": out.compressor,
                "scale": out.scale,
                "budget": row.get("budget"),
                "compressed": _need(row, "compressed", out.compressed_file, n),
                "source_tokens": row.get("source_tokens"),
                "compressed_tokens": row.get("compressed_tokens"),
                "verdicts": {},
            }
            entries[case_id] = entry
            by_id[case_id][1]["outputs"][out.label] = entry
        for n, row in enumerate(out.verdicts, start=1):
            case_id = str(_need(row, "case_id", out.verdicts_file, n))
            prop = str(_need(row, "proposition_id", out.verdicts_file, n))
            if case_id not in entries:
                raise InputError(
                    f"no compressed output for this case in {out.compressed_file}",
                    file=str(out.verdicts_file), record=f"row {n}", field="case_id",
                )  # fmt: skip
            if prop not in {p.id for p in by_id[case_id][0].propositions}:
                raise InputError(
                    "no such proposition in the case",
                    file=str(out.verdicts_file),
                    record=f"row {n}",
                    field="proposition_id",
                )
            entries[case_id]["verdicts"][prop] = _verdict(row)
    return [entry for _, entry in by_id.values()]
