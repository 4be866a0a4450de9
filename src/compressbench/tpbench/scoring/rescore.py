"""Re-score extracted answers without regenerating them (the ``rescore`` command's core).

Input rows carry ``dataset``, ``prediction`` (the extracted answer value, may be null),
optional ``abstain`` / ``error`` flags and the reference (``reference``; for P3
``reference_goal`` and ``reference_value``). Each output row is the input row plus ``scores``.
One registry entry per probe maps a validated row to its score dict.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from compressbench.errors import InputError
from compressbench.jsonl import open_text, write_jsonl
from compressbench.tpbench.scoring.lme import score_lme
from compressbench.tpbench.scoring.p1 import score_p1
from compressbench.tpbench.scoring.p2 import score_p2
from compressbench.tpbench.scoring.p3 import score_p3
from compressbench.tpbench.scoring.zh import is_chinese_dataset, score_p1_zh

Row = dict[str, Any]


@dataclass(frozen=True)
class Answer:
    """A validated input row: what every probe scorer needs."""

    dataset: str
    prediction: Any
    abstain: bool
    error: bool
    references: dict[str, Any]


def _p1(a: Answer) -> dict[str, Any]:
    scorer = score_p1_zh if is_chinese_dataset(a.dataset) else score_p1
    return asdict(scorer(a.prediction, a.references["reference"], abstain=a.abstain, error=a.error))


def _p2(a: Answer) -> dict[str, Any]:
    s = score_p2(
        a.prediction, a.references["reference"], a.dataset, abstain=a.abstain, error=a.error
    )
    return {
        "strict": s.strict,
        "loose": s.loose,
        "overlap_strict": s.overlap_strict,
        "overlap_loose": s.overlap_loose,
        "norm_pred": s.norm_pred,
        "norm_gold": s.norm_gold,
    }


def _p2_lme(a: Answer) -> dict[str, Any]:
    s = score_lme(a.prediction, a.references["reference"], abstain=a.abstain, error=a.error)
    return {"strict": s.strict, "loose": s.loose}


def _p3(a: Answer) -> dict[str, Any]:
    refs = a.references
    return asdict(
        score_p3(
            a.prediction,
            refs["reference_goal"],
            refs["reference_value"],
            abstain=a.abstain,
            error=a.error,
        )
    )


@dataclass(frozen=True)
class Probe:
    """How one probe is re-scored: its reference fields and its scorer."""

    references: tuple[str, ...]
    score: Callable[[Answer], dict[str, Any]]


PROBES: dict[str, Probe] = {
    "p1": Probe(("reference",), _p1),
    "p2": Probe(("reference",), _p2),
    "p3": Probe(("reference_goal", "reference_value"), _p3),
    "p2_lme": Probe(("reference",), _p2_lme),
}


def _is_reference(value: object) -> bool:
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def _is_flag(value: object) -> bool:
    return value is None or isinstance(value, bool) or (type(value) is int and value in (0, 1))


def validate(row: Row, probe: str, *, file: str = "<input>", record: str = "?") -> Answer:
    """Check one input row and return its :class:`Answer`; InputError names the bad field."""

    def fail(field: str, message: str) -> InputError:
        return InputError(message, file=file, record=record, field=field)

    spec = PROBES[probe]
    for field in ("dataset", "prediction", *spec.references):
        if field not in row:
            raise fail(field, "missing field")
    if not isinstance(row["dataset"], str):
        raise fail("dataset", f"expected a string, got {type(row['dataset']).__name__}")
    for field in spec.references:
        if not _is_reference(row[field]):
            raise fail(field, f"expected a string or null, got {type(row[field]).__name__}")
    for field in ("abstain", "error"):
        if not _is_flag(row.get(field)):
            raise fail(field, f"expected a boolean (or null, 0, 1), got {row.get(field)!r}")
    return Answer(
        dataset=row["dataset"],
        prediction=row["prediction"],
        abstain=bool(row.get("abstain")),
        error=bool(row.get("error")),
        references={f: row[f] for f in spec.references},
    )


def rescore_row(row: Row, probe: str, *, file: str = "<input>", record: str = "?") -> Row:
    """The input row plus ``scores`` (ints 0/1, F1 floats)."""
    answer = validate(row, probe, file=file, record=record)
    return {**row, "scores": PROBES[probe].score(answer)}


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
    if probe not in PROBES:
        raise InputError(f"unknown probe {probe!r} (known: {', '.join(PROBES)})")
    if not Path(input_path).is_file():
        raise InputError("no such file", file=str(input_path))
    rows = (
        rescore_row(row, probe, file=str(input_path), record=f"line {lineno}")
        for lineno, row in read_rows(input_path)
    )
    return write_jsonl(output_path, rows)
