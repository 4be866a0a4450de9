"""A deterministic reader for the answer-cache tests (and the subprocess they kill): it answers
a digest of the prompt, optionally slowly, and logs what it generated."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from typing import Any

from compressbench.readers.base import ChatRequest, Generation
from compressbench.readers.postprocess import from_exception, from_text


class EchoReader:
    """Deterministic test reader: answers a digest of the prompt, optionally slowly.

    Appends every request id it generates to ``log_path`` (flushed at once), so a test can
    see what was generated, and fails (exception row) for users containing ``FAIL``.
    """

    name = "echo"
    model_id = "echo-model"
    revision = "r1"

    def __init__(self, delay: float = 0.0, log_path: str | None = None, batch_size: int = 4):
        self.delay = delay
        self.log_path = log_path
        self.batch_size = batch_size
        self.calls = 0

    def decoding(self) -> dict[str, Any]:
        return {"max_input_tokens": 7168}

    def generate(self, requests: Sequence[ChatRequest]) -> list[Generation]:
        out = []
        for r in requests:
            time.sleep(self.delay)
            self.calls += 1
            if self.log_path:
                with open(self.log_path, "a") as fh:
                    fh.write(r.id + "\n")
            if "FAIL" in r.user:
                out.append(from_exception(r.id, RuntimeError("transient")))
                continue
            digest = hashlib.sha256((r.system + "|" + r.user).encode()).hexdigest()[:10]
            raw = f'Answer: {{"value": "{digest}", "support": "", "abstain": false}}'
            out.append(from_text(r.id, raw, tokens_in=len(r.user), tokens_out=r.max_new_tokens))
        return out


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
