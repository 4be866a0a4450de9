"""Pins the published answer parsers of spec §2.1 (and the front ends of §2.2-§2.5)."""

from __future__ import annotations

import pytest

from compressbench.tpbench.scoring.parse import (
    extract_flat_json,
    lme_prediction,
    p1_object,
    parse_first_user_recent,
    parse_lme,
    parse_p1,
    parse_p2,
    parse_p3,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"value": "a"}', {"value": "a"}),
        ('  {"value": "a"}  \n', {"value": "a"}),
        ('Answer: {"value": "a"} done', {"value": "a"}),
        ('{"value": "a"} then {"value": "b"}', {"value": "b"}),  # last { .. last }
        ('{"value": {"x": 1}}', {"value": {"x": 1}}),  # whole text first
        ('x {"value": {"x": 1}}', None),  # last { .. last } = '{"x": 1}}'
        ('{"value": "a"} }{', None),  # last } before last {
        ("no json here", None),
        ("", None),
        ("[1, 2]", None),  # non-dict -> None
        ('"just a string"', None),
        ("42", None),
        ('{"value": "a",}', None),
    ],
)
def test_p1_object(text: str, expected: dict[str, object] | None) -> None:
    assert p1_object(text) == expected


@pytest.mark.parametrize(
    ("text", "value", "abstain", "format_error"),
    [
        ('{"value": "find a doctor", "abstain": false}', "find a doctor", False, False),
        ('{"value": "find a doctor", "abstain": true}', "", True, False),
        ('{"value": "x", "abstain": "true"}', "x", False, False),  # identity check on true
        ('{"value": "x", "abstain": 1}', "x", False, False),
        ('{"value": 5}', "5", False, False),
        ('{"value": 0}', "", False, False),  # str(value or "")
        ('{"value": null}', "", False, False),
        ('{"value": ["a", "b"]}', "['a', 'b']", False, False),
        ("no json", "", True, True),
    ],
)
def test_parse_p3(text: str, value: str, abstain: bool, format_error: bool) -> None:
    answer = parse_p3(text)
    assert (answer.value, answer.abstain, answer.format_error) == (value, abstain, format_error)


def test_parse_p1_empty_prediction_abstains() -> None:
    assert parse_p1('{"value": ""}').abstain
    assert parse_p1('{"value": 0}').abstain
    assert not parse_p1('{"value": "x"}').abstain
    assert parse_p3('{"value": ""}').abstain is False
    answer = parse_p1('{"value": "x", "support": "turn 3"}')
    assert answer.support == "turn 3"


@pytest.mark.parametrize(
    ("text", "value", "abstain", "format_error"),
    [
        ('{"value": "17:15"}', "17:15", False, False),
        ('Sure! {"value": "17:15", "abstain": false}', "17:15", False, False),
        ('{"value": "x", "abstain": "false"}', "x", True, False),  # bool("false") is True
        ('{"value": "x", "abstain": 0}', "x", False, False),
        ('{"value": "N/A"}', "N/A", True, False),
        ('{"value": " Unknown "}', " Unknown ", True, False),
        ('{"value": "none"}', "none", True, False),
        ('{"value": ""}', "", True, False),
        ('{"value": 12}', 12, False, False),  # kept; only strings can score
        ('{"value": {"x": 1}}', None, False, True),  # no whole-text attempt
        ("[1]", None, False, True),
        ("nothing", None, False, True),
    ],
)
def test_parse_p2(text: str, value: object, abstain: bool, format_error: bool) -> None:
    answer = parse_p2(text)
    assert (answer.value, answer.abstain, answer.format_error) == (value, abstain, format_error)


@pytest.mark.parametrize(
    ("text", "value", "abstain", "format_error"),
    [
        ('{"value": "under my bed"}', "under my bed", False, False),
        ('{"value": 4}', "4", False, False),
        ('{"value": 2.5}', "2.5", False, False),
        ('{"value": true}', "", True, False),
        ('{"value": null}', None, True, False),
        ('{"abstain": true, "value": "x"}', "x", True, False),
        ('{"value": {"x": 1}}', {"x": 1}, False, False),  # whole text first
        ('[{"value": "x"}]', None, True, True),  # non-dict -> {}
        ('text {"value": "x"}', "x", False, False),
        ("no json", None, True, True),
    ],
)
def test_parse_lme(text: str, value: object, abstain: bool, format_error: bool) -> None:
    answer = parse_lme(text)
    assert (answer.value, answer.abstain, answer.format_error) == (value, abstain, format_error)


def test_lme_prediction() -> None:
    assert lme_prediction(True) == ""
    assert lme_prediction(3) == "3"
    assert lme_prediction(None) is None
    assert lme_prediction(["a"]) == ["a"]


@pytest.mark.parametrize(
    ("text", "obj", "stored"),
    [
        ('a {"value": 1} b {"value": 2} c', {"value": 2}, '{"value": 2}'),
        ('{"value": 1} {bad}', {"value": 1}, '{"value": 1}'),
        ('{"a": {"b": 1}}', {"b": 1}, '{"b": 1}'),  # only flat objects count
        ('{"value": [1, 2]}', {"value": [1, 2]}, '{"value": [1, 2]}'),
        ("  no json  ", None, "no json"),
        ("{ not json }", None, "{ not json }"),
    ],
)
def test_extract_flat_json(text: str, obj: dict[str, object] | None, stored: str) -> None:
    flat = extract_flat_json(text)
    assert (flat.obj, flat.text, flat.format_error) == (obj, stored, obj is None)


def test_parse_first_user_recent() -> None:
    answer = parse_first_user_recent('x {"value": "a", "abstain": false} y {oops}')
    assert (answer.value, answer.abstain, answer.format_error) == ("a", False, False)
    missing = parse_first_user_recent("no object")
    assert missing.format_error and missing.value is None
    assert parse_first_user_recent('{"value": "none"}').abstain


def test_p2_abstain_published_quirk_and_corrected_variant() -> None:
    from compressbench.tpbench.scoring.parse import parse_p2

    text = '{"value": "7 pm", "abstain": "false"}'
    assert parse_p2(text).abstain is True  # published: bool("false") is True
    assert parse_p2(text, json_bool_abstain=True).abstain is False
    assert parse_p2('{"value": "7 pm", "abstain": true}', json_bool_abstain=True).abstain is True
    assert parse_p2('{"value": "n/a", "abstain": false}', json_bool_abstain=True).abstain is True
