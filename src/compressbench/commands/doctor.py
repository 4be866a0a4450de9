"""``compressbench doctor``: check a machine before a long run; one line per check.

Each line is ``STATUS  name  what was found`` (PASS, FAIL, or SKIP with the reason); the exit
code is 1 when any check fails, 0 otherwise. ``--json`` prints the same as one JSON object.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from compressbench.commands._args import one_of

_CHECKS = "params, gpu, versions, image, libraries, reader, disk, gpu-memory, tracking"


def _names() -> list[str]:
    from compressbench.doctor.checks import check_names

    return check_names()


def run(args: argparse.Namespace) -> int:
    from compressbench.doctor.base import FAIL, Context, Options
    from compressbench.doctor.checks import run_checks

    options = Options(
        params=Path(args.params),
        tracking_uri=args.tracking_uri,
        base_urls=tuple(args.base_url or ()),
        cache_dir=Path(args.cache_dir) if args.cache_dir else None,
        image_target=args.image_target,
        images_lock=Path(args.images_lock) if args.images_lock else None,
        cpu_ok=args.cpu_ok,
        timeout=args.timeout,
    )
    results = run_checks(Context(options), args.only)
    failed = [r.name for r in results if r.status == FAIL]
    if args.json:
        out = {"ok": not failed, "failed": failed, "checks": [r.to_dict() for r in results]}
        print(json.dumps(out, indent=2, default=str))
    else:
        width = max(len(name) for name in _names())
        for result in results:
            print(result.line(width), flush=True)
    return 1 if failed else 0


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got {text!r}")
    return value


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "doctor",
        help="check a (GPU) machine before a long run: one line per check, exit 1 on a failure",
        description=(
            f"Checks ({_CHECKS}) for the reader and tracking store params.yaml configures; one "
            "line each: PASS, FAIL or SKIP with the reason and figures. Exit code 1 when any "
            "check fails. docs/gpu.md says what each one needs."
        ),
    )
    p.add_argument("--params", default="params.yaml", help="parameters (default params.yaml)")
    p.add_argument("--tracking-uri", help="MLflow store to check (default: as the stages resolve)")
    p.add_argument(
        "--base-url",
        action="append",
        metavar="URL",
        help="OpenAI-compatible server(s) to check (repeat for a pool; default reader.base_url)",
    )
    p.add_argument("--cache-dir", help="folder the weights go to (default: HF / packaged cache)")
    p.add_argument(
        "--image-target",
        type=one_of(lambda: ["cpu", "cuda"], "image target"),
        help="lock to hold versions to (default $COMPRESSBENCH_IMAGE_TARGET, else cpu)",
    )
    p.add_argument("--images-lock", help="published images lock (default docker/images.lock)")
    p.add_argument("--cpu-ok", action="store_true", help="no GPU is fine: an hf reader runs on CPU")
    p.add_argument("--timeout", type=_positive, default=5.0, help="seconds per network call")
    p.add_argument(
        "--only",
        action="append",
        type=one_of(_names, "check"),
        metavar="CHECK",
        help=f"run only this check (repeatable): {_CHECKS}",
    )
    p.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    p.set_defaults(func=run)
