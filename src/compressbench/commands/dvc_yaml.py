"""``compressbench dvc-yaml``: write ``dvc.yaml`` from the stage declarations.

``--check`` writes nothing and exits 1 when the file differs from what the declarations give
(CI and ``tests/test_stage_graph.py`` run it). Either way it first checks every declaration:
declared code exists and covers every module the stage imports.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from compressbench.jsonl import atomic_writer
from compressbench.pipeline.dvc_yaml import problems, render
from compressbench.pipeline.stages import declarations


def run(args: argparse.Namespace) -> int:
    decls = declarations()
    wrong = problems(decls)
    for line in wrong:
        print(f"compressbench dvc-yaml: {line}", file=sys.stderr)
    if wrong:
        return 1
    text = render(decls)
    path = Path(args.output)
    if args.check:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            print(
                f"compressbench dvc-yaml: {path} differs from the stage declarations; "
                "run `compressbench dvc-yaml` to regenerate it",
                file=sys.stderr,
            )
            return 1
        print(f"{path} matches the stage declarations ({len(decls)} stages)")
        return 0
    with atomic_writer(path) as fh:
        fh.write(text)
    print(f"wrote {path} ({len(decls)} stages)")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("dvc-yaml", help="write (or --check) dvc.yaml from the stage declarations")
    p.add_argument("--output", default="dvc.yaml", help="the file (default dvc.yaml)")
    p.add_argument("--check", action="store_true", help="only compare; exit 1 if it differs")
    p.set_defaults(func=run)
