"""The one ``compressbench`` entry point: every job (and every DVC stage) is a subcommand.

Each subcommand lives in ``compressbench.commands.<module>`` and exposes
``register(subparsers)`` that adds its parser and sets ``func``; add a module name to
``COMMAND_MODULES`` to add a command. Bad input of any command (an :class:`InputError`, an
argument argparse rejects, a given path that cannot be read or written) ends as one line on
stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from typing import NoReturn

from compressbench.errors import InputError

COMMAND_MODULES: tuple[str, ...] = (
    "rescore",
    "transitions",
    "probes",
    "replay",
    "stage",
    "dvc_yaml",
    "retention",
    "compare",
    "judge_validate",
    "judge_p1",
    "use_config",
    "answers_ray",
    "flops",
    "compress",
)

EXIT_BAD_INPUT = 2


class OneLineParser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line (no usage block); exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="compressbench", description=__doc__.splitlines()[0])
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
        return _bad_input(args.command, str(exc))
    except OSError as exc:  # a path given to the command that cannot be read or written
        if exc.filename is None:
            raise
        return _bad_input(args.command, f"file {exc.filename}: {exc.strerror or exc}")


def _bad_input(command: str, message: str) -> int:
    one_line = " ".join(message.split())  # whatever the message holds
    print(f"compressbench {command}: error: {one_line}", file=sys.stderr)
    return EXIT_BAD_INPUT


if __name__ == "__main__":
    raise SystemExit(main())
