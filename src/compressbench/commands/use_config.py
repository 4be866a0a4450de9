"""``compressbench use-config FILE``: merge a parameter file into ``params.yaml``.

``compressbench use-config configs/readers/llama31_8b_hf_p2.yaml`` sets the paper's reader for
that comparison (spec §6); ``dvc repro`` then reruns what the change affects. ``--dry-run``
only lists the changes. The merged file is validated before it is written.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def run(args: argparse.Namespace) -> int:
    from compressbench.config_overlay import apply_overlay

    _, changes = apply_overlay(args.params, args.file, write=not args.dry_run)
    verb = "would change" if args.dry_run else "changed"
    if not changes:
        print(f"{args.params}: already as {args.file} sets it")
    for key, old, new in changes:
        print(f"{args.params}: {verb} {key}: {_show(old)} -> {_show(new)}")
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "use-config",
        help="merge a parameter file (e.g. configs/readers/*.yaml) into params.yaml",
        description=(
            "Merge FILE, a fragment of params.yaml, into the parameters file: mappings merge "
            "key by key, other values replace. The result is validated before it is written."
        ),
    )
    p.add_argument("file", help="parameter file to apply (configs/readers/<reader>.yaml)")
    p.add_argument("--params", default="params.yaml", help="file to update (default params.yaml)")
    p.add_argument("--dry-run", action="store_true", help="list the changes, write nothing")
    p.set_defaults(func=run)
