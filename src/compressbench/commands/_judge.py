"""Options shared by the judge commands (``judge-p1``, ``judge-validate``): which server and
model judge, how the verdict schema is requested, retries, and the answer cache."""

from __future__ import annotations

import argparse
from pathlib import Path

from compressbench.commands._args import non_negative_int, positive_int
from compressbench.readers.structured import RESPONSE_FORMATS
from compressbench.tpbench.judge.judge import DEFAULT_RETRIES, MAX_TOKENS, PAPER_JUDGE_MODEL, Judge


def add_judge_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--base-url",
        help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 "
        "(default: $OPENAI_BASE_URL, else OpenAI; key from $OPENAI_API_KEY)",
    )
    p.add_argument("--model", default=PAPER_JUDGE_MODEL, help="judge model (default: the paper's)")
    p.add_argument("--revision", help="judge model revision, for provenance (default: unknown)")
    p.add_argument(
        "--response-format",
        default="json_schema",
        choices=sorted(RESPONSE_FORMATS),
        help="how the verdict schema is requested: json_schema (OpenAI, vLLM, llama-server), "
        "json_object (llama_cpp.server), none (prompt only); default json_schema",
    )
    p.add_argument(
        "--retries",
        type=non_negative_int,
        default=DEFAULT_RETRIES,
        help=f"times an unparseable verdict is asked again (default {DEFAULT_RETRIES})",
    )
    p.add_argument(
        "--max-tokens", type=positive_int, default=MAX_TOKENS, help=f"default {MAX_TOKENS}"
    )
    p.add_argument("--concurrency", type=positive_int, default=4, help="parallel requests")
    p.add_argument(
        "--cache",
        help="answer cache shared with the reader (default: $COMPRESSBENCH_ANSWER_CACHE or "
        ".cache/answers.sqlite)",
    )


def judge_from_args(args: argparse.Namespace) -> Judge:
    from compressbench.tpbench.judge.judge import build_judge

    return build_judge(
        args.model,
        base_url=args.base_url,
        style=args.response_format,
        retries=args.retries,
        max_tokens=args.max_tokens,
        concurrency=args.concurrency,
        revision=args.revision,
    )


def cache_path(args: argparse.Namespace) -> Path:
    if args.cache:
        return Path(args.cache)
    from compressbench.pipeline import paths

    return paths.answer_cache()
