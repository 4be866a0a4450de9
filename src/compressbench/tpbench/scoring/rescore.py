"""Re-score extracted answers without regenerating them (the ``rescore`` command's core).

Input rows carry ``dataset``, ``prediction`` (the extracted answer value, may be null),
optional ``abstain`` / ``error`` flags and the reference (``reference``; for P3
``reference_goal`` and ``reference_value``). Each output row is the input row plus ``scores``.
Each probe type's rescorer (:class:`~compressbench.tpbench.probe_types.spec.ProbeType`) maps a
validated row to its score dict; ``probe`` names it, case ignored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compressbench.errors import InputError
from compressbench.jsonl import open_text, write_jsonl
from compressbench.tpbench.probe_types import PROBE_TYPES, find_probe_type, get_probe_type
from compressbench.tpbench.probe_types.spec import RescoreAnswer

Row = dict[str, Any]


def _is_reference(value: object) -> bool:
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def _is_flag(value: object) -> bool:
    return value is None or isinstance(value, bool) or (type(value) is int and value in (0, 1))


def validate(row: Row, probe: str, *, file: str = "<input>", record: str = "?") -> RescoreAnswer:
    """Check one input row and return its :class:`RescoreAnswer`; InputError names the bad field."""

    def fail(field: str, message: str) -> InputError:
        return InputError(message, file=file, record=record, field=field)

    spec = get_probe_type(probe)
    for field in ("dataset", "prediction", *spec.rescore_references):
        if field not in row:
            raise fail(field, "missing field")
    if not isinstance(row["dataset"], str):
        raise fail("dataset", f"expected a string, got {type(row['dataset']).__name__}")
    for field in spec.rescore_references:
        if not _is_reference(row[field]):
            raise fail(field, f"expected a string or null, got {type(row[field]).__name__}")
    for field in ("abstain", "error"):
        if not _is_flag(row.get(field)):
            raise fail(field, f"expected a boolean (or null, 0, 1), got {row.get(field)!r}")
    return RescoreAnswer(
        dataset=row["dataset"],
        prediction=row["prediction"],
        abstain=bool(row.get("abstain")),
        error=bool(row.get("error")),
        references={f: row[f] for f in spec.rescore_references},
    )


def rescore_row(row: Row, probe: str, *, file: str = "<input>", record: str = "?") -> Row:
    """The input row plus ``scores`` (ints 0/1, F1 floats)."""
    answer = validate(row, probe, file=file, record=record)
    return {**row, "scores": get_probe_type(probe).rescore(answer)}


def read_rows(path: str | Path) -> Iterator[tuple[int, Row]]:
    """Yield ``(line number, row)`` for each non-blank JSONL line; bad JSON -> InputError."""
    lineno = 0
    try:
        with open_text(path) as fh:
            for lineno, line in enumerate(fh, start=1):
                if line.strip():
                    yield lineno, _load_row(line, path, lineno)
    except (UnicodeDecodeError, EOFError, OSError) as exc:
        raise InputError(
            f"unreadable ({exc})", file=str(path), record=f"line {lineno + 1}"
        ) from exc


def _load_row(line: str, path: str | Path, lineno: int) -> Row:
    try:
        row = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"invalid JSON ({exc})", file=str(path), record=f"line {lineno}") from exc
    if not isinstance(row, dict):
        raise InputError("expected a JSON object", file=str(path), record=f"line {lineno}")
    return row


def rescore_file(probe: str, input_path: str | Path, output_path: str | Path) -> int:
    """Re-score every row of ``input_path`` into ``output_path`` (written atomically: on any
    error no output file appears). Returns the number of rows written."""
    if find_probe_type(probe) is None:
        raise InputError(f"unknown probe {probe!r} (known: {', '.join(PROBE_TYPES)})")
    if not Path(input_path).is_file():
        raise InputError("no such file", file=str(input_path))
    rows = (
        rescore_row(row, probe, file=str(input_path), record=f"line {lineno}")
        for lineno, row in read_rows(input_path)
    )
    return write_jsonl(output_path, rows)
