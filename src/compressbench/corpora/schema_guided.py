"""The schema-guided dialogue JSON shared by SGD and MultiWOZ 2.2, parsed into :class:`Dialogue`.

A file is a JSON list of dialogues ``{"dialogue_id", "services", "turns": [...]}``; a turn is
``{"speaker": "USER"|"SYSTEM", "utterance", "frames": [...]}`` and every USER frame carries
``{"service", "state": {"slot_values": {slot: [value, ...]}}}``. The dialogue state at a USER
turn is the union over services of their ``slot_values``, keyed ``service:slot``. With
``carry_forward`` a service whose frame is absent keeps its last state (SGD); without it only
the frames present count (MultiWOZ 2.2 lists every service at every USER turn).

Validation is strict and cheap (type checks only): anything malformed raises
:class:`InputError` naming the file, the dialogue and the field.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

from compressbench.corpora.files import iter_dialogue_files, read_json
from compressbench.corpora.model import SYSTEM, USER, Dialogue, State, Turn
from compressbench.errors import InputError

_SPEAKER_BY_PARITY = (USER, SYSTEM)


_KIND_NAMES = {
    dict: "an object",
    list: "a list",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


def _kind(value: object) -> str:
    """JSON-flavoured name of a value's type, for messages."""
    return _type_name(type(value))


def _type_name(kind: type) -> str:
    return _KIND_NAMES.get(kind, kind.__name__)


class _Where:
    """Names the file and dialogue of every error raised while parsing one dialogue."""

    def __init__(self, file: str, index: int) -> None:
        self.file = file
        self.record = f"#{index}"

    def fail(self, field: str | None, message: str) -> NoReturn:
        raise InputError(message, file=self.file, record=self.record, field=field)

    def require(self, obj: dict[str, Any], key: str, kind: type, field: str) -> Any:
        try:
            value = obj[key]
        except KeyError:
            self.fail(field, "missing required field")
        if type(value) is not kind:
            self.fail(field, f"expected {_type_name(kind)}, got {_kind(value)}")
        return value


def _slot_values(where: _Where, frame: object, field: str) -> tuple[str, State]:
    """(service, its state keyed ``service:slot``) of one USER frame."""
    if type(frame) is not dict:
        where.fail(field, f"expected an object, got {_kind(frame)}")
    service = where.require(frame, "service", str, f"{field}.service")
    state = where.require(frame, "state", dict, f"{field}.state")
    values = where.require(state, "slot_values", dict, f"{field}.state.slot_values")
    out: State = {}
    for slot, vals in values.items():
        if type(vals) is not list or not all(type(v) is str for v in vals):
            where.fail(f"{field}.state.slot_values.{slot}", "expected a list of strings")
        out[f"{service}:{slot}"] = tuple(vals)
    return service, out


def _turns(where: _Where, raw_turns: list[Any], carry_forward: bool) -> tuple[Turn, ...]:
    by_service: dict[str, State] = {}
    turns: list[Turn] = []
    for i, raw in enumerate(raw_turns):
        field = f"turns[{i}]"
        if type(raw) is not dict:
            where.fail(field, f"expected an object, got {_kind(raw)}")
        speaker = where.require(raw, "speaker", str, f"{field}.speaker")
        text = where.require(raw, "utterance", str, f"{field}.utterance")
        frames = where.require(raw, "frames", list, f"{field}.frames")
        expected = _SPEAKER_BY_PARITY[i % 2]
        if speaker != expected:
            if speaker not in _SPEAKER_BY_PARITY:
                where.fail(f"{field}.speaker", f"unknown speaker {speaker!r} (USER or SYSTEM)")
            where.fail(
                f"{field}.speaker",
                f"expected {expected}, got {speaker} (turns alternate USER/SYSTEM from USER)",
            )
        if expected == SYSTEM:
            turns.append(Turn(i, SYSTEM, text))
            continue
        if not carry_forward:
            by_service = {}
        for j, frame in enumerate(frames):
            service, values = _slot_values(where, frame, f"{field}.frames[{j}]")
            by_service[service] = values
        state: State = {}
        for values in by_service.values():
            state.update(values)
        turns.append(Turn(i, USER, text, state))
    return tuple(turns)


def parse_dialogue(
    raw: object, *, index: int, file: str, split: str, dataset: str, carry_forward: bool
) -> Dialogue:
    """One dialogue record -> :class:`Dialogue` (``index`` = its position in the file)."""
    where = _Where(file, index)
    if type(raw) is not dict:
        where.fail(None, f"dialogue must be a JSON object, got {_kind(raw)}")
    dialogue_id = where.require(raw, "dialogue_id", str, "dialogue_id")
    if not dialogue_id:
        where.fail("dialogue_id", "empty dialogue id")
    where.record = f"{dialogue_id} (#{index})"
    raw_turns = where.require(raw, "turns", list, "turns")
    if not raw_turns:
        where.fail("turns", "dialogue has no turns")
    services = raw.get("services", [])
    if type(services) is not list or not all(type(s) is str for s in services):
        where.fail("services", "expected a list of strings")
    return Dialogue(
        dataset=dataset,
        dialogue_id=dialogue_id,
        turns=_turns(where, raw_turns, carry_forward),
        split=split,
        services=tuple(services),
        source=file,
    )


def parse_file(path: Path, *, dataset: str, carry_forward: bool) -> list[Dialogue]:
    """All dialogues of one file (split = its folder name); nothing is returned on any error."""
    # Parsing allocates millions of small acyclic objects; cyclic GC passes over them (and
    # over everything a caller already holds) would triple the load time of a large corpus.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse_file(path, dataset=dataset, carry_forward=carry_forward)
    finally:
        if was_enabled:
            gc.enable()


def _parse_file(path: Path, *, dataset: str, carry_forward: bool) -> list[Dialogue]:
    records = read_json(path)
    if type(records) is not list:
        raise InputError(
            f"top level must be a JSON list of dialogues, got {_kind(records)}", file=str(path)
        )
    file, split = str(path), path.parent.name
    dialogues: list[Dialogue] = []
    first_index: dict[str, int] = {}
    for i, raw in enumerate(records):
        d = parse_dialogue(
            raw, index=i, file=file, split=split, dataset=dataset, carry_forward=carry_forward
        )
        if d.dialogue_id in first_index:
            raise InputError(
                f"duplicate dialogue id (first at #{first_index[d.dialogue_id]})",
                file=file,
                record=f"{d.dialogue_id} (#{i})",
                field="dialogue_id",
            )
        first_index[d.dialogue_id] = i
        dialogues.append(d)
    return dialogues


def load_schema_guided(
    path: str | Path, splits: Sequence[str] | None, *, dataset: str, carry_forward: bool
) -> Iterator[Dialogue]:
    """Dialogues of every dialogue file of a corpus, in file order (see :mod:`files`); a
    corpus without a single dialogue is an error."""
    n = 0
    for file in iter_dialogue_files(path, splits):
        dialogues = parse_file(file, dataset=dataset, carry_forward=carry_forward)
        n += len(dialogues)
        yield from dialogues
    if n == 0:
        raise InputError("empty corpus: its dialogue files hold no dialogues", file=str(path))
