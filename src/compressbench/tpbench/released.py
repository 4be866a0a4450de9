"""TPBench's released probe rows as a probe source (format of ``probe_examples.jsonl``, spec §3.7).

A released row is one probe x method: ids, gold fields, ``meta`` (with ``ratio``), the method's
``compressed_text_used`` and the rendered prompts. ``probe_type`` uses the artifact's names
(``P1``, ``P3`` = paper P2, ``P1_LATE`` = paper P3). The ``full_context`` row of a probe holds the
whole dialogue in marker rendering; :func:`parse_marked_context` turns it back into turns, and
:func:`released_probes` into :class:`ProbeRecord` objects whose ``probe_id`` is the released
``dialogue_id`` (so ``random_seed42`` reproduces the released selection).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compressbench.compress.method import FULL_CONTEXT
from compressbench.corpora.model import SYSTEM, USER, Turn
from compressbench.errors import InputError
from compressbench.jsonl import read_jsonl
from compressbench.tpbench.probe_types import PROBE_TYPES, by_artifact_name
from compressbench.tpbench.probes import ProbeRecord

_MARKER = re.compile(r"\[T(\d+)\] (USER|SYSTEM): ")
_REQUIRED_STR = (
    "dialogue_id",
    "dataset",
    "probe_type",
    "method",
    "compressed_text_used",
    "prompt_system",
    "prompt_user",
)
_OPTIONAL_STR = (
    "slot",
    "slot_human",
    "old_value",
    "new_value",
    "gold",
    "gold_story_label",
    "gold_value",
    "template_sha16",
)


@dataclass(frozen=True)
class ReleasedRow:
    """One validated released probe row."""

    file: str
    line: int
    dialogue_id: str
    dataset: str
    probe_type: str  # artifact name: "P1" | "P3" | "P1_LATE"
    method: str
    compressed_text_used: str
    prompt_system: str
    prompt_user: str
    ratio: float
    meta: Mapping[str, Any] = field(default_factory=dict)
    fields: Mapping[str, str] = field(default_factory=dict)  # the optional string fields

    @property
    def paper_probe_type(self) -> str:
        found = by_artifact_name(self.probe_type)
        assert found is not None  # parse_row admits the artifact's names only
        return found.name

    def get(self, name: str) -> str:
        return self.fields.get(name, "")

    def error(self, message: str, field: str | None = None) -> InputError:
        return InputError(message, file=self.file, record=f"line {self.line}", field=field)


def parse_row(row: Mapping[str, Any], *, file: str, line: int) -> ReleasedRow:
    """Validate one released row; errors name the file, the line and the field."""

    def fail(name: str, message: str) -> InputError:
        return InputError(message, file=file, record=f"line {line}", field=name)

    values: dict[str, str] = {}
    for name in _REQUIRED_STR:
        if name not in row:
            raise fail(name, "missing required field")
        if not isinstance(row[name], str):
            raise fail(name, f"expected a string, got {type(row[name]).__name__}")
        values[name] = row[name]
    if by_artifact_name(values["probe_type"]) is None:
        known = ", ".join(p.artifact_name for p in PROBE_TYPES.values() if p.artifact_name)
        raise fail("probe_type", f"unknown probe type {values['probe_type']!r} ({known})")
    optional = {}
    for name in _OPTIONAL_STR:
        if name in row and row[name] is not None:
            if not isinstance(row[name], str):
                raise fail(name, f"expected a string, got {type(row[name]).__name__}")
            optional[name] = row[name]
    meta = row.get("meta")
    if not isinstance(meta, dict):
        raise fail("meta", "missing or not an object")
    ratio = meta.get("ratio")
    if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not 0 < ratio <= 1:
        raise fail("meta.ratio", f"expected a number in (0, 1], got {ratio!r}")
    return ReleasedRow(
        file=file,
        line=line,
        ratio=float(ratio),
        meta=meta,
        fields=optional,
        **values,
    )


def read_released(path: str | Path) -> Iterator[ReleasedRow]:
    """Validated rows of a released probe JSONL file: one row per (dialogue id, probe type,
    method, ratio); a repeated one or a file without rows is an error."""
    first_line: dict[tuple[str, str, str, float], int] = {}
    for line, raw in enumerate(read_jsonl(path), start=1):
        row = parse_row(raw, file=str(path), line=line)
        key = (row.dialogue_id, row.probe_type, row.method, row.ratio)
        if key in first_line:
            raise row.error(
                f"duplicate row {row.dialogue_id} {row.probe_type} {row.method} r={row.ratio} "
                f"(first at line {first_line[key]})",
                "dialogue_id",
            )
        first_line[key] = line
        yield row
    if not first_line:
        raise InputError("no released probe rows", file=str(path))


def parse_marked_context(text: str) -> tuple[Turn, ...]:
    """``[Tn] SPEAKER: text`` lines back into turns. A line that does not start a turn with a
    higher index continues the previous turn's text (turn texts may contain newlines)."""
    turns: list[tuple[int, str, list[str]]] = []
    for line in text.split("\n"):
        m = _MARKER.match(line)
        if m and (not turns or int(m.group(1)) > turns[-1][0]):
            turns.append((int(m.group(1)), m.group(2), [line[m.end() :]]))
        elif turns:
            turns[-1][2].append(line)
        else:
            raise ValueError(
                f"context does not start with a [Tn] USER/SYSTEM marker: {line[:60]!r}"
            )
    return tuple(Turn(i, speaker, "\n".join(parts)) for i, speaker, parts in turns)


def full_dialogue(row: ReleasedRow) -> tuple[Turn, ...]:
    """Turns of a ``full_context`` row: indices must run 0..n-1 and speakers alternate."""
    try:
        turns = parse_marked_context(row.compressed_text_used)
    except ValueError as exc:
        raise row.error(str(exc), "compressed_text_used") from None
    for pos, t in enumerate(turns):
        if t.index != pos:
            raise row.error(
                f"full context skips turn {pos} (found T{t.index})", "compressed_text_used"
            )
        if t.speaker != (USER, SYSTEM)[pos % 2]:
            raise row.error(
                f"turn T{pos} speaker {t.speaker} breaks USER/SYSTEM alternation",
                "compressed_text_used",
            )
    return turns


def source_dialogue_id(released_id: str, dataset: str) -> str:
    """``v20_sgd_66_00065__qa_02`` -> ``66_00065`` (spec §7)."""
    base = released_id.split("__qa_", 1)[0]
    prefix = f"v20_{dataset}_"
    return base[len(prefix) :] if base.startswith(prefix) else base


def released_probe(row: ReleasedRow) -> ProbeRecord:
    """The probe of a ``full_context`` row (seed = ``meta.sample_seed``, -1 when not recorded)."""
    turns = full_dialogue(row)
    seed = row.meta.get("sample_seed", -1)
    return ProbeRecord(
        probe_id=row.dialogue_id,
        probe_type=row.paper_probe_type,
        dataset=row.dataset,
        dialogue_id=source_dialogue_id(row.dialogue_id, row.dataset),
        seed=seed if isinstance(seed, int) else -1,
        ratio=row.ratio,
        slot=row.get("slot"),
        slot_human=row.get("slot_human"),
        old_value=row.get("old_value"),
        new_value=row.get("new_value"),
        gold=row.get("gold"),
        turns=tuple((t.speaker, t.text) for t in turns),
        gold_value=row.get("gold_value"),
        gold_story_label=row.get("gold_story_label"),
        meta=dict(row.meta),
    )


def released_probes(rows: Iterable[ReleasedRow]) -> dict[tuple[str, str], ProbeRecord]:
    """Probe per (released dialogue id, artifact probe type), from the ``full_context`` rows."""
    out: dict[tuple[str, str], ProbeRecord] = {}
    for row in rows:
        if row.method == FULL_CONTEXT:
            out.setdefault((row.dialogue_id, row.probe_type), released_probe(row))
    return out
