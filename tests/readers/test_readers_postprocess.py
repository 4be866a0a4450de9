"""Reader post-processing (spec §6, §2.1) and the shared prompt rules."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from compressbench.readers import chat
from compressbench.readers.base import Generation
from compressbench.readers.postprocess import (
    NO_JSON,
    exception_error,
    from_exception,
    from_text,
    last_flat_json,
)


def test_last_parsing_flat_object_wins() -> None:
    text = 'first {"value": "a"} then {"value": "b", "abstain": false} trailing'
    assert last_flat_json(text) == '{"value": "b", "abstain": false}'


def test_unparsable_last_object_falls_back_to_earlier_one() -> None:
    text = '{"value": "ok"} and later {value: broken}'
    assert last_flat_json(text) == '{"value": "ok"}'


def test_nested_objects_are_not_flat() -> None:
    # Only the inner object is flat; the outer one contains braces.
    text = '{"a": {"value": "inner"}}'
    assert last_flat_json(text) == '{"value": "inner"}'


def test_markdown_fenced_answer() -> None:
    text = '```json\n{"value": "book a hotel", "support": "I need a hotel", "abstain": false}\n```'
    found = last_flat_json(text)
    assert found is not None
    assert json.loads(found)["value"] == "book a hotel"


def test_no_json_keeps_stripped_raw_text() -> None:
    gen = from_text("p1", "  I cannot tell.\n", tokens_in=5, tokens_out=4)
    assert gen.json_text is None
    assert gen.error == NO_JSON
    assert gen.output_text == "I cannot tell."
    assert gen.raw == "  I cannot tell.\n"


def test_json_found_has_no_error() -> None:
    gen = from_text("p1", 'Sure: {"value": "x"}')
    assert gen.error is None
    assert gen.output_text == '{"value": "x"}'


def test_exception_row() -> None:
    gen = from_exception("p2", ValueError("boom"))
    assert gen.output_text == ""
    assert gen.error == "exception:ValueError:boom"
    assert gen.is_exception
    assert exception_error(KeyError("k")) == "exception:KeyError:'k'"


def test_generation_round_trips_through_dict() -> None:
    gen = from_text("p3", '{"value": 1}', tokens_in=3, tokens_out=2, provenance={"backend": "x"})
    assert Generation.from_dict(gen.to_dict()) == gen


@given(st.lists(st.dictionaries(st.text(max_size=5), st.text(max_size=8), max_size=3), min_size=1))
def test_property_last_serialised_flat_object_is_found(objs: list[dict[str, str]]) -> None:
    """Flat JSON objects joined by noise: the last one is returned (whatever strings hold)."""
    parts = [json.dumps(o) for o in objs]
    if any("{" in p[1:-1] or "}" in p[1:-1] for p in parts):
        return  # braces inside strings make the object non-flat by the spec's rule
    text = " noise ".join(parts)
    assert last_flat_json(text) == parts[-1]


class _NoTemplateTokenizer:
    chat_template = None


def test_prompt_without_chat_template_is_system_blank_line_user() -> None:
    assert chat.render_chat(_NoTemplateTokenizer(), "SYS", "USER") == "SYS\n\nUSER"
