"""The ``mock`` backend: a reader with declared, deterministic answers and no model.

For tests and dry runs of the pipeline (as inspect_ai's ``mockllm``). What it answers is set by
its parameters and is part of :meth:`MockReader.decoding`, so two mocks that answer
differently never share a cache key:

- ``mode="fixed"`` (default): every request gets ``answer``; with ``answers`` (key -> answer),
  a request gets the answer of the first key its id starts with or its user turn contains
  (``answer`` when none matches);
- ``mode="echo"``: a JSON answer whose value is a digest of the system and user turns (every
  distinct prompt answered differently, the same prompt the same);
- ``mode="lookup"``: each request gets its answer from the table ``answers_file``, a JSONL file
  of ``{"id", "answer"}`` rows, a row with ``"user_sha256"`` (:func:`user_sha256`) answering
  only the request whose user turn has that digest (one id, several contexts); a request the
  table does not answer raises :class:`LookupError`. The table is read when the reader is
  built and its digest is part of :meth:`MockReader.decoding`;
- ``mode="fail"``: every request becomes an exception row (a transient failure);
- ``mode="unreachable"``: :meth:`~MockReader.generate` raises: a reader that must never be
  asked (input refused earlier, answers served from the cache).

``fail_on``: requests whose user turn contains it become exception rows in any mode.
``params.yaml`` sets these parameters under ``reader.options``.
``delay`` (seconds per request) and ``log_path`` (every generated request id appended,
flushed at once) let a test watch or interrupt a run part-way.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from compressbench.readers.base import ChatRequest, Generation, Reader, provenance
from compressbench.readers.chat import DEFAULT_MAX_INPUT_TOKENS
from compressbench.readers.postprocess import from_exception, from_text

MODES = ("fixed", "echo", "lookup", "fail", "unreachable")
DEFAULT_ANSWER = json.dumps({"value": "mock", "support": "", "abstain": False})


class MockReaderCalled(RuntimeError):
    """A ``mode="unreachable"`` mock was asked to generate."""


def user_sha256(user: str) -> str:
    """The digest a ``lookup`` table row's ``user_sha256`` holds for the user turn ``user``."""
    return hashlib.sha256(user.encode("utf-8")).hexdigest()


def read_table(path: str) -> tuple[dict[tuple[str, str | None], str], str]:
    """The answers of the JSONL table ``path`` by ``(id, user_sha256 or None)``, and the
    sha256 of its bytes."""
    data = Path(path).read_bytes()
    table: dict[tuple[str, str | None], str] = {}
    for line in data.decode("utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        key = (str(row["id"]), row.get("user_sha256"))
        if key in table:
            raise ValueError(f"{path}: two answers for request {key[0]!r} ({key[1]})")
        table[key] = str(row["answer"])
    return table, hashlib.sha256(data).hexdigest()


class MockReader(Reader):
    """Parameters: ``model`` (the model id it reports), ``mode`` (see the module notes),
    ``answer``, ``answers``, ``answers_file``, ``fail_on``, ``revision`` (default ``"1"``),
    ``batch_size`` (requests committed together), ``max_input_tokens`` (recorded only),
    ``delay``, ``log_path``. ``calls`` counts the requests it generated."""

    name = "mock"

    def __init__(
        self,
        model: str = "mock-model",
        *,
        mode: str = "fixed",
        answer: str = DEFAULT_ANSWER,
        answers: Mapping[str, str] | None = None,
        answers_file: str | None = None,
        fail_on: str | None = None,
        revision: str | None = None,
        batch_size: int = 4,
        max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
        delay: float = 0.0,
        log_path: str | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mock mode must be one of {MODES}, got {mode!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model_id = model
        self.revision = revision or "1"
        self.mode = mode
        self.answer = answer
        self.answers = dict(answers or {})
        self.answers_file = answers_file
        self.table: dict[tuple[str, str | None], str] = {}
        self.table_sha256 = ""
        if mode == "lookup":
            if answers_file is None:
                raise ValueError("mock mode 'lookup' needs answers_file")
            self.table, self.table_sha256 = read_table(answers_file)
        self.fail_on = fail_on
        self.batch_size = batch_size
        self.max_input_tokens = max_input_tokens
        self.delay = delay
        self.log_path = log_path
        self.calls = 0

    @property
    def commit_every(self) -> int:  # type: ignore[override]
        return self.batch_size

    def decoding(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mode": self.mode, "max_input_tokens": self.max_input_tokens}
        if self.mode == "fixed":
            out["answer"] = self.answer
            if self.answers:
                out["answers"] = dict(self.answers)
        if self.mode == "lookup":
            out["answers_sha256"] = self.table_sha256
        if self.fail_on is not None:
            out["fail_on"] = self.fail_on
        return out

    def generate(self, requests: Sequence[ChatRequest]) -> list[Generation]:
        if self.mode == "unreachable":
            raise MockReaderCalled(f"the mock reader was asked for {len(requests)} answers")
        return [self._answer(r) for r in requests]

    def _answer(self, req: ChatRequest) -> Generation:
        time.sleep(self.delay)
        self.calls += 1
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as fh:
                fh.write(req.id + "\n")
        prov = provenance(self)
        if self.mode == "fail" or (self.fail_on is not None and self.fail_on in req.user):
            return from_exception(req.id, RuntimeError("transient"), provenance=prov)
        return from_text(
            req.id,
            self.text_for(req),
            tokens_in=len(req.user),
            tokens_out=req.max_new_tokens,
            provenance=prov,
        )

    def text_for(self, req: ChatRequest) -> str:
        """The raw answer to ``req`` in mode ``echo``, ``lookup`` or ``fixed``."""
        if self.mode == "echo":
            digest = hashlib.sha256((req.system + "|" + req.user).encode()).hexdigest()[:10]
            return f'Answer: {{"value": "{digest}", "support": "", "abstain": false}}'
        if self.mode == "lookup":
            text = self.table.get((req.id, user_sha256(req.user)), self.table.get((req.id, None)))
            if text is None:
                raise LookupError(f"{self.answers_file} has no answer for request {req.id!r}")
            return text
        for key, text in self.answers.items():
            if req.id.startswith(key) or key in req.user:
                return text
        return self.answer
