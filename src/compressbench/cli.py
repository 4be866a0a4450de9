"""The one ``compressbench`` entry point: every job (and every DVC stage) is a subcommand.

Each subcommand lives in ``compressbench.commands.<module>`` and exposes
``register(subparsers)`` that adds its parser and sets ``func``; add it to :data:`COMMANDS` to
add a command. Bad input of any command (an :class:`InputError`, an
argument argparse rejects, a given path that cannot be read or written) ends as one line on
stderr and exit code 2; a stage cell whose model calls failed (:class:`ModelCallsFailed`) ends
as one line and exit code 1.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from typing import NoReturn

from compressbench.errors import InputError, ModelCallsFailed

# Command name -> the module under compressbench.commands that registers it. Only the module of
# the command being run is imported (each DVC stage is a CLI call, which should not pay for
# importing every command's dependencies); --help and an unknown command import them all.
COMMANDS: dict[str, str] = {
    "rescore": "rescore",
    "transitions": "transitions",
    "probes": "probes",
    "tpbench-replay": "replay",
    "stage": "stage",
    "dvc-yaml": "dvc_yaml",
    "retention": "retention",
    "compare": "compare",
    "judge-validate": "judge_validate",
    "judge-p1": "judge_p1",
    "use-config": "use_config",
    "answers-ray": "answers_ray",
    "flops": "flops",
    "compress": "compress",
    "code-hash": "code_hash",
    "doctor": "doctor",
    "runs": "runs",
    "answers": "answers",
    "worker": "worker",
}

EXIT_BAD_INPUT = 2
EXIT_MODEL_CALLS_FAILED = 1


class OneLineParser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line (no usage block); exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI parser; with a known ``command``, only that command's module is imported."""
    parser = OneLineParser(prog="compressbench", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    modules = [COMMANDS[command]] if command in COMMANDS else list(dict.fromkeys(COMMANDS.values()))
    for name in modules:
        importlib.import_module(f"compressbench.commands.{name}").register(sub)
    return parser


def _command(argv: list[str]) -> str | None:
    """The command named in ``argv`` (its first word that is not an option), if any."""
    return next((a for a in argv if not a.startswith("-")), None)


def _quiet_libraries() -> None:
    """No per-tensor progress bars from transformers / the Hub in stage logs."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")


def main(argv: list[str] | None = None) -> int:
    _quiet_libraries()
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(_command(argv)).parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.func(args) or 0)
    except InputError as exc:
        return _bad_input(args.command, str(exc))
    except ModelCallsFailed as exc:  # the message names the cell, the count and the cause
        print(f"compressbench {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_MODEL_CALLS_FAILED
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
