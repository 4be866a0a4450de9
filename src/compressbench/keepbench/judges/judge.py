"""A KEEP-Bench judge: compressed contexts in, one verdict row per proposition out.

:class:`KeepJudge` is the machinery every judge shares (shortcuts, calls, rows); what differs
is its :class:`Backend`: :class:`LLMBackend` (a reader asked for JSON verdicts through the
answer cache: ``openai``, ``hf``) or the offline lexical one. With an LLM backend, each call
goes through :func:`~compressbench.readers.structured_run.generate_structured`: cached like
answers (never asked again; a rerun resumes), an unparseable or off-schema verdict asked again
up to ``retries`` times, then kept as a row with ``error`` set and no label. Calls of one
schema share a reader whose ``response_format`` requests that schema.

Row fields: the input's ``carry`` fields, ``case_id``, ``setting``, ``subset``,
``proposition_id``, ``role``, ``group``, ``judgement`` (``yes`` / ``no`` / None on error),
``preserved`` (True / False / None), ``template`` (None for a shortcut), ``field`` (the
verdict field that labelled it), ``shortcut`` (``empty`` / ``placeholder`` / None),
``error``, ``attempts``, ``raw`` (the last reply, only on error), ``cache_key``, ``judge``
(the judge's name), ``approximation`` (True for judges that only approximate entailment) and
the prompt set's ``prompt_version`` / ``prompt_sha256``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from compressbench.keepbench.judges.calls import (
    NO,
    JudgeCall,
    JudgeInput,
    judge_calls,
    shortcut,
)
from compressbench.keepbench.prompts.templates import PromptSet
from compressbench.readers.base import ChatRequest, Reader


@dataclass(frozen=True)
class CallResult:
    """A verdict object (or None) and how it was obtained."""

    value: Mapping[str, Any] | None
    error: str | None = None
    attempts: int = 0
    raw: str | None = None
    cache_key: str | None = None


class Backend(Protocol):
    approximation: bool

    def info(self) -> dict[str, Any]: ...

    def run(
        self, calls: Sequence[JudgeCall], cache: Any, *, progress: bool
    ) -> tuple[list[CallResult], dict[str, int]]: ...


@dataclass
class LLMBackend:
    """Readers (one per verdict schema) asked with the judge templates."""

    readers: Mapping[str, Reader]  # schema name -> reader requesting that schema
    prompts: PromptSet
    style: str
    retries: int = 2
    max_tokens: int = 512
    extra_info: dict[str, Any] = field(default_factory=dict)

    approximation = False

    def info(self) -> dict[str, Any]:
        reader = next(iter(self.readers.values()))
        return {
            "judge_backend": reader.name,
            "judge_model": reader.model_id,
            "judge_revision": reader.revision,
            "judge_base_url": reader.base_url,
            "judge_response_format": self.style,
            "judge_max_tokens": self.max_tokens,
            "judge_retries": self.retries,
            **self.extra_info,
            **self.prompts.record(),
        }

    def request(self, call: JudgeCall, index: int) -> ChatRequest:
        user = self.prompts.render(call.template, **call.values)
        return ChatRequest(f"call-{index}", self.prompts.text("system"), user, self.max_tokens)

    def run(
        self, calls: Sequence[JudgeCall], cache: Any, *, progress: bool
    ) -> tuple[list[CallResult], dict[str, int]]:
        from compressbench.keepbench.judges.calls import SCHEMAS
        from compressbench.readers.structured_run import generate_structured

        if cache is None:
            raise ValueError("an LLM judge needs an answer cache (verdicts are cached)")
        results: list[CallResult | None] = [None] * len(calls)
        stats: dict[str, int] = {}
        for schema_name, reader in self.readers.items():
            idx = [i for i, c in enumerate(calls) if c.schema_name == schema_name]
            if not idx:
                continue
            run = generate_structured(
                reader,
                [self.request(calls[i], i) for i in idx],
                cache,
                SCHEMAS[schema_name],
                retries=self.retries,
                progress=progress,
            )
            for i, r in zip(idx, run.results, strict=True):
                raw = r.raw if r.error is not None else None
                results[i] = CallResult(r.value, r.error, r.attempts, raw, r.cache_key)
            for key, value in run.stats.items():
                stats[key] = stats.get(key, 0) + value
        return [r for r in results if r is not None], stats


@dataclass
class JudgeRun:
    rows: list[dict[str, Any]]
    stats: dict[str, int]
    info: dict[str, Any]


@dataclass
class KeepJudge:
    """A named judge: the shared shortcut/call/row logic around one :class:`Backend`."""

    name: str
    backend: Backend

    def info(self) -> dict[str, Any]:
        return {"judge": self.name, "approximation": self.backend.approximation,
                **self.backend.info()}  # fmt: skip

    def judge(
        self, inputs: Sequence[JudgeInput], cache: Any = None, *, progress: bool = False
    ) -> JudgeRun:
        """One row per proposition of every input, inputs and propositions in order."""
        plans = []
        calls: list[JudgeCall] = []
        for item in inputs:
            cut = shortcut(item.case, item.compressed)
            own = [] if cut else judge_calls(item.case, item.compressed)
            plans.append((item, cut, len(calls), own))
            calls.extend(own)
        results, stats = self.backend.run(calls, cache, progress=progress) if calls else ([], {})
        stats = {"inputs": len(inputs), "calls": len(calls), **stats}
        stats["shortcuts"] = sum(1 for _, cut, _, _ in plans if cut)
        info = self.info()
        rows = []
        for item, cut, start, own in plans:
            labelled: dict[str, dict[str, Any]] = {}
            for call, result in zip(own, results[start : start + len(own)], strict=True):
                for prop_id, verdict_field in call.targets:
                    labelled[prop_id] = _from_call(call, result, verdict_field)
            for p in item.case.propositions:
                verdict = labelled.get(p.id) or _shortcut_verdict(cut)
                rows.append(
                    {
                        **dict(item.carry),
                        "case_id": item.case.case_id,
                        "setting": item.case.setting,
                        "subset": item.case.subset,
                        "proposition_id": p.id,
                        "role": p.role,
                        "group": p.group,
                        **verdict,
                        "judge": self.name,
                        "approximation": info["approximation"],
                        "prompt_version": info.get("prompt_version"),
                        "prompt_sha256": info.get("prompt_sha256"),
                    }
                )
        return JudgeRun(rows, stats, info)


def _verdict(judgement: str | None, **rest: Any) -> dict[str, Any]:
    preserved = None if judgement is None else judgement == "yes"
    return {"judgement": judgement, "preserved": preserved, **rest}


def _shortcut_verdict(cut: str | None) -> dict[str, Any]:
    if cut is None:  # every proposition is some call's target; this is a bug, not input
        raise AssertionError("proposition without a judge call")
    return _verdict(
        NO, template=None, field=None, shortcut=cut, error=None, attempts=0, raw=None,
        cache_key=None,
    )  # fmt: skip


def _from_call(call: JudgeCall, result: CallResult, verdict_field: str) -> dict[str, Any]:
    value = None if result.value is None else result.value.get(verdict_field)
    return _verdict(
        value if result.error is None else None,
        template=call.template,
        field=verdict_field,
        shortcut=None,
        error=result.error,
        attempts=result.attempts,
        raw=result.raw,
        cache_key=result.cache_key,
    )
