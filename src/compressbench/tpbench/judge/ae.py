"""Answer-equivalence validation sets shaped like the TPBench release's (Bulian et al. 2022 AE).

Inputs (JSONL): ``id`` (string or integer), ``question``, ``reference``, ``candidate``
(strings), ``context`` (string, null or absent). Key (JSONL): ``id`` and ``majority_label`` -
the human majority: true / false (also 1 / 0 and the strings in :data:`LABELS`), or null /
``"tie"`` / ``"unresolved"`` for tied votes, which stay unresolved (the paper keeps them out of
the agreement figures). Every input needs exactly one key row and every key row an input;
anything else is an :class:`InputError` naming the file, the record and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.errors import InputError
from compressbench.jsonl import read_jsonl
from compressbench.tpbench.judge.prompt import JudgeItem

# label (strings compared lower-case) -> human majority; None = tied votes, unresolved
LABELS: dict[Any, bool | None] = {
    True: True,
    False: False,
    "true": True,
    "false": False,
    "equivalent": True,
    "not_equivalent": False,
    "yes": True,
    "no": False,
    "1": True,
    "0": False,
    "tie": None,
    "unresolved": None,
}
_INTS = {1: True, 0: False}


@dataclass(frozen=True)
class LabelledItem:
    item: JudgeItem
    label: bool | None  # the human majority; None when the votes tied


def _string(
    row: dict[str, Any], name: str, file: str, record: str, *, optional: bool = False
) -> Any:
    value = row.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        got = "nothing" if name not in row else type(value).__name__
        raise InputError(f"expected a string, got {got}", file=file, record=record, field=name)
    return value


def _id(row: dict[str, Any], file: str, record: str) -> str:
    value = row.get("id")
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        raise InputError(
            "expected a non-empty string or an integer", file=file, record=record, field="id"
        )
    return str(value)


def parse_label(value: Any, file: str, record: str) -> bool | None:
    """A human majority label as true / false / None (tie)."""
    if value is None:
        return None
    key = value.lower() if isinstance(value, str) else value
    if isinstance(key, int) and not isinstance(key, bool) and key in _INTS:
        return _INTS[key]
    if isinstance(key, bool | str) and key in LABELS:
        return LABELS[key]
    allowed = "true, false, 1, 0, null, " + ", ".join(k for k in LABELS if isinstance(k, str))
    raise InputError(
        f"unknown label {value!r}; allowed: {allowed}",
        file=file,
        record=record,
        field="majority_label",
    )


def read_inputs(path: str | Path) -> list[JudgeItem]:
    file = str(path)
    items: dict[str, JudgeItem] = {}
    for line, row in enumerate(read_jsonl(path), start=1):
        record = f"line {line}"
        item_id = _id(row, file, record)
        if item_id in items:
            raise InputError(f"duplicate id {item_id!r}", file=file, record=record, field="id")
        items[item_id] = JudgeItem(
            id=item_id,
            question=_string(row, "question", file, record),
            reference=_string(row, "reference", file, record),
            candidate=_string(row, "candidate", file, record),
            context=_string(row, "context", file, record, optional=True),
        )
    if not items:
        raise InputError("no items", file=file)
    return list(items.values())


def read_key(path: str | Path) -> dict[str, bool | None]:
    file = str(path)
    labels: dict[str, bool | None] = {}
    for line, row in enumerate(read_jsonl(path), start=1):
        record = f"line {line}"
        item_id = _id(row, file, record)
        if item_id in labels:
            raise InputError(f"duplicate id {item_id!r}", file=file, record=record, field="id")
        if "majority_label" not in row:
            raise InputError("missing", file=file, record=record, field="majority_label")
        labels[item_id] = parse_label(row["majority_label"], file, record)
    return labels


def read_labelled(inputs: str | Path, key: str | Path) -> list[LabelledItem]:
    """The inputs with their human labels, in input order; ids must match one to one."""
    items = read_inputs(inputs)
    labels = read_key(key)
    known = {item.id for item in items}
    for item_id in labels:
        if item_id not in known:
            raise InputError(
                f"id {item_id!r} is not in {inputs}",
                file=str(key),
                record=f"id {item_id}",
                field="id",
            )
    for item in items:
        if item.id not in labels:
            raise InputError(
                f"no key row for this id in {key}",
                file=str(inputs),
                record=f"id {item.id}",
                field="id",
            )
    return [LabelledItem(item, labels[item.id]) for item in items]
