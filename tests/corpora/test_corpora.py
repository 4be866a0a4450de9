"""Corpus loaders: layout, state semantics, errors, and the real SGD / MultiWOZ 2.2 files."""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compressbench.corpora.loaders import CORPUS_LOADERS, iter_dialogue_files, load_corpus
from compressbench.corpora.model import SYSTEM, USER, Dialogue
from compressbench.errors import InputError
from support.corpus_stats import CorpusStats, corpus_stats

# ---------------------------------------------------------------- synthetic corpora


def user(text: str, *frames: tuple[str, dict[str, list[str]]]) -> dict[str, Any]:
    return {
        "speaker": "USER",
        "utterance": text,
        "frames": [
            {
                "service": service,
                "actions": [],
                "slots": [],
                "state": {"active_intent": "X", "requested_slots": [], "slot_values": values},
            }
            for service, values in frames
        ],
    }


def system(text: str) -> dict[str, Any]:
    return {"speaker": "SYSTEM", "utterance": text, "frames": []}


def dialogue(dialogue_id: str, *turns: dict[str, Any]) -> dict[str, Any]:
    return {"dialogue_id": dialogue_id, "services": ["Hotels_1", "Taxi_1"], "turns": list(turns)}


def sample_dialogues() -> list[dict[str, Any]]:
    return [
        dialogue(
            "1_00000",
            user("A hotel in Paris.", ("Hotels_1", {"city": ["Paris"]})),
            system("Which dates?"),
            user("And a taxi to the hotel.", ("Taxi_1", {"destination": ["the hotel"]})),
            system("Done."),
            user(
                "Make it Lyon, 2 rooms.",
                ("Hotels_1", {"city": ["Lyon"], "rooms": ["2", "two"]}),
                ("Taxi_1", {"destination": ["the hotel"]}),
            ),
        ),
        dialogue("1_00001", user("Hi.", ("Hotels_1", {})), system("Hello.")),
    ]


def write_json(path: Path, data: object, *, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(data).encode()
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    """train/ (two files, one gzipped, plus schema.json) and test/ (one .partial.json.gz)."""
    root = tmp_path / "corpus"
    write_json(root / "train" / "dialogues_002.json.gz", sample_dialogues()[1:], gz=True)
    write_json(root / "train" / "dialogues_001.json", sample_dialogues()[:1])
    write_json(root / "train" / "schema.json", [{"service_name": "Hotels_1"}])
    write_json(root / "test" / "dialogues_001.partial.json.gz", sample_dialogues(), gz=True)
    (root / "test" / "README.md").write_text("not a dialogue file")
    return root


# ---------------------------------------------------------------- registry and layout


def test_registry_names() -> None:
    assert set(CORPUS_LOADERS) >= {"sgd", "multiwoz", "builtin"}
    assert CORPUS_LOADERS["builtin"].default_path is not None
    assert CORPUS_LOADERS["sgd"].default_path is None


def test_unknown_corpus_and_missing_path_are_input_errors() -> None:
    with pytest.raises(InputError, match="unknown corpus 'nope'; known: builtin, multiwoz, sgd"):
        load_corpus("nope")
    with pytest.raises(InputError, match="'sgd' needs the path"):
        load_corpus("sgd")


def test_iter_dialogue_files_orders_splits_and_files(corpus: Path) -> None:
    names = [(p.parent.name, p.name) for p in iter_dialogue_files(corpus)]
    assert names == [
        ("train", "dialogues_001.json"),
        ("train", "dialogues_002.json.gz"),
        ("test", "dialogues_001.partial.json.gz"),
    ]
    chosen = [(p.parent.name, p.name) for p in iter_dialogue_files(corpus, ["test", "train"])]
    assert chosen[0] == ("test", "dialogues_001.partial.json.gz")
    single = corpus / "train" / "dialogues_001.json"
    assert list(iter_dialogue_files(single)) == [single]


def test_layout_errors(corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"split folder\(s\) dev not found; present: test, train"):
        list(iter_dialogue_files(corpus, ["dev"]))
    with pytest.raises(InputError, match="no split folder"):
        list(iter_dialogue_files(tmp_path / "corpus" / "train"))
    with pytest.raises(InputError, match="does not exist"):
        list(iter_dialogue_files(tmp_path / "missing"))
    (tmp_path / "empty" / "dev").mkdir(parents=True)
    with pytest.raises(InputError, match="no dialogues_"):
        list(load_corpus("sgd", tmp_path / "empty"))
    with pytest.raises(InputError, match="not a dialogues_"):
        list(iter_dialogue_files(corpus / "train" / "schema.json"))
    write_json(corpus / "train" / "dialogues_001.json.gz", [], gz=True)
    with pytest.raises(InputError, match=r"both plain and \.gz copies of dialogues_001\.json"):
        list(iter_dialogue_files(corpus))


def test_load_order_and_dialogue_fields(corpus: Path) -> None:
    loaded = list(load_corpus("sgd", corpus))
    assert [(d.split, d.dialogue_id) for d in loaded] == [
        ("train", "1_00000"),
        ("train", "1_00001"),
        ("test", "1_00000"),
        ("test", "1_00001"),
    ]
    first = loaded[0]
    assert first.dataset == "sgd"
    assert first.services == ("Hotels_1", "Taxi_1")
    assert first.source == "train/dialogues_001.json"  # relative to the corpus root
    assert [t.speaker for t in first.turns] == [USER, SYSTEM, USER, SYSTEM, USER]
    assert [t.index for t in first.turns] == [0, 1, 2, 3, 4]
    assert first.turns[1].state is None
    assert [d.dialogue_id for d in load_corpus("sgd", corpus, ["test"])] == ["1_00000", "1_00001"]


def test_json_and_gz_give_the_same_dialogues(corpus: Path) -> None:
    plain = list(load_corpus("sgd", corpus / "train" / "dialogues_001.json"))
    gz = list(load_corpus("sgd", corpus, ["test"]))[:1]
    assert [(d.dialogue_id, d.turns, d.services) for d in plain] == [
        (d.dialogue_id, d.turns, d.services) for d in gz
    ]


def test_sgd_carries_absent_service_state_forward(corpus: Path) -> None:
    turns = next(iter(load_corpus("sgd", corpus))).turns
    assert turns[0].state == {"Hotels_1:city": ("Paris",)}
    # The taxi frame alone is present at turn 2: the hotel's state is carried forward.
    assert turns[2].state == {"Hotels_1:city": ("Paris",), "Taxi_1:destination": ("the hotel",)}
    assert turns[4].state == {
        "Hotels_1:city": ("Lyon",),
        "Hotels_1:rooms": ("2", "two"),
        "Taxi_1:destination": ("the hotel",),
    }


def test_multiwoz_uses_only_the_frames_present(corpus: Path) -> None:
    turns = next(iter(load_corpus("multiwoz", corpus))).turns
    assert turns[2].state == {"Taxi_1:destination": ("the hotel",)}
    assert next(iter(load_corpus("multiwoz", corpus))).dataset == "multiwoz"


# ---------------------------------------------------------------- malformed input


def _mutate(fn: Callable[[list[dict[str, Any]]], object]) -> Callable[[], object]:
    def build() -> object:
        data = sample_dialogues()
        result = fn(data)
        return data if result is None else result

    return build


def _set(path: list[Any], value: object) -> Callable[[list[dict[str, Any]]], None]:
    def apply(data: list[dict[str, Any]]) -> None:
        obj: Any = data
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = value

    return apply


def _delete(path: list[Any]) -> Callable[[list[dict[str, Any]]], None]:
    def apply(data: list[dict[str, Any]]) -> None:
        obj: Any = data
        for key in path[:-1]:
            obj = obj[key]
        del obj[path[-1]]

    return apply


FIRST = "1_00000 (#0)"
SECOND = "1_00001 (#1)"

MALFORMED: dict[str, tuple[Callable[[], object], str | None, str | None, str]] = {
    # case: (data builder, record in the message, field in the message, message fragment)
    "top level not a list": (
        lambda: {"dialogues": []},
        None,
        None,
        "top level must be a JSON list",
    ),
    "dialogue not an object": (_mutate(_set([1], "x")), "#1", None, "must be a JSON object"),
    "missing dialogue_id": (_mutate(_delete([1, "dialogue_id"])), "#1", "dialogue_id", "missing"),
    "dialogue_id not a string": (
        _mutate(_set([1, "dialogue_id"], 7)),
        "#1",
        "dialogue_id",
        "expected a string, got a number",
    ),
    "missing turns": (_mutate(_delete([0, "turns"])), FIRST, "turns", "missing required field"),
    "turns not a list": (_mutate(_set([0, "turns"], {})), FIRST, "turns", "expected a list"),
    "empty dialogue": (_mutate(_set([1, "turns"], [])), SECOND, "turns", "no turns"),
    "services not strings": (_mutate(_set([0, "services"], [1])), FIRST, "services", "strings"),
    "turn not an object": (_mutate(_set([0, "turns", 3], [])), FIRST, "turns[3]", "an object"),
    "missing speaker": (
        _mutate(_delete([0, "turns", 1, "speaker"])),
        FIRST,
        "turns[1].speaker",
        "missing required field",
    ),
    "missing utterance": (
        _mutate(_delete([0, "turns", 2, "utterance"])),
        FIRST,
        "turns[2].utterance",
        "missing required field",
    ),
    "utterance not a string": (
        _mutate(_set([0, "turns", 2, "utterance"], None)),
        FIRST,
        "turns[2].utterance",
        "expected a string, got null",
    ),
    "missing frames": (
        _mutate(_delete([0, "turns", 1, "frames"])),
        FIRST,
        "turns[1].frames",
        "missing required field",
    ),
    "unknown speaker": (
        _mutate(_set([0, "turns", 1, "speaker"], "BOT")),
        FIRST,
        "turns[1].speaker",
        "unknown speaker 'BOT'",
    ),
    "starts with SYSTEM": (
        _mutate(_set([1, "turns", 0, "speaker"], "SYSTEM")),
        SECOND,
        "turns[0].speaker",
        "expected USER, got SYSTEM",
    ),
    "speakers not alternating": (
        _mutate(_set([0, "turns", 3, "speaker"], "USER")),
        FIRST,
        "turns[3].speaker",
        "expected SYSTEM, got USER",
    ),
    "frame missing state": (
        _mutate(_delete([0, "turns", 4, "frames", 1, "state"])),
        FIRST,
        "turns[4].frames[1].state",
        "missing required field",
    ),
    "frame missing service": (
        _mutate(_delete([0, "turns", 0, "frames", 0, "service"])),
        FIRST,
        "turns[0].frames[0].service",
        "missing required field",
    ),
    "slot_values not an object": (
        _mutate(_set([0, "turns", 0, "frames", 0, "state", "slot_values"], [])),
        FIRST,
        "turns[0].frames[0].state.slot_values",
        "expected an object, got a list",
    ),
    "slot value not a list of strings": (
        _mutate(_set([0, "turns", 0, "frames", 0, "state", "slot_values", "city"], "Paris")),
        FIRST,
        "turns[0].frames[0].state.slot_values.city",
        "expected a list of strings",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
@pytest.mark.parametrize("gz", [False, True], ids=["json", "gz"])
def test_malformed_input_names_file_dialogue_and_field(case: str, gz: bool, tmp_path: Path) -> None:
    build, record, field, fragment = MALFORMED[case]
    name = "dialogues_001.json.gz" if gz else "dialogues_001.json"
    path = write_json(tmp_path / "c" / "dev" / name, build(), gz=gz)
    with pytest.raises(InputError) as info:
        list(load_corpus("sgd", tmp_path / "c"))
    err = info.value
    message = str(err)
    assert err.file == str(path) and f"file {path}" in message
    assert err.record == record
    if record is not None:
        assert f"record {record}" in message
    assert err.field == field
    if field is not None:
        assert f"field {field!r}" in message
    assert fragment in message


def test_invalid_json_and_bad_gzip_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "c" / "test" / "dialogues_001.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('[{"dialogue_id": "1_00000", "turns": [}]')
    with pytest.raises(InputError, match=r"dialogues_001.json: invalid JSON \(.* line 1, column"):
        list(load_corpus("sgd", tmp_path / "c"))
    bad.unlink()
    (bad.parent / "dialogues_001.json.gz").write_bytes(b"not gzip at all")
    with pytest.raises(InputError, match=r"dialogues_001.json.gz: cannot read file"):
        list(load_corpus("sgd", tmp_path / "c"))


def test_nothing_from_a_bad_file_is_yielded(tmp_path: Path) -> None:
    data = sample_dialogues()
    data[1]["turns"] = []
    write_json(tmp_path / "c" / "test" / "dialogues_001.json", data)
    loaded = load_corpus("sgd", tmp_path / "c")
    with pytest.raises(InputError):
        next(loaded)  # the first, valid dialogue of the file is not handed out on its own


# ---------------------------------------------------------------- real corpora

# ../shared/corpora/README.md, "Reference statistics for validating a probe builder".
REFERENCE = {
    ("sgd", "test"): CorpusStats(2921, 1920, 4727, 4084, 4069, 2964),
    ("sgd", "dev"): CorpusStats(2098, 1461, 3786, 3213, 3213, 1976),
    ("multiwoz", "test"): CorpusStats(49, 22, 31, 29, 28, 14),
}
CORPUS_DIRS = {"sgd": "sgd", "multiwoz": "multiwoz22"}


@functools.cache
def _real(corpora_dir: Path, name: str, split: str) -> tuple[Dialogue, ...]:
    return tuple(load_corpus(name, corpora_dir / CORPUS_DIRS[name], [split]))


@pytest.mark.corpora
@pytest.mark.parametrize("name,split", sorted(REFERENCE))
def test_reference_statistics(name: str, split: str, corpora_dir: Path) -> None:
    assert corpus_stats(_real(corpora_dir, name, split)) == REFERENCE[name, split]


@pytest.mark.corpora
def test_sgd_split_sizes_and_shape(corpora_dir: Path) -> None:
    sizes = {s: len(_real(corpora_dir, "sgd", s)) for s in ["dev", "test"]}
    assert sizes == {"dev": 2098, "test": 2921}
    first = _real(corpora_dir, "sgd", "test")[0]
    assert (first.dataset, first.dialogue_id, first.split) == ("sgd", "1_00000", "test")
    assert first.services == ("Restaurants_2",)
    assert first.turns[0].state == {"Restaurants_2:date": ("the 8th",)}
    assert first.source.endswith("test/dialogues_001.json.gz")


@pytest.mark.corpora
def test_full_sgd_loads_in_split_order(corpora_dir: Path) -> None:
    """All present SGD (speed is measured by benchmarks/bench_transitions.py, not here)."""
    dialogues = list(load_corpus("sgd", corpora_dir / "sgd"))
    assert len(dialogues) == 17193
    assert [d.split for d in dialogues[:1]] == ["train"] and dialogues[-1].split == "test"


@pytest.mark.corpora
def test_multiwoz_subset(corpora_dir: Path) -> None:
    dialogues = list(load_corpus("multiwoz", corpora_dir / "multiwoz22"))
    assert dialogues == list(_real(corpora_dir, "multiwoz", "test"))
    assert len(dialogues) == 49
    assert sum(d.n_turns for d in dialogues) == 712
    first = dialogues[0]
    assert (first.dataset, first.dialogue_id, first.split) == ("multiwoz", "MUL0484.json", "test")
    assert first.turns[0].state == {
        "train:train-departure": ("norwich",),
        "train:train-destination": ("cambridge",),
    }
    assert all(t.speaker == (USER, SYSTEM)[t.index % 2] for d in dialogues for t in d.turns)
