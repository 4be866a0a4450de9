"""``compressbench dvc-yaml``: write ``dvc.yaml`` (and ``dvc-stages/<stage>/dvc.yaml`` of a stage
kept apart) from the stage declarations.

``--check`` writes nothing and exits 1 when a file differs from what the declarations give, or
a ``dvc-stages/<stage>/dvc.yaml`` is left that they no longer give (CI and
``tests/pipeline/test_stage_graph.py`` run it). Either way it first checks every declaration:
declared code exists and covers every module the stage imports.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from compressbench.jsonl import atomic_writer
from compressbench.pipeline.dvc_yaml import APART_ROOT, problems, render
from compressbench.stages import declarations


def run(args: argparse.Namespace) -> int:
    decls = declarations()
    wrong = problems(decls)
    for line in wrong:
        print(f"compressbench dvc-yaml: {line}", file=sys.stderr)
    if wrong:
        return 1
    files = {Path(args.root) / rel: text for rel, text in render(decls).items()}
    # a stage that moved back into the root dvc.yaml leaves its folder behind (DVC would then
    # see two stages writing one output)
    leftover = sorted(set(Path(args.root).glob(f"{APART_ROOT}/*/dvc.yaml")) - set(files))
    for path in leftover:
        print(
            f"compressbench dvc-yaml: {path} is no longer generated; delete its folder",
            file=sys.stderr,
        )
    if args.check:
        stale = [p for p, text in files.items() if not p.exists() or p.read_text("utf-8") != text]
        for path in stale:
            print(
                f"compressbench dvc-yaml: {path} differs from the stage declarations; "
                "run `compressbench dvc-yaml` to regenerate it",
                file=sys.stderr,
            )
        if stale or leftover:
            return 1
        print(f"{len(files)} dvc.yaml files match the stage declarations ({len(decls)} stages)")
        return 0
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(path) as fh:
            fh.write(text)
    print(f"wrote {', '.join(map(str, files))} ({len(decls)} stages)")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("dvc-yaml", help="write (or --check) dvc.yaml from the stage declarations")
    p.add_argument("--root", default=".", help="the repository root to write into (default .)")
    p.add_argument("--check", action="store_true", help="only compare; exit 1 if it differs")
    p.set_defaults(func=run)
