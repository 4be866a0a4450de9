"""Argument types and argument groups shared by the subcommands (each defined once here).

An argument type raises ``argparse.ArgumentTypeError`` naming the allowed values (a plain
``ValueError`` would be replaced by argparse's "invalid value"); the CLI's parser turns it into
one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

_bad = argparse.ArgumentTypeError


def csv_of(kind: Callable[[str], T]) -> Callable[[str], list[T]]:
    """argparse type: a comma-separated list of ``kind`` values (``"42,43"`` -> ``[42, 43]``)."""

    def parse(text: str) -> list[T]:
        items = [s.strip() for s in text.split(",") if s.strip()]
        if not items:
            raise argparse.ArgumentTypeError("expected a comma-separated list")
        try:
            return [kind(s) for s in items]
        except (ValueError, argparse.ArgumentTypeError) as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def ratio(text: str) -> float:
    """A retained fraction in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise _bad(f"ratio {text!r} is not a number in (0, 1]") from None
    if not 0 < value <= 1:
        raise _bad(f"ratio {text} is not in (0, 1]")
    return value


def int_at_least(low: int) -> Callable[[str], int]:
    """argparse type: an integer >= ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise _bad(f"{text!r} is not an integer >= {low}") from None
        if value < low:
            raise _bad(f"{text} is not an integer >= {low}")
        return value

    return parse


positive_int = int_at_least(1)
non_negative_int = int_at_least(0)  # a seed, a count of retries or tokens


def probe_type_of(*, pipeline: bool) -> Callable[[str], str]:
    """argparse type: a registered probe type's name, case ignored (``p1`` -> ``P1``);
    ``pipeline``: only the probe types the pipeline samples."""
    from compressbench.tpbench.probe_types import get_probe_type

    def parse(text: str) -> str:
        try:
            return get_probe_type(text.strip(), pipeline=pipeline).name
        except KeyError as exc:
            raise _bad(exc.args[0]) from None

    return parse


probe_type = probe_type_of(pipeline=True)


def output_file(text: str) -> str:
    """A file path the command may create: not a folder, under a folder that exists (or can be
    made) and is writable. Checked before any work, so a bad path costs nothing."""
    path = Path(text)
    if path.is_dir():
        raise _bad(f"{text} is a folder, not a file")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise _bad(f"cannot create {text}: {parent} is not a folder")
    if not os.access(parent, os.W_OK):
        raise _bad(f"cannot create {text}: {parent} is not writable")
    return text


def one_of(known: Callable[[], Collection[str]], what: str) -> Callable[[str], str]:
    """argparse type: a name from a registry (``known()`` is called only when parsing, so
    building the parser imports no registry)."""

    def parse(text: str) -> str:
        names = known()
        if text not in names:
            raise _bad(f"unknown {what} {text!r}; allowed: {', '.join(sorted(names))}")
        return text

    return parse


def _method_names() -> list[str]:
    from compressbench.compress.registry import known_methods

    return known_methods()


method_name = one_of(_method_names, "method")


def _corpus_names() -> list[str]:
    from compressbench.corpora.loaders import CORPUS_LOADERS

    return sorted(CORPUS_LOADERS)


def add_corpus_args(parser: argparse.ArgumentParser, corpus_group: Any = None) -> None:
    """``--corpus NAME --path DIR --splits a,b``: which corpus files a command reads.
    ``--corpus`` is required, or joins ``corpus_group`` (a required mutually exclusive group
    of the other sources of the command's input)."""
    names = _corpus_names()
    (corpus_group or parser).add_argument(
        "--corpus",
        required=corpus_group is None,
        choices=names,
        help=f"corpus loader ({', '.join(names)})",
    )
    parser.add_argument("--path", help="corpus directory or file (default: the packaged copy)")
    parser.add_argument(
        "--splits", type=csv_of(str), help="comma-separated split folders (default: all present)"
    )
