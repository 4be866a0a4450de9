"""Fit the mention scorer on SGD train: the dialogue-state annotations are the labels.

A mention is labelled current when its normalised text and a value of the dialogue's final
state (any slot, the state at the last USER turn) contain one another at phrase boundaries.
Only training reads annotations; :mod:`.scorer` never does. The fit is scikit-learn's
``LogisticRegression`` (lbfgs, L2, ``C``), deterministic for the same dialogues.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from compressbench.compress.turning_point.scorer import FEATURES, located_mentions
from compressbench.compress.turning_point.segments import segment_dialogue
from compressbench.corpora.model import Dialogue
from compressbench.text.normalize import dataset_key, normalize_value, phrase_occurs


def final_values(dialogue: Dialogue) -> set[str]:
    """Normalised values of the final dialogue state (every slot)."""
    ds = dataset_key(dialogue.dataset)
    states = [t.state for t in dialogue.turns if t.state is not None]
    if not states:
        return set()
    return {normalize_value(v, ds) for vs in states[-1].values() for v in vs} - {""}


def labelled_rows(
    dialogues: Iterable[Dialogue], units: str = "clause"
) -> tuple[list[tuple[float, ...]], list[int]]:
    """Feature rows and labels of every mention of every dialogue."""
    xs: list[tuple[float, ...]] = []
    ys: list[int] = []
    for d in dialogues:
        values = final_values(d)
        ds = dataset_key(d.dataset)
        segs = segment_dialogue(d.turns, units=units)
        for loc in located_mentions(segs, len(d.turns)):
            text = normalize_value(loc.mention.text, ds)
            hit = bool(text) and any(
                phrase_occurs(v, text) or phrase_occurs(text, v) for v in values
            )
            xs.append(loc.x)
            ys.append(int(hit))
    return xs, ys


def fit(dialogues: Iterable[Dialogue], *, c: float = 1.0, units: str = "clause") -> dict[str, Any]:
    """The JSON form of a scorer fitted on ``dialogues`` (see the module docstring)."""
    from sklearn.linear_model import LogisticRegression

    dialogues = list(dialogues)
    xs, ys = labelled_rows(dialogues, units)
    if len(set(ys)) < 2:
        raise ValueError("training needs mentions of both labels")
    model = LogisticRegression(C=c, max_iter=2000)
    model.fit(xs, ys)
    return {
        "features": list(FEATURES),
        "coef": [round(float(v), 6) for v in model.coef_[0]],
        "intercept": round(float(model.intercept_[0]), 6),
        "c": c,
        "units": units,
        "n_dialogues": len(dialogues),
        "n_mentions": len(ys),
        "positive_rate": round(sum(ys) / len(ys), 6),
        "train_accuracy": round(float(model.score(xs, ys)), 6),
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m compressbench.compress.turning_point.train --path ../shared/corpora/sgd
    --output scorer.json``: fit on the first ``--max-dialogues`` SGD train dialogues (the
    packaged ``scorer.json``: 3000, phrase units, C = 1)."""
    import argparse
    import itertools
    import json

    from compressbench.corpora.loaders import load_corpus
    from compressbench.jsonl import atomic_writer

    ap = argparse.ArgumentParser(description="fit the turning_point mention scorer on SGD train")
    ap.add_argument("--path", required=True, help="SGD folder (its train split is read)")
    ap.add_argument("--output", required=True)
    ap.add_argument("--max-dialogues", type=int, default=3000)
    ap.add_argument("--units", default="phrase")
    ap.add_argument("--c", type=float, default=1.0)
    args = ap.parse_args(argv)
    dialogues = itertools.islice(load_corpus("sgd", args.path, ["train"]), args.max_dialogues)
    out = {"trained_on": "sgd train (corpus order)", **fit(dialogues, c=args.c, units=args.units)}
    with atomic_writer(args.output) as fh:
        fh.write(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
