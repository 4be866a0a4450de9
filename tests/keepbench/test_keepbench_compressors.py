"""KEEP-Bench compressors without models: the Method family, budgets K at 0.5x/1x/2x, a TPBench
selector on KEEP sentences, and the prompts each compressor sends (``llm`` with its
demonstrations, BRIEF-Pro, RECOMP-abstractive, EXIT). Model-backed runs (tiny models built
from configs, the offline encoder and reader) are in ``test_keepbench_compressors_models.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compressbench.compress.registry import (
    check_method_params,
    get_method,
    known_methods,
    method_entry,
)
from compressbench.errors import InputError
from compressbench.keepbench.cases import KeepCase, case_from_dict, case_to_dict, sentence_budget
from compressbench.keepbench.compressors.base import keep_source, strip_thinking
from compressbench.keepbench.compressors.brief_pro import brief_prompt
from compressbench.keepbench.compressors.exit import exit_prompt
from compressbench.keepbench.compressors.family import (
    check_keep_method,
    keep_method,
    keep_method_names,
)
from compressbench.keepbench.compressors.llm import LLMCompressor
from compressbench.keepbench.compressors.llm_prompt import SAMPLE_FILE
from compressbench.keepbench.compressors.recomp_abstractive import RecompAbstractive
from compressbench.keepbench.prompts.templates import PACKAGE_DIR
from compressbench.keepbench.sentences import count_sentences
from compressbench.readers.base import ChatRequest

KEEP_NAMES = ["brief_pro", "exit", "llm", "recomp_abstractive", "recomp_extractive"]
SCALES = (0.5, 1.0, 2.0)


@pytest.fixture(scope="module")
def cases() -> list[KeepCase]:
    rows = json.loads(SAMPLE_FILE.read_text(encoding="utf-8"))["cases"]
    return [case_from_dict(r) for r in rows]


def evaluated(cases: list[KeepCase], subset: str) -> list[KeepCase]:
    return [c for c in cases if c.subset == subset and not c.demonstration]


# -- one registry for both benchmarks ----------------------------------------------------------


def test_keep_compressors_resolve_through_the_project_method_registry() -> None:
    assert known_methods(units="sentences") == KEEP_NAMES
    assert not set(KEEP_NAMES) & set(known_methods(units="dialogue_turns"))
    assert set(KEEP_NAMES) <= set(known_methods())
    for name in KEEP_NAMES:
        entry = method_entry(name)
        assert entry is not None and entry.family == "keep_compressor"
    method = get_method("recomp_extractive", {"normalize": True})
    assert method.name == "recomp_extractive" and method.budget_unit == "keep_sentences"
    assert method.family == "keep_compressor" and method.needs_reader is False
    check_method_params("exit", {"adapter": None, "dtype": "bfloat16"})
    with pytest.raises(InputError, match=r"method_params.exit.lora'.*allowed: base, adapter"):
        check_method_params("exit", {"lora": "x"})


def test_keep_method_names_and_parameter_checks() -> None:
    names = keep_method_names()
    assert set(KEEP_NAMES) <= set(names)
    assert {"recency", "embedding_mmr", "llmlingua2", "full_context"} <= set(names)
    assert "first_user_recent" not in names  # reads dialogue roles
    check_keep_method("llm", {"backend": "openai", "model": "m"})
    check_keep_method("embedding_mmr", {"trade_off": 0.3})
    with pytest.raises(InputError, match=r"field 'keepbench.compressors'.*unknown KEEP"):
        check_keep_method("first_user_recent")
    with pytest.raises(InputError, match=r"keepbench.compressors.llm.temprature"):
        check_keep_method("llm", {"temprature": 0})
    with pytest.raises(KeyError, match="reads dialogue roles"):
        from compressbench.keepbench.compressors.selectors import SentenceSelectorMethod

        SentenceSelectorMethod.build("first_user_recent", {})


# -- a TPBench selector on KEEP sentences ------------------------------------------------------


@pytest.mark.parametrize("scale", SCALES)
def test_recency_keeps_the_last_k_sentences_of_a_keep_case(cases, scale) -> None:
    method = keep_method("recency")
    for case in cases:
        source = keep_source(case)
        k = sentence_budget(case, scale)
        comp = method.compress(source, scale)
        n = len(source.units)
        expected = list(range(max(0, n - k), n))
        assert list(comp.kept_ids) == expected
        assert comp.text == " ".join(source.units[i].text for i in expected)
        assert comp.kept_text == "\n".join(source.units[i].text for i in expected)
        assert (comp.budget, comp.n_units, comp.budget_unit) == (k, n, "keep_sentences")
        assert comp.record["family"] == "turn_selector_on_sentences"
        assert json.loads(json.dumps(comp.record)) == comp.record
        prompt = lambda t: ChatRequest("r", "", t)  # noqa: E731
        assert method.retained_text(source, scale, prompt, None) == comp.text
        cost = method.cost(comp, case.context, None)
        assert cost.kept_turns == len(expected) and cost.n_turns == n


def test_budgets_pin_the_paper(cases) -> None:
    """K = 2h (parallel/conditional) or 2n+1 (imbalanced), the hop/perspective term scaled:
    the two-hop case study allows 4 sentences (C.3)."""
    two_hop = next(c for c in cases if c.setting == "parallel" and c.hops == 2)
    assert [sentence_budget(two_hop, s) for s in SCALES] == [2, 4, 8]
    four = next(c for c in cases if c.subset == "policy" and c.perspectives == 4)
    assert [sentence_budget(four, s) for s in SCALES] == [5, 9, 17]


# -- llm: instruction, demonstrations at their own budgets, the case's K ------------------------


def test_llm_request_has_instruction_demonstrations_and_the_cases_budget(cases) -> None:
    method = LLMCompressor(max_new_tokens=77)
    prompts = method.prompts
    for subset in ("parallel", "conditional", "science", "policy"):
        case = evaluated(cases, subset)[0]
        demo = next(c for c in cases if c.demonstration and c.subset == subset)
        for scale in SCALES:
            k = sentence_budget(case, scale)
            req = method.request(keep_source(case), k)
            assert req.max_new_tokens == 77 and req.id == case.case_id
            assert req.system.startswith(prompts.text(f"system_{case.setting}"))
            # the demonstration at its own default budget, with its reference answer
            own = sentence_budget(demo, 1.0)
            assert demo.reference_compression in req.system
            assert f"Compress the context for this question into at most {own} sentences." in (
                req.system
            )
            assert demo.query in req.system and case.query not in req.system
            assert req.user == prompts.render(
                "user", QUESTION=case.query, CONTEXT=case.context, K=k
            )
            assert req.user.endswith(f"into at most {k} sentences.")
    # one prefix per subset: every case of the subset gets the same system message
    parallel = evaluated(cases, "parallel")
    systems = {method.request(keep_source(c), 4).system for c in parallel}
    assert len(systems) == 1
    record = method.describe()
    assert record["prompt_version"] == "v1" and record["thinking"] is False
    assert len(record["prompt_sha256"]) == 64


def test_llm_demonstrations_never_include_the_case_and_can_be_turned_off(
    cases, tmp_path: Path
) -> None:
    demo = next(c for c in cases if c.demonstration and c.subset == "science")
    pool = tmp_path / "pool.jsonl"
    pool.write_text(json.dumps(case_to_dict(demo)) + "\n", encoding="utf-8")
    with_pool = LLMCompressor(demonstrations=str(pool))
    assert "Example 1" not in with_pool.request(keep_source(demo), 7).system  # itself
    other = evaluated(cases, "science")[0]
    assert "### Example 1" in with_pool.request(keep_source(other), 7).system
    no_icl = LLMCompressor(max_demonstrations=0)
    assert no_icl.request(keep_source(other), 7).system == no_icl.prompts.text("system_imbalanced")
    assert no_icl.describe()["icl"] is False
    suffixed = LLMCompressor(no_think_suffix="/no_think")
    assert suffixed.request(keep_source(other), 7).user.endswith("sentences. /no_think")


def test_a_demonstration_over_its_own_budget_is_bad_input(cases, tmp_path: Path) -> None:
    demo = next(c for c in cases if c.demonstration and c.subset == "parallel")
    row = case_to_dict(demo)
    row["reference_compression"] = " ".join(["It rains."] * (sentence_budget(demo) + 1))
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    method = LLMCompressor(demonstrations=str(path))
    case = evaluated(cases, "parallel")[0]
    with pytest.raises(InputError, match=r"field 'reference_compression'.*over its own budget"):
        method.request(keep_source(case), 4)
    row["reference_compression"] = ""
    path.write_text(json.dumps(row) + "\n" + " " * 8, encoding="utf-8")  # a new file version
    with pytest.raises(InputError, match="without a reference compression"):
        method.request(keep_source(case), 4)
    with pytest.raises(InputError, match="demonstration file does not exist"):
        LLMCompressor(demonstrations=str(path) + "x").request(keep_source(case), 4)


def test_sample_demonstrations_fit_their_own_budgets(cases) -> None:
    demos = [c for c in cases if c.demonstration]
    assert {d.subset for d in demos} == {"parallel", "conditional", "science", "policy"}
    for demo in demos:
        assert 0 < count_sentences(demo.reference_compression) <= sentence_budget(demo)


def test_replacement_compression_prompts_are_used_and_recorded(cases, tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "official"
    shutil.copytree(PACKAGE_DIR / "compress" / "v1", folder)
    (folder / "user.txt").write_text("Q={{QUESTION}} K={{K}}\n{{CONTEXT}}", encoding="utf-8")
    method = LLMCompressor(prompt_dir=str(folder), max_demonstrations=0)
    case = evaluated(cases, "conditional")[0]
    assert method.request(keep_source(case), 3).user == f"Q={case.query} K=3\n{case.context}"
    assert method.describe()["prompt_version"] == "custom:official"


def test_thinking_blocks_are_removed() -> None:
    assert strip_thinking("<think>hmm\nok</think>\nA. B.") == "A. B."
    assert strip_thinking("A. <think>unfinished") == "A."
    assert strip_thinking("  plain  ") == "plain"


# -- the dedicated compressors' prompts --------------------------------------------------------


def test_dedicated_prompts(cases) -> None:
    case = evaluated(cases, "parallel")[0]
    brief = brief_prompt(case.query, list(case.paragraphs), 4)
    assert brief.startswith(
        "Write a high-quality summary of the provided documents with respect to the question.\n"
    )
    for section in ("### This is the question:", "### These are the documents:",
                    "### This is the summary:"):  # fmt: skip
        assert section in brief
    assert "<|reserved_special_token_100|>4<|reserved_special_token_101|>" in brief
    req = RecompAbstractive().request(keep_source(case), 4)
    assert req.user == f"Question: {case.query}\n Document: {' '.join(case.paragraphs)}\n Summary: "
    assert req.system == "" and req.max_new_tokens == 512
    prompt = exit_prompt("q?", "Doc one. Doc two.", "Doc two.")
    assert prompt.startswith("<start_of_turn>user\nQuery:\nq?\nFull context:\nDoc one. Doc two.")
    assert prompt.endswith("<end_of_turn>\n<start_of_turn>model\n")
