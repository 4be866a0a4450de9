"""The ``judge:`` block of ``params.yaml``: the judge stage's server, model and decoding.

::

    judge:
      enabled: false                     # off: the stage writes empty verdict files
      model: gpt-5.4-mini-2026-03-17     # the paper's judge
      base_url: null                     # null: $OPENAI_BASE_URL, else OpenAI
      revision: null                     # the judge model's revision, for provenance
      response_format: json_schema       # json_schema | json_object | none
      retries: 2                         # re-asks of an unparseable verdict
      max_tokens: 512
      concurrency: 4

This module is part of every stage's code (``config.py`` reads it), so it imports nothing but
the errors and the structured-output styles. Errors name ``params.yaml`` and the dotted field.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from compressbench.errors import InputError
from compressbench.readers.structured import RESPONSE_FORMATS

# The paper's judge (§6.1.1): gpt-5.4-mini-2026-03-17, temperature 0, 512 output tokens.
PAPER_JUDGE_MODEL = "gpt-5.4-mini-2026-03-17"


@dataclass(frozen=True)
class JudgeSpec:
    enabled: bool = False
    model: str = PAPER_JUDGE_MODEL
    base_url: str | None = None
    revision: str | None = None
    response_format: str = "json_schema"
    retries: int = 2
    max_tokens: int = 512
    concurrency: int = 4


# field -> (accepted types, smallest value for integers)
_RULES: dict[str, tuple[tuple[type, ...], int | None]] = {
    "enabled": ((bool,), None),
    "model": ((str,), None),
    "base_url": ((str, type(None)), None),
    "revision": ((str, type(None)), None),
    "response_format": ((str,), None),
    "retries": ((int,), 0),
    "max_tokens": ((int,), 1),
    "concurrency": ((int,), 1),
}


def parse_judge(raw: Any, source: str = "params.yaml") -> JudgeSpec:
    """Validate the ``judge:`` mapping (null or absent: the defaults)."""

    def fail(name: str, message: str) -> InputError:
        return InputError(message, file=source, field=f"judge.{name}" if name else "judge")

    raw = {} if raw is None else raw
    if not isinstance(raw, dict):
        raise fail("", f"expected a mapping, got {raw!r}")
    allowed = [f.name for f in fields(JudgeSpec)]
    unknown = sorted(str(k) for k in set(raw) - set(allowed))
    if unknown:
        raise fail("", f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}")
    values: dict[str, Any] = {**vars(JudgeSpec()), **raw}
    for name, (kinds, minimum) in _RULES.items():
        value = values[name]
        wrong_bool = isinstance(value, bool) and bool not in kinds
        if wrong_bool or not isinstance(value, kinds):
            expected = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
            raise fail(name, f"expected {expected}, got {value!r}")
        if minimum is not None and values[name] < minimum:
            raise fail(name, f"must be >= {minimum}; got {value!r}")
    if values["response_format"] not in RESPONSE_FORMATS:
        styles = ", ".join(sorted(RESPONSE_FORMATS))
        raise fail("response_format", f"must be one of {styles}; got {values['response_format']!r}")
    return JudgeSpec(**values)
