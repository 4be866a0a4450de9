"""The ``hf`` KEEP judge on a real (tiny, random) local transformers model: the prompt goes
through the HF reader, replies that are not verdicts are asked again and then recorded as
errors, and a rerun replays every attempt from the cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compressbench.keepbench.cases import case_from_dict
from compressbench.keepbench.compressors.llm_prompt import SAMPLE_FILE
from compressbench.keepbench.judges.calls import JudgeInput
from compressbench.keepbench.judges.registry import get_judge
from compressbench.readers.cache import AnswerCache
from support.tiny_llama import save_tiny_llama, word_tokenizer

pytest.importorskip("torch")
pytestmark = pytest.mark.slow


def test_hf_judge_asks_again_then_records_errors(tmp_path: Path) -> None:
    rows = json.loads(SAMPLE_FILE.read_text(encoding="utf-8"))["cases"]
    case = next(case_from_dict(r) for r in rows if r["case_id"].startswith("sample:science"))
    tokenizer = word_tokenizer([case.query, *case.paragraphs, "judgement yes no"])
    model_dir = save_tiny_llama(tmp_path / "tiny", tokenizer, num_hidden_layers=1)
    judge = get_judge("hf", model=model_dir, device="cpu", max_tokens=6, retries=1)
    inputs = [JudgeInput(case, " ".join(p.text for p in case.propositions))]
    with AnswerCache(tmp_path / "verdicts.sqlite") as cache:
        run = judge.judge(inputs, cache)
        rerun = judge.judge(inputs, cache)
    n = len(case.propositions)
    assert run.stats["calls"] == n and run.stats["model_calls"] == 2 * n  # asked twice each
    assert rerun.stats["model_calls"] == 0 and rerun.rows == run.rows
    for row in run.rows:  # a random word model writes no JSON verdict
        assert row["error"] == "not-json" and row["attempts"] == 2
        assert row["judgement"] is None and row["preserved"] is None
        assert row["template"] == "science" and isinstance(row["raw"], str)
    assert run.info["judge_backend"] == "hf" and run.info["judge_response_format"] == "none"
    assert run.info["judge_model"] == model_dir
