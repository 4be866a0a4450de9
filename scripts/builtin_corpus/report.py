"""Summarise the change events of the built-in corpus (as loaded by compressbench).

    python scripts/builtin_corpus/report.py       # totals: events, P2/P3-eligible, corpus stats
    python scripts/builtin_corpus/report.py -v    # plus every change event of every dialogue

Event flags: ``F`` final, ``2`` P2-eligible, ``3`` P3-eligible, ``A`` alias-equivalent,
``T`` new value in the text (``!`` when not). Uses ``tests/support/corpus_stats.py``, the same
counting that ``tests/corpora/test_builtin_corpus.py`` pins; run ``build.py`` first so it reads
fresh data.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    verbose = "-v" in argv
    sys.path[:0] = [str(REPO_ROOT / "src"), str(REPO_ROOT / "tests")]
    from compressbench.corpora.loaders import load_corpus
    from support.corpus_stats import change_events, corpus_stats

    ds = list(load_corpus("builtin"))
    p2 = p3 = ev = 0
    for d in ds:
        flags = []
        for e in change_events(d):
            ev += 1
            p2 += e.p2_eligible
            p3 += e.p3_eligible
            tag = "".join(
                [
                    "F" if e.final else "-",
                    "2" if e.p2_eligible else "-",
                    "3" if e.p3_eligible else "-",
                    "A" if e.alias_equivalent else "-",
                    "T" if e.value_in_text else "!",
                ]
            )
            flags.append(f"  t{e.turn:<2} {tag} {e.key}: {e.old} -> {e.new}")
        if verbose:
            print(d.dialogue_id, d.n_turns, d.services)
            print("\n".join(flags))
    print(len(ds), "dialogues", sorted({s for d in ds for s in d.services}))
    print("events", ev, "P2", p2, "P3", p3)
    print(corpus_stats(ds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
