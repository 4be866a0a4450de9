"""``compressbench code-hash``: write the fingerprint of source paths (a generated DVC stage).

``dvc.yaml``'s ``code_<stage>`` stages run it on the code their stage declares; see
:mod:`compressbench.pipeline.code_hash`. A path that does not exist is bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def run(args: argparse.Namespace) -> int:
    from compressbench.pipeline.code_hash import write_fingerprint

    n = write_fingerprint(Path(args.out), args.paths)
    print(f"{args.out}: {n} files")
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "code-hash", help="write the SHA-256 of every file under source paths (a DVC stage)"
    )
    p.add_argument("--out", required=True, help="the fingerprint JSON to write")
    p.add_argument("paths", nargs="+", help="files or folders, relative to the working folder")
    p.set_defaults(func=run)
