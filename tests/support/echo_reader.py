"""The deterministic reader of the answer-cache tests (and the subprocess they kill): the
registered ``mock`` backend answering a digest of the prompt, optionally slowly, logging what
it generated."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from compressbench.readers.base import ChatRequest, Generation
from compressbench.readers.mock import MockReader
from compressbench.readers.registry import get_reader

#: The registered ``mock`` backend as these tests use it: a digest of the prompt as the answer,
#: an exception row for a user turn containing ``FAIL``.
ECHO: dict[str, Any] = {"model": "echo-model", "mode": "echo", "fail_on": "FAIL", "revision": "r1"}


def echo_reader(**params: Any) -> MockReader:
    """The ``mock`` reader in echo mode (``delay``, ``log_path``, ``batch_size`` as given)."""
    reader = get_reader("mock", **ECHO, **params)
    assert isinstance(reader, MockReader)
    return reader


def make_requests(n: int) -> list[ChatRequest]:
    """``n`` probes; every fifth repeats an earlier prompt under a new id."""
    reqs = []
    for i in range(n):
        j = i - 3 if i % 5 == 4 else i
        user = f"Context:\n[T0] USER: I need item {j} " + "x" * (j * 7 % 40) + "\n\nQuestion: ?"
        reqs.append(ChatRequest(f"probe:{i}", "SYS", user, 96 if i % 3 else 128))
    return reqs


def stable_dump(gens: Sequence[Generation]) -> bytes:
    rows = []
    for g in gens:
        row = g.to_dict()
        row.pop("seconds")
        rows.append(json.dumps(row, sort_keys=True))
    return ("\n".join(rows) + "\n").encode()
