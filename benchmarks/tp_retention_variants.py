"""Reader-free retention of ``turning_point`` variants at tight budgets (issue #31, step 4).

For each variant (``method_params.turning_point`` settings) and ratio: P2 value retention, P3
goal retention and P3 joint retention (goal and current value both kept), with the project's
own diagnostic (:func:`compressbench.tpbench.retention.retention_rows`, the matcher of
``compressbench retention``), every method budgeted in reader tokens of the default reader's
tokenizer. ``--oracle`` adds an annotation oracle under the same budget and rendering: it keeps
the goal segment, then, greedily by events covered per token, the segments that hold some P3
event's current value *as the annotations say* - a ceiling for span selection with these
segments, not a method (it reads the answer key).

    python benchmarks/tp_retention_variants.py [--path ../shared/corpora/sgd]
        [--splits test,dev] [--ratios 0.1,0.3] [--dialogues N] [--oracle]
        [--variant '{"frame": "turn"}' ...]

Prints one markdown row per (variant, ratio).
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from compressbench.compress.reader_tokens import dialogue_token_budget, reader_counter
from compressbench.compress.registry import get_method
from compressbench.compress.turning_point.method import TurningPointMethod, render_segments
from compressbench.compress.turning_point.segments import Segment
from compressbench.corpora.model import Dialogue
from compressbench.corpora.sgd import load_sgd
from compressbench.tpbench.goals import goal_first_sentence, goal_text
from compressbench.tpbench.retention import retention_rows, survives
from compressbench.tpbench.transitions import dialogue_transitions

SGD = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "sgd"
VARIANTS: tuple[dict[str, object], ...] = (
    {},  # the default method
    {"revisions": "same_speaker"},
    {"units": "mention"},
    {"recency": 0.8},
    {"units": "mention", "revisions": "same_speaker"},
    {"units": "mention", "revisions": "same_speaker", "recency": 0.8},  # the tight variant
)


def oracle_joint(
    dialogues: Iterable[Dialogue], ratio: float, units: str = "phrase"
) -> tuple[int, int]:
    """(events whose goal and value the oracle keeps, P3 events) at ``ratio``."""
    method = get_method("turning_point", {"units": units})
    assert isinstance(method, TurningPointMethod)
    count = reader_counter(None)
    kept_events = n = 0
    for d in dialogues:
        events = [t for t in dialogue_transitions(d) if t.p3_eligible]
        if not events:
            continue
        goal = goal_first_sentence(goal_text(d.turns))
        budget, _ = dialogue_token_budget(d.turns, ratio, count)
        segs, _ = method.plan(d.turns)
        chosen = [i for i, s in enumerate(segs) if s.goal]

        def cost(sel: Sequence[int], segs: Sequence[Segment] = segs) -> int:
            return count(render_segments([segs[i] for i in sorted(sel)], "markers", "speaker")[0])

        values, covered = {t.new_value for t in events}, set()
        while True:
            best: tuple[float, int, set[str]] | None = None
            base = cost(chosen)
            for i, s in enumerate(segs):
                gain = {v for v in values - covered if survives(v, s.text, d.dataset)}
                if i in chosen or not gain:
                    continue
                c = cost([*chosen, i])
                if c <= budget and (best is None or len(gain) / max(1, c - base) > best[0]):
                    best = (len(gain) / max(1, c - base), i, gain)
            if best is None:
                break
            chosen.append(best[1])
            covered |= best[2]
        kept = render_segments([segs[i] for i in sorted(chosen)], "markers", "speaker")[1]
        for t in events:
            n += 1
            kept_events += survives(goal, kept, d.dataset) and survives(
                t.new_value, kept, d.dataset
            )
    return kept_events, n


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--path", default=str(SGD))
    ap.add_argument("--splits", default="test,dev")
    ap.add_argument("--ratios", default="0.1,0.3")
    ap.add_argument("--dialogues", type=int, default=None, help="first N (corpus order)")
    ap.add_argument("--oracle", action="store_true")
    ap.add_argument(
        "--variant",
        action="append",
        default=None,
        help="a variant's method_params as JSON (repeatable; default: the VARIANTS above)",
    )
    args = ap.parse_args(argv)
    ratios = [float(r) for r in args.ratios.split(",")]
    dialogues = list(itertools.islice(load_sgd(args.path, args.splits.split(",")), args.dialogues))
    print(f"SGD {args.splits}, {len(dialogues)} dialogues, reader tokens (SmolLM2 tokenizer)\n")
    print("| variant | r | P2 kept (n) | P3 goal kept | P3 joint (n) |")
    print("|---|---|---|---|---|")
    variants = [json.loads(v) for v in args.variant] if args.variant else VARIANTS
    for variant in variants:
        rows = retention_rows(
            dialogues,
            ["turning_point"],
            ratios,
            method_params={"turning_point": variant},
            budget_unit="reader_tokens",
        )
        label = json.dumps(variant) if variant else "default"
        for r in rows:
            print(
                f"| {label} | {r['ratio']} | {r['p2_retention']:.3f} ({r['n']}) | "
                f"{r['p3_goal_retention']:.3f} | {r['p3_joint_retention']:.3f} ({r['n_p3']}) |",
                flush=True,
            )
    if args.oracle:
        for units in ("phrase", "mention"):
            for ratio in ratios:
                k, n = oracle_joint(dialogues, ratio, units)
                print(f"| oracle ({units} segments) | {ratio} | – | – | {k / n:.3f} ({n}) |")


if __name__ == "__main__":
    main()
