"""The one dialogue model every loader produces and every later stage reads."""

from __future__ import annotations

from dataclasses import dataclass, field

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


def dialogue_from_dict(row: dict[str, object]) -> Dialogue:
    """Inverse of :func:`dialogue_to_dict` (input is trusted: written by the corpora stage)."""
    turns_raw = row["turns"]
    assert isinstance(turns_raw, list)
    turns = tuple(
        Turn(
            index=i,
            speaker=t["speaker"],
            text=t["text"],
            state=None if t["state"] is None else {k: tuple(v) for k, v in t["state"].items()},
        )
        for i, t in enumerate(turns_raw)
    )
    services = row.get("services") or []
    assert isinstance(services, list)
    return Dialogue(
        dataset=str(row["dataset"]),
        dialogue_id=str(row["dialogue_id"]),
        turns=turns,
        split=str(row.get("split", "")),
        services=tuple(services),
        source=str(row.get("source", "")),
    )
