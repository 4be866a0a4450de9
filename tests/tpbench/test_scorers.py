"""Pins the scoring rules of spec §2.2-§2.5 on their worked examples and consequences."""

from __future__ import annotations

import pytest

from compressbench.tpbench.scoring.lme import gold_variants, score_lme, score_lme_text
from compressbench.tpbench.scoring.p1 import P1Scores, score_p1, score_p1_text
from compressbench.tpbench.scoring.p2 import score_p2, score_p2_text
from compressbench.tpbench.scoring.p3 import Segments, score_p3, score_p3_text, split_answer
from compressbench.tpbench.scoring.zh import score_p1_zh, score_p1_zh_text

# ---------------------------------------------------------------- P1 (§2.2)


@pytest.mark.parametrize(
    ("gold", "pred", "strict", "loose", "f1"),
    [
        ("Could you help me find a doctor", "find a doctor", 0, 1, 2 / 3),
        ("I want to find an events in SD", "find an event", 0, 0, 0.0),
        ("I'm in the mood to go do something in Vancouver", "find things to do", 0, 0, 0.0),
        ("Hi", "hi there", 0, 1, 2 / 3),
        ("Book a table at an Italian restaurant", "book italian restaurant", 1, 1, 0.857142857),
        ("Hi, I am looking for a restaurant", "find a restaurant", 0, 1, 0.5),
    ],
)
def test_p1_worked_examples(gold: str, pred: str, strict: int, loose: int, f1: float) -> None:
    scores = score_p1(pred, gold)
    assert (scores.strict, scores.loose) == (strict, loose)
    assert scores.token_f1 == pytest.approx(f1)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"prediction": "help doctor", "abstain": True},
        {"prediction": "help doctor", "error": True},
        {"prediction": ""},
        {"prediction": None},
    ],
)
def test_p1_abstain_error_empty_score_zero(kwargs: dict[str, object]) -> None:
    pred = kwargs.pop("prediction")
    assert score_p1(pred, "help me find a doctor", **kwargs) == P1Scores(0, 0, 0.0)  # type: ignore[arg-type]


def test_p1_from_text() -> None:
    gold = "Could you help me find a doctor"
    assert score_p1_text('{"value": "help with a doctor"}', gold).strict == 1
    assert score_p1_text('{"value": "help with a doctor", "abstain": true}', gold).loose == 0
    assert score_p1_text("help with a doctor", gold).loose == 0  # no JSON -> abstain


def test_p1_zh() -> None:
    scores = score_p1_zh("找餐厅", "我想找一个餐厅")
    assert (scores.strict, scores.loose) == (1, 1)
    assert scores.token_f1 == pytest.approx(2 * 1 * (3 / 7) / (1 + 3 / 7))
    assert score_p1_zh("找餐厅", "我想找一个餐厅", abstain=True).strict == 0
    assert score_p1_zh_text('{"value": "酒店"}', "我想找一个餐厅").loose == 0
    assert score_p1("找餐厅", "我想找一个餐厅").loose == 0  # Latin tokeniser sees nothing


# ---------------------------------------------------------------- P2 (§2.3)


@pytest.mark.parametrize(
    ("pred", "gold", "dataset", "strict", "loose"),
    [
        ("Italian food", "italian", "sgd", 0, 1),
        ("March 12th at 2 pm", "14:00", "sgd", 0, 1),
        ("4th", "March 4th", "sgd", 0, 0),
        ("Philly", "Philadelphia", "sgd", 0, 0),
        ("5:15 pm", "17:15", "sgd", 1, 1),
        ("2 pm", '2 o"clock in the afternoon', "sgd", 0, 0),
        ("12 minutes", "12 pm", "sgd", 0, 0),
        ("Asian oriental food", "asian", "multiwoz", 0, 1),
        ("guesthouse", "guest house", "mw_r30", 1, 1),
        ("guesthouse", "guest house", "sgd", 0, 0),
        ("the centre", "center", "MultiWOZ", 0, 1),
        ("12:45 pm", "12:45", "sgd", 1, 1),
        ("Fairfield", "fairfield", "sgd", 1, 1),
        ("2", "20", "sgd", 0, 0),
        ("", "", "sgd", 0, 0),
    ],
)
def test_p2_direction_and_normalisation(
    pred: str, gold: str, dataset: str, strict: int, loose: int
) -> None:
    scores = score_p2(pred, gold, dataset)
    assert (scores.strict, scores.loose) == (strict, loose)


@pytest.mark.parametrize("pred", [14, 14.0, ["14:00"], {"value": "14:00"}, None, True])
def test_p2_non_string_values_never_correct(pred: object) -> None:
    scores = score_p2(pred, "14:00", "sgd")
    assert (scores.strict, scores.loose) == (0, 0)


@pytest.mark.parametrize("pred", ["", "unknown", "N/A", " none ", "UNKNOWN"])
def test_p2_abstaining_value_strings(pred: str) -> None:
    scores = score_p2(pred, "none", "sgd")
    assert (scores.strict, scores.loose, scores.abstain) == (0, 0, 1)


def test_p2_model_abstain_and_error() -> None:
    assert score_p2("hotel", "hotel", "sgd", abstain=True).strict == 0
    assert score_p2("hotel", "hotel", "sgd").strict == 1
    err = score_p2("hotel", "hotel", "sgd", error=True)
    assert (err.strict, err.loose, err.norm_pred, err.norm_gold, err.abstain) == (0, 0, "", "", 0)


def test_p2_overlap_diagnostics() -> None:
    s = score_p2("Italian food please", "italian food", "sgd")
    assert (s.overlap_strict, s.overlap_loose) == (1, 1)
    s = score_p2("italian", "nightclub", "sgd")
    assert (s.overlap_strict, s.overlap_loose) == (0, 0)
    s = score_p2("nightclub", "nightclub", "sgd")
    assert (s.overlap_strict, s.overlap_loose) == (0, 1)  # |T(gold)| < 2
    s = score_p2("大众CC", "大众CC", "risawoz")
    assert (s.strict, s.overlap_strict, s.overlap_loose, s.norm_pred) == (1, 0, 1, "大众cc")


def test_p2_from_text() -> None:
    assert score_p2_text('{"value": "5:15 pm"}', "17:15", "sgd").strict == 1
    assert score_p2_text('{"value": "5:15 pm", "abstain": "false"}', "17:15", "sgd").strict == 0
    assert score_p2_text('{"value": "5:15 pm"}', "17:15", "sgd", error="no-json").loose == 0
    assert score_p2_text("5:15 pm", "17:15", "sgd").loose == 0


# ---------------------------------------------------------------- P3 (§2.4)


@pytest.mark.parametrize(
    ("pred", "expected"),
    [
        ("book a hotel; time: 12:30 pm", Segments("book a hotel", "time", "12:30 pm")),
        ("  book ;  area :  east  ", Segments("book", "area", "east")),
        ("task; 12:45 pm", Segments("task", "12", "45 pm")),
        ("book a hotel", None),
        ("; area: east", None),
        ("book; east", None),
        ("book; area:", None),
        ("book; : east", None),
        ("book; area: east; extra", None),
        ("Find sports events; train leaveat: ", None),
        ("Book a taxi and pickup time: 3:30 pm", None),
        ("Book a taxi on March 2nd. dropoff date: March 2nd", None),
        ("", None),
    ],
)
def test_split_answer(pred: str, expected: Segments | None) -> None:
    assert split_answer(pred) == expected


def test_p3_value_loose_floor_rule() -> None:
    # gold "11 am": V={11, am}, threshold max(1, 1) = 1 -> "10:45 am" is loose via "am"
    s = score_p3("book a table; time: 10:45 am", "book a table", "11 am")
    assert (s.value_strict, s.value_loose, s.strict, s.loose) == (0, 1, 0, 1)
    # gold "12:45 PM": V={12, 45, pm}, threshold 1 -> "12:45" loose, not strict
    s = score_p3("book a table; time: 12:45", "book a table", "12:45 PM")
    assert (s.value_strict, s.value_loose) == (0, 1)
    # no time normalisation in P3-strict
    s = score_p3("book a table; time: 14:00", "book a table", "2 pm")
    assert (s.value_strict, s.value_loose) == (0, 0)
    s = score_p3("book a table; time: 12:00", "book a table", "12 pm")
    assert (s.value_strict, s.value_loose) == (0, 1)  # via the shared token "12"
    s = score_p3("book a table; time: 12:45 pm", "book a table", "12:45 PM")
    assert (s.value_strict, s.value_loose, s.strict) == (1, 1, 1)


def test_p3_goal_is_one_shared_token() -> None:
    s = score_p3("book a restaurant; food: thai", "book a train from norwich to cambridge", "thai")
    assert (s.goal, s.strict, s.loose) == (1, 1, 1)
    s = score_p3("find a place; food: thai", "I'm looking for a train", "thai")
    assert (s.goal, s.strict, s.whole_goal) == (0, 0, 0)


def test_p3_unparseable_scores_zero_locally_but_not_whole_field() -> None:
    s = score_p3("book a train to cambridge leaving at 17:45", "i need a train", "17:45")
    assert (s.parsed, s.goal, s.value_strict, s.strict, s.loose) == (0, 0, 0, 0, 0)
    assert (s.whole_goal, s.whole_value_strict, s.whole_strict, s.whole_loose) == (1, 1, 1, 1)
    assert s.whole_token_f1 == pytest.approx(2 / 3)  # {train, 17, 45} vs 6 tokens


def test_p3_segment_local_uses_the_value_segment_only() -> None:
    s = score_p3("book a train to cambridge; destination: london", "i need a train", "cambridge")
    assert (s.parsed, s.goal, s.value_strict, s.strict) == (1, 1, 0, 0)
    assert (s.whole_value_strict, s.whole_strict) == (1, 1)


@pytest.mark.parametrize(
    "kwargs", [{"abstain": True}, {"error": True}, {"prediction_override": ""}]
)
def test_p3_abstain_error_empty(kwargs: dict[str, object]) -> None:
    pred = str(kwargs.pop("prediction_override", "book a train; leaveat: 17:45"))
    s = score_p3(pred, "i need a train", "17:45", **kwargs)  # type: ignore[arg-type]
    assert all(v == 0 for v in vars(s).values())


def test_p3_from_text() -> None:
    text = 'Here: {"value": "book a train; train leaveat: 17:45", "abstain": false}'
    assert score_p3_text(text, "i need a train", "17:45").strict == 1
    assert score_p3_text("book a train; leaveat: 17:45", "i need a train", "17:45").parsed == 0


# ---------------------------------------------------------------- LME-KU (§2.5)


@pytest.mark.parametrize(
    ("gold", "variants"),
    [
        ("Paris (or Lyon)", ("Paris (or Lyon)", "Lyon", "Paris")),
        ("the blue car (navy).", ("the blue car (navy).", "navy", "the blue car")),
        ("25", ("25",)),
        ("a (b) (or c)", ("a (b) (or c)", "b", "c", "a")),
    ],
)
def test_lme_gold_variants(gold: str, variants: tuple[str, ...]) -> None:
    assert gold_variants(gold) == variants


@pytest.mark.parametrize(
    ("pred", "gold", "strict", "loose"),
    [
        ("25", "25", 1, 1),
        ("4", "5", 0, 0),
        (4, "4", 1, 1),  # numbers are str()-ed
        ("Lyon", "Paris (or Lyon)", 1, 1),
        ("paris, france", "Paris (or Lyon)", 1, 1),  # phrase of the outer variant
        ("$25", "25 dollars", 1, 1),  # number rule: no letters, same numbers
        ("25 or 30", "25 dollars", 0, 1),  # letters block the number rule; loose via "25"
        ("9 a.m.", "9:00 am", 1, 1),
        ("red blue", "red blue green", 0, 1),  # ceil(3/2) = 2
        ("red", "red blue green", 0, 0),  # P3's floor would accept this
        ("red blue", "red blue green yellow", 0, 1),  # ceil(4/2) = 2
        ("in a closet", "under my bed", 0, 0),
        (
            "4",
            "When you just started your new role as Senior Software Engineer, you led 4 "
            "engineers. Now, you lead 5 engineers",
            0,
            0,
        ),
    ],
)
def test_lme_rules(pred: object, gold: str, strict: int, loose: int) -> None:
    s = score_lme(pred, gold)
    assert (s.strict, s.loose) == (strict, loose)


@pytest.mark.parametrize("pred", [None, True, False, "", "unknown", "N/A", "None"])
def test_lme_abstaining_predictions(pred: object) -> None:
    s = score_lme(pred, "none")
    assert (s.strict, s.loose, s.abstain) == (0, 0, 1)


def test_lme_flags_and_text() -> None:
    assert score_lme("25", "25", abstain=True).strict == 0
    assert score_lme("25", "25", error=True).loose == 0
    assert score_lme_text('{"value": 25}', "25").strict == 1
    assert score_lme_text("25", "25").strict == 0  # whole text parses, but not to a dict
    assert score_lme_text('{"value": 25}', "25", error="no-json").strict == 0


def test_pipeline_scoring_corrected_abstain_is_opt_in() -> None:
    from compressbench.tpbench.scoring.answers import score_answer

    row = {
        "probe_type": "P2",
        "output": '{"value": "7 pm", "support": "", "abstain": "false"}',
        "error": None,
        "dataset": "sgd",
        "gold": "7 pm",
    }
    assert score_answer(row)["scores"]["strict"] == 0
    assert score_answer(row, corrected_abstain=True)["scores"]["strict"] == 1
