"""The one dialogue model every loader produces and every later stage reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compressbench.errors import InputError

USER = "USER"
SYSTEM = "SYSTEM"

# Dialogue state: "service:slot" -> tuple of alternative values (empty tuple = slot not set).
State = dict[str, tuple[str, ...]]


def slot_key(service: str, slot: str) -> str:
    """State key for a service's slot (``Restaurants_1:city``, ``restaurant:restaurant-food``)."""
    return f"{service}:{slot}"


def slot_of(key: str) -> str:
    """The slot name of a state key (``city``, ``restaurant-food``)."""
    return key.split(":", 1)[1] if ":" in key else key


@dataclass(frozen=True)
class Turn:
    """One utterance. ``state`` is the full dialogue state after a USER turn, else None."""

    index: int
    speaker: str
    text: str
    state: State | None = None


@dataclass(frozen=True)
class Dialogue:
    """A dialogue with turns in order (turn 0 is USER, speakers alternate)."""

    dataset: str  # "sgd", "multiwoz", ...
    dialogue_id: str  # the corpus's own id, e.g. "66_00065" or "PMUL2677.json"
    turns: tuple[Turn, ...]
    split: str = ""
    services: tuple[str, ...] = ()
    source: str = ""  # file the dialogue was read from
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def n_turns(self) -> int:
        return len(self.turns)

    @property
    def texts(self) -> list[str]:
        return [t.text for t in self.turns]


def dialogue_to_dict(d: Dialogue) -> dict[str, object]:
    """JSON-ready form of a dialogue (the corpora stage's record)."""
    return {
        "dataset": d.dataset,
        "dialogue_id": d.dialogue_id,
        "split": d.split,
        "services": list(d.services),
        "source": d.source,
        "turns": [
            {
                "speaker": t.speaker,
                "text": t.text,
                "state": None if t.state is None else {k: list(v) for k, v in t.state.items()},
            }
            for t in d.turns
        ],
    }


def dialogue_from_dict(
    row: dict[str, Any], *, file: str | None = None, record: str | None = None
) -> Dialogue:
    """Inverse of :func:`dialogue_to_dict`; a malformed record raises InputError naming
    ``file``, ``record`` and the field."""

    def fail(field: str, message: str) -> InputError:
        return InputError(message, file=file, record=record, field=field)

    for key in ("dataset", "dialogue_id", "turns"):
        if key not in row:
            raise fail(key, "missing required field")
    if not isinstance(row["turns"], list):
        raise fail("turns", f"expected a list, got {type(row['turns']).__name__}")
    turns = []
    for i, t in enumerate(row["turns"]):
        try:
            state = t["state"]
            turns.append(
                Turn(
                    index=i,
                    speaker=str(t["speaker"]),
                    text=str(t["text"]),
                    state=None if state is None else {k: tuple(v) for k, v in state.items()},
                )
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise fail(f"turns[{i}]", f"malformed turn ({type(exc).__name__}: {exc})") from None
    services = row.get("services") or []
    if not isinstance(services, list):
        raise fail("services", f"expected a list, got {type(services).__name__}")
    return Dialogue(
        dataset=str(row["dataset"]),
        dialogue_id=str(row["dialogue_id"]),
        turns=tuple(turns),
        split=str(row.get("split", "")),
        services=tuple(services),
        source=str(row.get("source", "")),
    )
