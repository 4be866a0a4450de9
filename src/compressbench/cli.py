"""The one ``compressbench`` entry point: every job (and every DVC stage) is a subcommand.

Each subcommand lives in ``compressbench.commands.<module>`` and exposes
``register(subparsers)`` that adds its parser and sets ``func``; add a module name to
``COMMAND_MODULES`` to add a command.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from compressbench.errors import InputError

COMMAND_MODULES: tuple[str, ...] = (
    "rescore",
    "transitions",
    "probes",
    "replay",
    "stage",
    "retention",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="compressbench", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"compressbench.commands.{name}")
        module.register(sub)
    return parser


def _quiet_libraries() -> None:
    """No per-tensor progress bars from transformers / the Hub in stage logs."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")


def main(argv: list[str] | None = None) -> int:
    _quiet_libraries()
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.func(args) or 0)
    except InputError as exc:
        print(f"compressbench {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
