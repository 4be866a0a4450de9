"""Reader registry, the protocol, the vllm error path and the environment record."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from compressbench.readers import env
from compressbench.readers.base import ChatRequest, Generation, Reader, ReaderUnavailableError
from compressbench.readers.postprocess import from_text
from compressbench.readers.registry import (
    get_reader,
    reader_names,
    register_reader,
    unregister_reader,
)


class _Upper(Reader):
    """A backend registered by a test: registering is what is tested, so it is its own class."""

    name = "upper"
    model_id = "upper-model"
    revision = "1"

    def decoding(self) -> dict[str, Any]:
        return {}

    def generate(self, requests: Sequence[ChatRequest]) -> list[Generation]:
        return [from_text(r.id, json.dumps({"value": r.user.upper()})) for r in requests]


def test_builtin_backends_are_registered() -> None:
    assert {"hf", "openai", "vllm"} <= set(reader_names())


def test_register_and_build_by_name() -> None:
    register_reader("upper", _Upper)
    try:
        reader = get_reader("upper")
        assert isinstance(reader, Reader)
        out = reader.generate([ChatRequest("a", "s", "x"), ChatRequest("b", "s", "y")])
        assert [g.id for g in out] == ["a", "b"]
        with pytest.raises(ValueError, match="twice"):
            register_reader("upper", _Upper)
    finally:
        unregister_reader("upper")


def test_unknown_reader_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match=r"unknown reader 'nope'; allowed: .*hf"):
        get_reader("nope")


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed")
def test_vllm_reader_without_vllm_says_so() -> None:
    with pytest.raises(ReaderUnavailableError, match="not installed here"):
        get_reader("vllm", model="meta-llama/Llama-3.1-8B-Instruct")


def test_model_sha256_of_file_and_directory(tmp_path: Path) -> None:
    a = tmp_path / "model-00001.safetensors"
    b = tmp_path / "model-00002.safetensors"
    a.write_bytes(b"aaa")
    b.write_bytes(b"bbb")
    (tmp_path / "config.json").write_text("{}")
    assert env.model_sha256(a) == hashlib.sha256(b"aaa").hexdigest()
    combined = env.model_sha256(tmp_path)
    assert combined != env.model_sha256(a)
    b.write_bytes(b"ccc")
    assert env.model_sha256(tmp_path) != combined
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError):
        env.model_sha256(empty)


def test_mock_backend_answers_as_declared() -> None:
    """The registered ``mock`` backend: fixed, by key, echo, fail and unreachable modes."""
    from compressbench.readers.mock import MockReaderCalled

    reqs = [ChatRequest("P1|a", "s", "ctx", question="q1"), ChatRequest("P2|b", "s", "other")]
    fixed = get_reader("mock", answer="A", answers={"P2": "B", "ctx": "C"})
    assert [g.raw for g in fixed.generate(reqs)] == ["C", "B"]
    echo = get_reader("mock", mode="echo")
    first, second = echo.generate(reqs)
    assert first.raw != second.raw and echo.generate(reqs[:1])[0].raw == first.raw
    assert all(g.is_exception for g in get_reader("mock", mode="fail").generate(reqs))
    assert get_reader("mock", fail_on="other").generate(reqs)[1].is_exception
    assert fixed.decoding() != get_reader("mock", answer="Z").decoding()  # answers in the key
    with pytest.raises(MockReaderCalled):
        get_reader("mock", mode="unreachable").generate(reqs)
    with pytest.raises(ValueError, match="mock mode"):
        get_reader("mock", mode="nope")


def test_mock_lookup_answers_from_its_table(tmp_path: Path) -> None:
    """Mode ``lookup``: by request id, a row with ``user_sha256`` only for that user turn; a
    request the table misses raises; the table's digest is in the cache key."""
    from compressbench.readers.mock import user_sha256

    one = ChatRequest("P2|1", "s", "context one", question="q")
    two = ChatRequest("P2|1", "s", "context two", question="q")
    other = ChatRequest("P1|9", "s", "ctx")
    rows = [
        {"id": "P2|1", "user_sha256": user_sha256(one.user), "answer": "ONE"},
        {"id": "P2|1", "answer": "ANY"},
        {"id": "P1|9", "answer": "NINE"},
    ]
    table = tmp_path / "t.jsonl"
    table.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    reader = get_reader("mock", mode="lookup", answers_file=str(table))
    assert [g.raw for g in reader.generate([one, two, other])] == ["ONE", "ANY", "NINE"]
    with pytest.raises(LookupError, match="no answer for request 'P3'"):
        reader.generate([ChatRequest("P3", "s", "ctx")])
    key = reader.decoding()["answers_sha256"]
    table.write_text(json.dumps(rows[2]) + "\n", encoding="utf-8")
    again = get_reader("mock", mode="lookup", answers_file=str(table))
    assert again.decoding()["answers_sha256"] != key
    table.write_text(json.dumps(rows[2]) + "\n" + json.dumps(rows[2]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="two answers"):
        get_reader("mock", mode="lookup", answers_file=str(table))
    with pytest.raises(ValueError, match="needs answers_file"):
        get_reader("mock", mode="lookup")
