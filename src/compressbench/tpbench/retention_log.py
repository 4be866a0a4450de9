"""Append-only log of retention outcomes: a long run resumes where it stopped.

One JSON line per (dialogue, method, ratio): the dialogue's identity (dataset, split, id and
sha256 of its content), the method's fingerprint (name + parameters), the ratio, the seconds
it took and one outcome per change event (``[event_index, slot, p2_eligible, p3_eligible,
value_kept, goal_kept]``). A line is written and flushed as soon as its dialogue is done, so
``kill -9`` loses at most the dialogue in flight; a line torn by the kill is dropped on the
next open. What the log holds is never recomputed; a changed dialogue or changed method
parameters have another key and are measured again.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from compressbench.corpora.model import Dialogue, dialogue_to_dict
from compressbench.errors import InputError
from compressbench.jsonl import canonical_json, dumps

Key = tuple[str, str, str, str, str, float]


def method_fingerprint(method: str, params: Any = None) -> str:
    """``method`` plus its parameters, canonical (``snapkv{"window_size":32}``)."""
    return method + canonical_json(params or {})


def dialogue_identity(dialogue: Dialogue) -> dict[str, str]:
    content = canonical_json(dialogue_to_dict(dialogue)).encode()
    return {
        "dataset": dialogue.dataset,
        "split": dialogue.split or "",
        "dialogue_id": dialogue.dialogue_id,
        "dialogue_sha": hashlib.sha256(content).hexdigest(),
    }


def record_key(record: dict[str, Any]) -> Key:
    return (
        record["dataset"],
        record["split"],
        record["dialogue_id"],
        record["dialogue_sha"],
        record["fingerprint"],
        float(record["ratio"]),
    )


class RetentionLog:
    """The records of one log file, by key; :meth:`append` adds and flushes new ones."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.records: dict[Key, dict[str, Any]] = {}
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        raw = self.path.read_bytes()
        head, newline, torn = raw.rpartition(b"\n")
        if torn:  # a last line without its newline was cut by a kill: drop it
            with self.path.open("r+b") as fh:
                fh.truncate(len(head) + len(newline))
        if not newline:
            return
        for n, line in enumerate(head.split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                self.records[record_key(record)] = record
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(
                    f"unreadable retention log line ({type(exc).__name__}: {exc}); "
                    "delete the file to measure everything again",
                    file=str(self.path),
                    record=f"line {n}",
                ) from exc

    def get(self, identity: dict[str, str], fingerprint: str, ratio: float) -> Any:
        """The record of (dialogue, method, ratio), or None if it was never measured."""
        return self.records.get(
            record_key({**identity, "fingerprint": fingerprint, "ratio": ratio})
        )

    def append(self, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write("".join(dumps(r) + "\n" for r in records))
            fh.flush()
            os.fsync(fh.fileno())
        for r in records:
            self.records[record_key(r)] = r
