"""Score one stored reader output by probe type (the pipeline's scores stage).

A registry maps the probe type to its published parser + scorer (spec §2.1-§2.4); each entry
returns the extracted prediction, the abstain / format-error flags and the scores.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

from compressbench.text.normalize import dataset_key
from compressbench.tpbench.scoring.p1 import score_p1
from compressbench.tpbench.scoring.p2 import score_p2
from compressbench.tpbench.scoring.p3 import score_p3
from compressbench.tpbench.scoring.parse import ParsedAnswer, parse_p1, parse_p2, parse_p3
from compressbench.tpbench.scoring.zh import is_chinese_dataset, score_p1_zh

Scored = dict[str, Any]


def _result(answer: ParsedAnswer, scores: Mapping[str, Any]) -> Scored:
    return {
        "prediction": answer.value,
        "abstain": int(answer.abstain),
        "format_error": int(answer.format_error),
        "scores": dict(scores),
    }


def _p1(text: str, error: bool, row: Mapping[str, Any], corrected: bool) -> Scored:
    answer = parse_p1(text)
    scorer = score_p1_zh if is_chinese_dataset(row["dataset"]) else score_p1
    return _result(answer, asdict(scorer(answer.value, row["gold"], abstain=answer.abstain)))


def _p2(text: str, error: bool, row: Mapping[str, Any], corrected: bool) -> Scored:
    answer = parse_p2(text, json_bool_abstain=corrected)
    s = score_p2(
        answer.value, row["gold"], dataset_key(row["dataset"]), abstain=answer.abstain, error=error
    )
    return _result(answer, {"strict": s.strict, "loose": s.loose})


def _p3(text: str, error: bool, row: Mapping[str, Any], corrected: bool) -> Scored:
    answer = parse_p3(text)
    s = score_p3(answer.value, row["gold_story_label"], row["gold_value"], abstain=answer.abstain)
    return _result(answer, asdict(s))


SCORERS: dict[str, Callable[[str, bool, Mapping[str, Any], bool], Scored]] = {
    "P1": _p1,
    "P2": _p2,
    "P3": _p3,
}


def score_answer(row: Mapping[str, Any], *, corrected_abstain: bool = False) -> Scored:
    """Scores of an answers-stage row (``probe_type``, ``output``, ``error``, golds).

    ``corrected_abstain`` switches P2 from the published ``bool()`` reading of the abstain
    field (``"false"`` abstains) to the JSON-literal reading; P1/P3 already read it that way.
    """
    return SCORERS[row["probe_type"]](row["output"], bool(row.get("error")), row, corrected_abstain)
