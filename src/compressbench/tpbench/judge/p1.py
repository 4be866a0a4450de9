"""Semantic judging of scored P1 answers (paper §6.1.1, spec §8 H8).

Input: rows of the scores stage. P1 rows are judged; rows of other probes are skipped. Each
P1 row needs ``gold`` (the initial-goal reference) and the reader's answer: ``prediction`` (the
extracted value; null -> empty candidate, which the prompt calls not equivalent) or, in rows
without that field, ``output``. The question is the row's ``question`` when it has one, else the
reader's P1 question. Like the paper, the judge sees no method identity and each distinct
(question, reference, candidate) is judged once: the item id is a hash of those three.

Semantic P1 accuracy = share of rows judged ``equivalent == true``; null verdicts and errors stay
in the denominator without credit, and are counted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from compressbench.errors import InputError
from compressbench.jsonl import canonical_json, read_jsonl
from compressbench.readers.cache import AnswerCache
from compressbench.tpbench.judge.judge import Judge, JudgeRun
from compressbench.tpbench.judge.prompt import JudgeItem
from compressbench.tpbench.prompts import question as probe_question

# Fields of a scored row that travel to its verdict row (those present).
CARRY = ("dataset", "dialogue_id", "probe_id", "probe_type", "seed", "method", "ratio", "task_id")
GROUP_KEYS = ("dataset", "method", "ratio")

Row = dict[str, Any]


def _text(row: Mapping[str, Any], name: str, file: str, record: str) -> str:
    value = row.get(name)
    if not isinstance(value, str):
        raise InputError(
            f"expected a string, got {type(value).__name__}", file=file, record=record, field=name
        )
    return value


def _candidate(row: Mapping[str, Any], file: str, record: str) -> str:
    if "prediction" in row:
        value = row["prediction"]
        if value is None:
            return ""
        if not isinstance(value, str):
            raise InputError(
                f"expected a string or null, got {type(value).__name__}",
                file=file,
                record=record,
                field="prediction",
            )
        return value
    return _text(row, "output", file, record)


def item_id(question: str, reference: str, candidate: str) -> str:
    """A content id: equal (question, reference, candidate) -> one item, one verdict."""
    digest = hashlib.sha256(canonical_json([question, reference, candidate]).encode())
    return "p1-" + digest.hexdigest()[:16]


def p1_item(row: Mapping[str, Any], file: str, record: str) -> JudgeItem:
    """The judge item of one scored P1 row (bad fields raise :class:`InputError`)."""
    question = _text(row, "question", file, record) if "question" in row else probe_question("P1")
    reference = _text(row, "gold", file, record)
    candidate = _candidate(row, file, record)
    return JudgeItem(item_id(question, reference, candidate), question, reference, candidate)


def read_p1_rows(path: str | Path) -> list[tuple[Row, JudgeItem]]:
    """The P1 rows of a scored file with their judge items, all validated before any judging."""
    file = str(path)
    out = []
    for line, row in enumerate(read_jsonl(path), start=1):
        probe = row.get("probe_type")
        if not isinstance(probe, str):
            raise InputError(
                "missing probe type", file=file, record=f"line {line}", field="probe_type"
            )
        if probe.upper() == "P1":
            out.append((row, p1_item(row, file, f"line {line}")))
    if not out:
        raise InputError("no P1 rows to judge", file=file, field="probe_type")
    return out


def judge_p1_rows(
    judge: Judge,
    rows: Sequence[tuple[Row, JudgeItem]],
    cache: AnswerCache,
    *,
    progress: bool = True,
) -> tuple[list[Row], JudgeRun]:
    """One verdict row per scored P1 row: its carried fields, ``reference``, ``candidate`` and
    the verdict (``equivalent``, ``core_goal``, ``reference_type``, ``reason``, ``error``...)."""
    items = list(dict.fromkeys(item for _, item in rows))
    run = judge.judge(items, cache, progress=progress)
    by_id = {item.id: verdict for item, verdict in zip(items, run.rows, strict=True)}
    out = []
    for row, item in rows:
        carried = {k: row[k] for k in CARRY if k in row}
        out.append(
            {**carried, "reference": item.reference, "candidate": item.candidate, **by_id[item.id]}
        )
    return out, run


def summarize(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Semantic accuracy (share of ``equivalent == true``) with counts of true / false / null
    verdicts, of errors (rows without a valid verdict) and of valid verdicts whose ``id`` is
    not the item's (kept: one item per request)."""
    rows = list(rows)
    errors = sum(r.get("error") is not None for r in rows)
    judged = [r for r in rows if r.get("error") is None]
    true = sum(r.get("equivalent") is True for r in judged)
    false = sum(r.get("equivalent") is False for r in judged)
    return {
        "n": len(rows),
        "equivalent_true": true,
        "equivalent_false": false,
        "equivalent_null": len(judged) - true - false,
        "errors": errors,
        "id_mismatches": sum(r.get("verdict_id") != r.get("judge_id") for r in judged),
        "semantic_accuracy": true / len(rows) if rows else None,
    }


def summarize_by(
    rows: Iterable[Mapping[str, Any]], keys: Sequence[str] = GROUP_KEYS
) -> list[dict[str, Any]]:
    """:func:`summarize` per group of ``keys`` (groups in first-seen order)."""
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row.get(k) for k in keys), []).append(row)
    return [{**dict(zip(keys, key, strict=True)), **summarize(g)} for key, g in groups.items()]
