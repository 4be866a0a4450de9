"""Structured (JSON-schema) output: how to ask a chat server for it and how to read it back.

Request styles by name (:data:`RESPONSE_FORMATS`), each turning (name, schema) into the
``response_format`` an OpenAI-compatible server takes:

* ``json_schema`` - OpenAI structured outputs (``{"type": "json_schema", "json_schema": {...}}``;
  also vLLM and llama.cpp's own ``llama-server``),
* ``json_object`` - JSON mode with the schema attached (``{"type": "json_object", "schema":
  ...}``; llama-cpp-python's ``llama_cpp.server``, which rejects ``json_schema``),
* ``none`` - nothing is sent; the prompt alone asks for JSON.

:func:`parse_object` reads a reply: the whole reply as JSON, else the last flat ``{...}`` in it
(prose or code fences around the object), validated with :mod:`jsonschema` against the same
schema that was requested, so the schema is the one statement of the contract.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from compressbench.jsonl import canonical_json
from compressbench.text.json_objects import extract_flat_json, loads

NOT_JSON = "not-json"
INVALID = "invalid"
_MAX_MESSAGE = 200

Schema = Mapping[str, Any]


def _json_schema(name: str, schema: Schema) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


def _json_object(name: str, schema: Schema) -> dict[str, Any]:
    return {"type": "json_object", "schema": schema}


def _none(name: str, schema: Schema) -> None:
    return None


# style name -> builder of the request's ``response_format`` (None: send nothing)
RESPONSE_FORMATS: dict[str, Callable[[str, Schema], dict[str, Any] | None]] = {
    "json_schema": _json_schema,
    "json_object": _json_object,
    "none": _none,
}


def response_format(style: str, name: str, schema: Schema) -> dict[str, Any] | None:
    """The ``response_format`` of ``style`` asking for ``schema`` (called ``name``)."""
    try:
        build = RESPONSE_FORMATS[style]
    except KeyError:
        allowed = ", ".join(sorted(RESPONSE_FORMATS))
        raise ValueError(f"unknown response format {style!r}; allowed: {allowed}") from None
    return build(name, dict(schema))


@functools.lru_cache(maxsize=32)
def _validator(schema_json: str) -> Any:
    import json

    from jsonschema import Draft202012Validator

    schema = json.loads(schema_json)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@dataclass(frozen=True)
class Parsed:
    """A reply read against a schema: the object (None unless valid) or why not.

    ``error`` is None, ``"not-json"`` (no JSON object in the reply) or
    ``"invalid:<field>: <message>"`` (an object that breaks the schema)."""

    value: dict[str, Any] | None
    error: str | None

    @property
    def ok(self) -> bool:
        return self.error is None


def invalid(where: str, message: str) -> Parsed:
    """A rejected object: ``invalid:<where>: <message>`` (the message cut to 200 characters)."""
    return Parsed(None, f"{INVALID}:{where}: {' '.join(message.split())[:_MAX_MESSAGE]}")


def find_object(text: str) -> dict[str, Any] | None:
    """The whole stripped ``text`` as a JSON object, else the last flat ``{...}`` that parses."""
    ok, obj = loads(text.strip())
    if ok and isinstance(obj, dict):
        return obj
    return extract_flat_json(text).obj


def parse_object(text: str, schema: Schema) -> Parsed:
    """Find the JSON object in ``text`` and validate it against ``schema`` (first error wins,
    in field order)."""
    obj = find_object(text)
    if obj is None:
        return Parsed(None, NOT_JSON)
    errors = sorted(
        _validator(canonical_json(schema)).iter_errors(obj), key=lambda e: [str(p) for p in e.path]
    )
    if errors:
        first = errors[0]
        where = ".".join(str(p) for p in first.path) or "object"
        return invalid(where, first.message)
    return Parsed(obj, None)
