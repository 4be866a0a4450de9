"""KEEP-Bench judges without a server: which prompt labels which proposition (D.2), the
no-call shortcuts, the verdict schemas, the versioned templates and the lexical approximation.
The ``openai`` judge against a real server is in ``test_keepbench_judges_server.py``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from compressbench.errors import InputError
from compressbench.keepbench.cases import KeepCase, case_from_dict
from compressbench.keepbench.judges.calls import (
    CONDITION_SCHEMA,
    ORDINARY_SCHEMA,
    PLACEHOLDER,
    JudgeInput,
    judge_calls,
    shortcut,
)
from compressbench.keepbench.judges.lexical import MODEL_LABEL, coverage
from compressbench.keepbench.judges.registry import check_judge, get_judge, judge_names
from compressbench.keepbench.prompts.templates import (
    PACKAGE_DIR,
    REQUIRED,
    fill,
    load_prompts,
    packaged_versions,
)
from compressbench.readers.structured import parse_object
from compressbench.text.tokens import overlap_tokens

SAMPLE = PACKAGE_DIR.parent / "data" / "sample_cases.json"


@pytest.fixture(scope="module")
def cases() -> dict[str, KeepCase]:
    rows = json.loads(SAMPLE.read_text(encoding="utf-8"))["cases"]
    return {c.case_id: c for c in (case_from_dict(r) for r in rows)}


def first(cases: dict[str, KeepCase], subset: str) -> KeepCase:
    return next(c for c in cases.values() if c.subset == subset and not c.demonstration)


# -- which call labels which proposition ------------------------------------------------------


def test_parallel_calls_send_constraints_only_for_ambiguous_propositions(cases) -> None:
    case = first(cases, "parallel")
    calls = judge_calls(case, "some text")
    assert [t for c in calls for t, _ in c.targets] == list(case.proposition_ids)
    for call, prop in zip(calls, case.propositions, strict=True):
        assert call.values["PROPOSITION"] == prop.text
        if prop.involves_ambiguous_entity:
            assert call.template == "parallel"
            constraints = json.loads(call.values["CONSTRAINTS_JSON"])
            assert constraints == [
                {"ambiguous_entity": m.mention, "unambiguous_alternatives": list(m.referents)}
                for m in case.ambiguous_mentions
            ]
        else:
            assert call.template == "entailment" and "CONSTRAINTS_JSON" not in call.values
    assert {c.template for c in calls} == {"parallel", "entailment"}  # the sample has both


def test_conditional_condition_and_its_hop_share_one_condition_aware_call(cases) -> None:
    case = first(cases, "conditional")
    cond = case.condition
    assert cond is not None
    calls = judge_calls(case, "text")
    assert calls[0].template == "condition"
    assert calls[0].targets == (
        (cond.proposition_id, "condition_judgement"),
        (cond.conditioned_hop_id, "overall_judgement"),
    )
    assert calls[0].values["CONDITION"] == case.proposition(cond.proposition_id).text
    assert calls[0].values["GENERAL_PROPOSITION"] == case.proposition(cond.conditioned_hop_id).text
    others = [p.id for p in case.propositions if p.id not in (cond.proposition_id,
              cond.conditioned_hop_id)]  # fmt: skip
    assert [c.targets for c in calls[1:]] == [((p, "judgement"),) for p in others]
    assert {c.template for c in calls[1:]} == {"entailment"}
    # h + 1 propositions labelled by h calls
    assert len(calls) == len(case.propositions) - 1
    assert calls[0].schema_name == "keep_condition_judgement"


@pytest.mark.parametrize(("subset", "template"), [("science", "science"), ("policy", "policy")])
def test_imbalanced_calls_carry_question_and_perspective(cases, subset, template) -> None:
    case = first(cases, subset)
    calls = judge_calls(case, "text")
    assert [c.template for c in calls] == [template] * len(case.propositions)
    for call, prop in zip(calls, case.propositions, strict=True):
        assert call.values["QUESTION"] == case.query and call.values["PERSPECTIVE"] == prop.text
        assert call.values["JURISDICTION"] == prop.jurisdiction
    prompts = load_prompts("judge")
    rendered = prompts.render(template, **calls[0].values)
    assert ("[Policy only]" in rendered) == (subset == "policy")
    if subset == "policy":
        assert case.propositions[0].jurisdiction in rendered


# -- shortcuts ---------------------------------------------------------------------------------


def test_shortcuts_follow_the_paper(cases) -> None:
    science, parallel = first(cases, "science"), first(cases, "parallel")
    assert shortcut(science, "") == "empty" and shortcut(parallel, "  \n ") == "empty"
    assert shortcut(science, PLACEHOLDER) == "placeholder"
    curly = "  This passage doesn\u2019t contain relevant\ninformation to the question. "
    assert shortcut(first(cases, "policy"), curly) == "placeholder"
    # the placeholder rule is the imbalanced setting's (D.2); elsewhere it is judged
    assert shortcut(parallel, PLACEHOLDER) is None
    assert shortcut(science, PLACEHOLDER + " Also, storms matter.") is None


def test_shortcut_rows_are_no_without_any_call(cases) -> None:
    """An LLM judge pointed at a closed port: shortcut inputs never reach it."""
    judge = get_judge(
        "openai", model="nobody", base_url="http://127.0.0.1:9/v1", reasoning_effort=None
    )
    science, parallel = first(cases, "science"), first(cases, "parallel")
    inputs = [
        JudgeInput(science, PLACEHOLDER, {"compressor": "x"}),
        JudgeInput(parallel, "", {"compressor": "x"}),
    ]
    run = judge.judge(inputs, cache=None)
    assert run.stats["calls"] == 0 and run.stats["shortcuts"] == 2
    n = len(science.propositions) + len(parallel.propositions)
    assert len(run.rows) == n
    assert {r["judgement"] for r in run.rows} == {"no"} and {r["preserved"] for r in run.rows} == {
        False
    }
    assert [r["shortcut"] for r in run.rows] == ["placeholder"] * len(science.propositions) + [
        "empty"
    ] * len(parallel.propositions)
    assert all(r["compressor"] == "x" and r["template"] is None for r in run.rows)


# -- schemas -----------------------------------------------------------------------------------


def test_verdict_schemas_take_only_the_papers_fields() -> None:
    assert parse_object('{"judgement": "yes"}', ORDINARY_SCHEMA).value == {"judgement": "yes"}
    assert parse_object('Sure: {"judgement": "no"}', ORDINARY_SCHEMA).ok
    for bad in ('{"judgment": "yes"}', '{"judgement": "maybe"}', '{"judgement": "Yes"}',
                '{"judgement": "yes", "why": "x"}', "yes"):  # fmt: skip
        assert not parse_object(bad, ORDINARY_SCHEMA).ok, bad
    both = '{"condition_judgement": "no", "overall_judgement": "no"}'
    assert parse_object(both, CONDITION_SCHEMA).ok
    assert not parse_object('{"condition_judgement": "no"}', CONDITION_SCHEMA).ok


# -- templates ---------------------------------------------------------------------------------


def test_packaged_templates_load_and_policy_is_science_plus_three_rules() -> None:
    for kind in REQUIRED:
        assert "v1" in packaged_versions(kind)
        prompts = load_prompts(kind)
        assert set(prompts.texts) == set(REQUIRED[kind])
        assert prompts.record()["prompt_version"] == "v1"
    judge = load_prompts("judge")
    science = judge.text("science").splitlines()
    policy = judge.text("policy").splitlines()
    added = [line for line in policy if line not in science]
    assert len(added) == 3 and all(line.startswith("- [Policy only]") for line in added)
    assert [line for line in policy if line in science] == science
    for name in ("entailment", "parallel", "science", "policy"):
        assert '{"judgement": "yes"}' in judge.text(name)  # the paper's spelling
    assert '"condition_judgement"' in judge.text("condition")
    assert '"overall_judgement"' in judge.text("condition")


def test_fill_is_one_pass_and_strict() -> None:
    assert fill("a {{X}} b", {"X": "{{Y}}"}) == "a {{Y}} b"
    with pytest.raises(InputError, match="no value for placeholder"):
        fill("{{X}} {{Y}}", {"X": 1})


def test_a_replacement_folder_is_checked_and_recorded(tmp_path: Path) -> None:
    official = tmp_path / "appendix_e"
    shutil.copytree(PACKAGE_DIR / "judge" / "v1", official)
    (official / "entailment.txt").write_text("Is {{PROPOSITION}} in {{COMPRESSED_CONTEXT}}?")
    prompts = load_prompts("judge", prompt_dir=official)
    assert prompts.version == "custom:appendix_e"
    assert prompts.sha256 != load_prompts("judge").sha256
    assert prompts.render("entailment", PROPOSITION="p", COMPRESSED_CONTEXT="c") == "Is p in c?"
    (official / "entailment.txt").write_text("Is {{PROPOSITION}} true?")
    with pytest.raises(InputError, match=r"lacks .*COMPRESSED_CONTEXT"):
        load_prompts("judge", prompt_dir=official)
    (official / "entailment.txt").write_text("{{PROPOSITION}} {{COMPRESSED_CONTEXT}} {{TYPO}}")
    with pytest.raises(InputError, match=r"unknown placeholder .*TYPO"):
        load_prompts("judge", prompt_dir=official)
    (official / "entailment.txt").unlink()
    with pytest.raises(InputError, match=r"missing template entailment\.txt"):
        load_prompts("judge", prompt_dir=official)
    with pytest.raises(InputError, match="unknown judge prompt version 'v9'"):
        load_prompts("judge", "v9")


# -- the lexical approximation -----------------------------------------------------------------


def test_coverage_counts_content_tokens() -> None:
    tokens = overlap_tokens("Venner was born in Calvask, a mill town.")
    assert coverage("Oda Venner was born in Calvask.", tokens) == pytest.approx(3 / 4)
    assert coverage("the of and", tokens) == 1.0  # nothing to find


def test_lexical_judge_rules_and_labels(cases) -> None:
    judge = get_judge("lexical")
    parallel, conditional = first(cases, "parallel"), first(cases, "conditional")
    policy = first(cases, "policy")
    cond = conditional.condition
    assert cond is not None
    general = conditional.proposition(cond.conditioned_hop_id).text
    p0 = policy.propositions[0]
    no_jurisdiction = " ".join(
        w for w in p0.text.split() if w.strip(",.").lower() not in overlap_tokens(p0.jurisdiction)
    )
    inputs = [
        JudgeInput(parallel, " ".join(p.text for p in parallel.propositions)),
        JudgeInput(conditional, general),  # the general fact without its condition
        JudgeInput(policy, no_jurisdiction),
    ]
    run = judge.judge(inputs)
    by = {(r["case_id"], r["proposition_id"]): r for r in run.rows}
    assert all(by[(parallel.case_id, p.id)]["judgement"] == "yes" for p in parallel.propositions)
    assert by[(conditional.case_id, cond.conditioned_hop_id)]["judgement"] == "no"
    assert by[(conditional.case_id, cond.conditioned_hop_id)]["field"] == "overall_judgement"
    assert by[(policy.case_id, p0.id)]["judgement"] == "no"  # jurisdiction not identified
    assert run.info["approximation"] is True and run.info["judge_model"] == MODEL_LABEL
    assert all(r["approximation"] is True and r["judge"] == "lexical" for r in run.rows)
    assert run.stats["model_calls"] == 0


def test_judges_by_name_and_bad_parameters() -> None:
    assert judge_names() == ["hf", "lexical", "openai"]
    check_judge("openai", {"model": "m", "reasoning_effort": None})
    with pytest.raises(InputError, match=r"unknown judge 'gpt'.*allowed: hf, lexical, openai"):
        check_judge("gpt")
    with pytest.raises(InputError, match=r"field 'keepbench.judge_params.treshold'"):
        check_judge("lexical", {"treshold": 0.5})
    with pytest.raises(ValueError, match="threshold"):
        get_judge("lexical", threshold=0)
