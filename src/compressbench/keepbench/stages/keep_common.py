"""What the KEEP-Bench stages share: reading the cases and JSON files, the cache path.

Not a stage itself (``STAGES`` does not list it): each ``keep_*`` stage declares it as code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compressbench.jsonl import read_jsonl
from compressbench.keepbench.cases import KeepCase, case_from_dict
from compressbench.keepbench.stages import keep_paths


def read_cases(path: str | Path = keep_paths.CASES) -> list[KeepCase]:
    """The evaluation cases the cases stage wrote."""
    return [
        case_from_dict(row, file=str(path), record=f"line {i}")
        for i, row in enumerate(read_jsonl(path), start=1)
    ]


def read_json(path: str | Path) -> Any:
    """A JSON file a previous stage wrote (a missing or broken one names the file)."""
    import json

    from compressbench.errors import InputError

    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("file not found (run the earlier KEEP stages)", file=str(path)) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"unreadable ({exc})", file=str(path)) from None
