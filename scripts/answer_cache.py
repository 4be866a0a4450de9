#!/usr/bin/env python3
"""Kept for old notes: ``python scripts/answer_cache.py export|import ...`` is
``compressbench answers export|import ...`` (see compressbench.readers.cache_transfer)."""

from __future__ import annotations

import sys

from compressbench.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["answers", *sys.argv[1:]]))
