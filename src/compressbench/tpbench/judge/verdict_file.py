"""A cell's verdict file (``data/verdicts/<dataset>/<method>/<r>.jsonl``): the judge stage
writes it, the report reads it.

Judged, it holds one verdict row per P1 answer. Not judged (judging off, or no P1 answers in the
cell), it holds one row ``{"not_judged": <reason>}``: an empty output would make ``dvc status``
warn about it, and the row says why there is nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compressbench.jsonl import read_jsonl

NOT_JUDGED = "not_judged"  # the key of the one row of a cell's file when nothing was judged


def not_judged(reason: str) -> list[dict[str, str]]:
    """The rows of a cell's verdict file when nothing was judged: one, saying why."""
    return [{NOT_JUDGED: reason}]


def read_verdicts(path: Path) -> list[dict[str, Any]]:
    """The verdict rows of a cell's file; none when the cell was not judged (or has not run)."""
    if not path.exists():
        return []
    return [row for row in read_jsonl(path) if NOT_JUDGED not in row]
