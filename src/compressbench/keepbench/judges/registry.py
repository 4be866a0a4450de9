"""KEEP-Bench judges by name: ``openai``, ``hf``, ``lexical`` (``get_judge(name, **params)``).

A judge is a factory with named parameters (validated by :func:`check_judge` from the
signature, without building anything); a new judge is one factory here or one file plus one
``@register_judge`` line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from compressbench.keepbench.judges.judge import KeepJudge, LLMBackend
from compressbench.keepbench.judges.lexical import LexicalBackend
from compressbench.keepbench.prompts.templates import load_prompts
from compressbench.readers.defaults import DEFAULT_MAX_INPUT_TOKENS
from compressbench.registry import Registry

JudgeFactory = Callable[..., KeepJudge]
JUDGES: Registry[JudgeFactory] = Registry("judge")
register_judge = JUDGES.register
judge_names = JUDGES.names

# The paper's judge (D.1): GPT-5.2, reasoning effort high, API defaults otherwise.
PAPER_JUDGE_MODEL = "gpt-5.2"
PAPER_REASONING_EFFORT = "high"


@register_judge("openai")
def openai_judge(
    model: str = PAPER_JUDGE_MODEL,
    base_url: str | None = None,
    api_key: str | None = None,
    reasoning_effort: str | None = PAPER_REASONING_EFFORT,
    temperature: float | None = None,
    token_param: str = "max_completion_tokens",
    response_format: str = "json_schema",
    max_tokens: int = 16384,
    retries: int = 2,
    concurrency: int = 4,
    timeout: float = 600.0,
    revision: str | None = None,
    prompt_version: str = "v1",
    prompt_dir: str | None = None,
) -> KeepJudge:
    """A judge on any OpenAI-compatible server (``timeout``: seconds per HTTP request).
    Defaults = the paper's judge on OpenAI; a local server takes ``reasoning_effort=None``,
    ``temperature=0``, ``token_param="max_tokens"`` and (llama_cpp.server)
    ``response_format="json_object"``."""
    from compressbench.keepbench.judges.calls import SCHEMAS
    from compressbench.keepbench.judges.openai_reader import JudgeOpenAIReader
    from compressbench.readers.structured import response_format as build_format

    readers = {
        name: JudgeOpenAIReader(
            model,
            base_url=base_url,
            api_key=api_key,
            revision=revision,
            concurrency=concurrency,
            timeout=timeout,
            reasoning_effort=reasoning_effort,
            temperature=temperature,
            token_param=token_param,
            response_format=build_format(response_format, name, schema),
        )
        for name, schema in SCHEMAS.items()
    }
    backend = LLMBackend(
        readers,
        load_prompts("judge", prompt_version, prompt_dir),
        response_format,
        retries=retries,
        max_tokens=max_tokens,
        extra_info={"judge_reasoning_effort": reasoning_effort, "judge_temperature": temperature},
    )
    return KeepJudge("openai", backend)


@register_judge("hf")
def hf_judge(
    model: str | None = None,
    dtype: str = "float32",
    device: str = "auto",
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
    batch_size: int = 1,
    max_tokens: int = 64,
    retries: int = 2,
    prompt_version: str = "v1",
    prompt_dir: str | None = None,
) -> KeepJudge:
    """A local transformers judge (greedy; the prompt alone asks for JSON). ``model`` None =
    the offline SmolLM2-135M-Instruct (which is no judge: it runs the machinery)."""
    from compressbench.keepbench.judges.calls import SCHEMAS
    from compressbench.readers.registry import get_reader

    reader = get_reader(
        "hf",
        model=model,
        dtype=dtype,
        device=device,
        max_input_tokens=max_input_tokens,
        batch_size=batch_size,
    )
    backend = LLMBackend(
        dict.fromkeys(SCHEMAS, reader),
        load_prompts("judge", prompt_version, prompt_dir),
        "none",
        retries=retries,
        max_tokens=max_tokens,
    )
    return KeepJudge("hf", backend)


@register_judge("lexical")
def lexical_judge(threshold: float = 0.75) -> KeepJudge:
    """The offline content-token coverage approximation (no model)."""
    return KeepJudge("lexical", LexicalBackend(threshold))


def check_judge(
    name: Any,
    params: Mapping[str, Any] | None = None,
    *,
    source: str = "params.yaml",
    field: str = "keepbench.judge",
) -> None:
    """InputError naming ``source`` and the field unless ``name`` and ``params`` are valid."""
    JUDGES.check(name, params, source=source, field=field, params_field=f"{field}_params")


def get_judge(name: str, **params: Any) -> KeepJudge:
    """Build the judge ``name`` with its parameters."""
    judge: KeepJudge = JUDGES.build(name, **params)
    return judge
