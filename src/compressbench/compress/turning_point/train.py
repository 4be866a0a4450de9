"""Fit the mention scorer on SGD train: the dialogue-state annotations are the labels.

A mention is labelled current when its normalised text and a value of the dialogue's final
state (any slot, the state at the last USER turn) contain one another at phrase boundaries.
Only training reads annotations; :mod:`.scorer` never does. The fit is scikit-learn's
``LogisticRegression`` (lbfgs, L2, ``C``), deterministic for the same dialogues.

The scorer also carries a *vocabulary* learned from the same dialogues (:func:`lexicon`: the
values their final states hold in at least ``lexicon_min`` dialogues, plus the train schema's
categorical values): its terms are mentions at inference too (kind ``schema:<slot>``), so
lower-case values the patterns miss ("pool", "psychiatrist", "antioch") can be kept.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from compressbench.compress.turning_point.features import VALUE_PATTERNS, MentionRules
from compressbench.compress.turning_point.schema import (
    Vocabulary,
    load_vocabulary,
    merged,
    usable_term,
    vocabulary_of,
)
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


_LETTERS = re.compile(r"[a-z][a-z '\-]*")


def lexicon(dialogues: Iterable[Dialogue], min_count: int = 3) -> dict[str, str]:
    """``term -> slot``: values of the dialogues' final states (lower-cased, letters only, at
    most three words, not a time, date or number the patterns find anyway) that at least
    ``min_count`` dialogues hold; the slot is the first one seen holding the term."""
    counts: Counter[str] = Counter()
    slot_of: dict[str, str] = {}
    for d in dialogues:
        states = [t.state for t in d.turns if t.state is not None]
        held: set[str] = set()
        for slot, values in (states[-1] if states else {}).items():
            for value in values:
                term = usable_term(value)
                if term is None or not _LETTERS.fullmatch(term) or len(term.split()) > 3:
                    continue
                if any(p.fullmatch(term) for p in VALUE_PATTERNS.values()):
                    continue
                held.add(term)
                slot_of.setdefault(term, slot)
        counts.update(held)
    return {t: slot_of[t] for t in sorted(counts) if counts[t] >= min_count}


def labelled_rows(
    dialogues: Iterable[Dialogue], units: str = "clause", vocab: Vocabulary | None = None
) -> tuple[list[tuple[float, ...]], list[int]]:
    """Feature rows and labels of every mention of every dialogue (found by the first rules,
    with ``vocab``'s terms)."""
    rules = MentionRules(vocab)
    xs: list[tuple[float, ...]] = []
    ys: list[int] = []
    for d in dialogues:
        values = final_values(d)
        ds = dataset_key(d.dataset)
        segs = segment_dialogue(d.turns, units=units, rules=rules)
        for loc in located_mentions(segs, len(d.turns), rules):
            text = normalize_value(loc.mention.text, ds)
            hit = bool(text) and any(
                phrase_occurs(v, text) or phrase_occurs(text, v) for v in values
            )
            xs.append(loc.x)
            ys.append(int(hit))
    return xs, ys


def fit(
    dialogues: Iterable[Dialogue],
    *,
    c: float = 1.0,
    units: str = "clause",
    schema: Vocabulary | None = None,
    lexicon_min: int = 0,
) -> dict[str, Any]:
    """The JSON form of a scorer fitted on ``dialogues`` (see the module docstring); its
    vocabulary is ``schema``'s terms plus the :func:`lexicon` (``lexicon_min`` 0: none)."""
    from sklearn.linear_model import LogisticRegression

    dialogues = list(dialogues)
    learned = lexicon(dialogues, lexicon_min) if lexicon_min else {}
    vocab = merged(schema, vocabulary_of(learned) if learned else None)
    xs, ys = labelled_rows(dialogues, units, vocab)
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
        "lexicon_min": lexicon_min,
        "vocabulary": [list(pair) for pair in (vocab.slots if vocab else ())],
    }


# The packaged scorer.json's settings (the `turning_point_scorer` DVC stage uses them).
MAX_DIALOGUES = 3000
UNITS = "phrase"
C = 1.0
LEXICON_MIN = 3


def fit_sgd_train(
    sgd_path: str | Path,
    output: str | Path,
    *,
    max_dialogues: int = MAX_DIALOGUES,
    units: str = UNITS,
    c: float = C,
    lexicon_min: int = LEXICON_MIN,
) -> Path:
    """Fit on the first ``max_dialogues`` dialogues of SGD's train split (corpus order) under
    ``sgd_path`` (its ``train/schema.json.gz`` categorical values join the vocabulary) and write
    the scorer JSON to ``output`` atomically."""
    import itertools
    import json

    from compressbench.corpora.loaders import load_corpus
    from compressbench.jsonl import atomic_writer

    dialogues = itertools.islice(load_corpus("sgd", str(sgd_path), ["train"]), max_dialogues)
    schema_file = Path(sgd_path) / "train" / "schema.json.gz"
    schema = load_vocabulary(str(schema_file)) if schema_file.exists() else None
    fitted = fit(dialogues, c=c, units=units, schema=schema, lexicon_min=lexicon_min)
    out = {"trained_on": "sgd train (corpus order)", **fitted}
    with atomic_writer(output) as fh:
        fh.write(json.dumps(out, indent=1) + "\n")
    return Path(output)


def main(argv: list[str] | None = None) -> int:
    """``python -m compressbench.compress.turning_point.train --path ../shared/corpora/sgd
    --output scorer.json``: fit on the first ``--max-dialogues`` SGD train dialogues (the
    packaged ``scorer.json``: 3000, phrase units, C = 1; the DVC stage
    ``turning_point_scorer`` runs the same fit)."""
    import argparse

    ap = argparse.ArgumentParser(description="fit the turning_point mention scorer on SGD train")
    ap.add_argument("--path", required=True, help="SGD folder (its train split is read)")
    ap.add_argument("--output", required=True)
    ap.add_argument("--max-dialogues", type=int, default=MAX_DIALOGUES)
    ap.add_argument("--units", default=UNITS)
    ap.add_argument("--c", type=float, default=C)
    ap.add_argument("--lexicon-min", type=int, default=LEXICON_MIN, help="0: no learned lexicon")
    args = ap.parse_args(argv)
    fit_sgd_train(
        args.path,
        args.output,
        max_dialogues=args.max_dialogues,
        units=args.units,
        c=args.c,
        lexicon_min=args.lexicon_min,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
