"""Rule readers for the TPBench chain tests, as answer tables of the registered ``mock`` backend
(mode ``lookup``): the test computes each request's answer from the prompt rows the stages
wrote (each carries its probe's gold data) and the mock answers by request id and user turn,
knowing nothing of the benchmark.

A table covers the contexts files and the deletion prompts present when it is written, so a
test writes it after the contexts (and deletions) stages and before the first answers stage.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from compressbench.jsonl import read_jsonl, write_jsonl
from compressbench.readers.mock import user_sha256
from compressbench.text.normalize import value_occurs_in_text
from compressbench.tpbench.prompts import split_user
from compressbench.tpbench.stages.answers import request_id
from compressbench.tpbench.stages.deletion_answers import deletion_request_id

TABLE = "answer_table.jsonl"
#: ``rule(row, context) -> answer``: ``row`` a contexts or deletion-contexts row, ``context``
#: the context part of its prompt (what the reader is shown before the question).
Rule = Callable[[dict[str, Any], str], str]


def mock_lookup(table: Path, model: str = "rule-reader") -> dict[str, Any]:
    """The ``reader`` block of the ``mock`` backend answering from ``table``."""
    return {
        "backend": "mock",
        "model": model,
        "options": {"mode": "lookup", "answers_file": str(table)},
    }


def prompt_rows(data: Path = Path("data")) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(request id, row)`` of every prompt under ``data``: the cells' contexts files and the
    deletion experiment's prompts."""
    for path in sorted((data / "contexts").rglob("*.jsonl")):
        yield from ((request_id(r), r) for r in read_jsonl(path))
    for path in sorted((data / "deletions").rglob("contexts.jsonl")):
        yield from ((deletion_request_id(r), r) for r in read_jsonl(path))


def probe_type(row: dict[str, Any]) -> str:
    """The row's probe type; a deletion prompt is a P2 question."""
    return str(row.get("probe_type", "P2"))


def write_table(table: Path, rule: Rule, data: Path = Path("data")) -> Path:
    """Write ``rule``'s answer to every prompt under ``data`` to ``table`` (one row per request
    id and user turn, as the stages will ask them)."""
    rows = {}
    for rid, row in prompt_rows(data):
        user = row["prompt_user"]
        context = split_user(user, row.get("compressed_text_used"))[0]
        key = (rid, user_sha256(user))
        rows[key] = {"id": rid, "user_sha256": key[1], "answer": rule(row, context)}
    write_jsonl(table, list(rows.values()))
    return table


def gold_where_visible(row: dict[str, Any], context: str) -> str:
    """P1 states the gold goal; P2 and P3 give the gold value when it survives in the context
    (P3 with its story label and slot), else abstain."""
    kind = probe_type(row)
    if kind == "P1":
        return json.dumps({"value": row["gold"], "abstain": False})
    value = row["gold"] if kind == "P2" else row["gold_value"]
    if not value_occurs_in_text(value, context, row["dataset"]):
        return json.dumps({"value": "unknown", "abstain": True})
    if kind == "P2":
        return json.dumps({"value": value, "abstain": False})
    joint = f"{row['gold_story_label']}; {row['slot_human']}: {value}"
    return json.dumps({"value": joint, "abstain": False})
