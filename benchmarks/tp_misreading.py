"""Why kept values are misread (issue #31, step 1): every P2 answer of a compressed method whose
context keeps the current value but whose answer is wrong, by kind, beside full context's
answer on the same probe. Reader-free: it reads a run's data files only.

Run it in a project where the study's cells exist (no model call: the carried answers serve
every prompt), e.g. for the SGD study at n = 100::

    git clone <this repo> study && cd study        # beside ../shared
    compressbench answers import benchmarks/results/sgd_cpu_qwen15_answers.jsonl.gz
    compressbench use-config configs/studies/sgd_cpu_qwen15.yaml
    dvc repro scores                               # or the stage commands of the cells below
    python benchmarks/tp_misreading.py [--method turning_point] [--ratio 0.3] [--cases]

Kinds of a wrong answer, first match wins:

* ``format error`` (no parseable JSON), ``superseded`` (the replaced value, P2-strict's rule);
* ``superseded, other wording``: the answer and the old value contain one another or share a
  token with a digit ("5:30 pm" for "5:30 in the evening");
* ``current value, other wording``: the same test against the current value ("pool ride" for
  "Pool", "14th" for "March 14th"; without digits, a shared 5-letter word start: "Luxurious"
  for "Luxury");
* ``abstained``; ``another value in the context`` (the answer occurs in the text the reader
  was given: another slot's or another offer's value); ``not in the context``.

For the compressed method it also says how the update turn (the probe's origin turn) reached
the reader: whole, cut to some of its pieces (the turn that frames the value partly lost), or
not at all; and, for a method with a state line (``turning_point_stated``: a last line
``LATEST: ...``; ``turning_point_headed``: a first one), whether the line names the current
value, over every P2 probe of the cell (a probe two seeds drew counts once). Last, every P2
probe by the kind of its slot (:func:`slot_kind`: a date, a time, any other): how many each
reader answers right, and how many only one of them does.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compressbench.compress.turning_point.state import HEAD
from compressbench.text.normalize import dataset_key, normalize_value, value_occurs_in_text
from compressbench.tpbench.probe_types.p2 import p2_superseded
from compressbench.tpbench.stages import paths

Row = Mapping[str, Any]
KINDS = (
    "correct",
    "format error",
    "superseded",
    "superseded, other wording",
    "current value, other wording",
    "abstained",
    "another value in the context",
    "not in the context",
)


def _load(path: Path, probe_type: str = "P2") -> dict[str, dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return {r["probe_id"]: r for r in rows if r["probe_type"] == probe_type}


def _tokens(text: str) -> set[str]:
    return set(text.split())


def _raw(text: str) -> str:
    """Lower-cased words with punctuation other than ``:`` removed (times keep their form,
    which the normalisation rewrites: "5:30 pm" -> "17:30")."""
    return " ".join(re.sub(r"[^\w:]+", " ", text.lower()).split())


def near(prediction: str, value: str, dataset: str = "sgd") -> bool:
    """The two strings normalised by ``dataset``'s scorer rules contain one another, or their
    words (normalised or raw) share a token with a digit, or - when neither holds a digit - a
    word start of 5 letters or more ("luxurious" / "luxury")."""
    p, v = normalize_value(prediction, dataset), normalize_value(value, dataset)
    if not p or not v:
        return False
    if p in v or v in p:
        return True
    shared = (_tokens(p) & _tokens(v)) | (_tokens(_raw(prediction)) & _tokens(_raw(value)))
    if any(re.search(r"\d", t) for t in shared):
        return True
    if re.search(r"\d", p + v):
        return False
    return any(
        a[:5] == b[:5] for a in _tokens(p) for b in _tokens(v) if len(a) >= 5 and len(b) >= 5
    )


def kind(score: Row, context_text: str) -> str:
    """The kind of one scored P2 answer (see the module docstring), compared by the scorer
    rules of the row's own dataset."""
    dataset = dataset_key(score["dataset"])
    if score["scores"]["strict"]:
        return "correct"
    if score.get("format_error"):
        return "format error"
    if p2_superseded(score):
        return "superseded"
    prediction = score.get("prediction")
    text = prediction if isinstance(prediction, str) else ""
    if near(text, score["old_value"], dataset) and not near(text, score["gold"], dataset):
        return "superseded, other wording"
    if near(text, score["gold"], dataset):
        return "current value, other wording"
    if score.get("abstain"):
        return "abstained"
    if text and value_occurs_in_text(text, context_text, dataset):
        return "another value in the context"
    return "not in the context"


def update_turn(probe: Row, context: Row) -> str:
    """How the probe's update (origin) turn reached the reader: ``whole``, ``cut`` or
    ``dropped`` (one line per kept turn, in order, labelled ``SPEAKER:``)."""
    origin = probe["meta"]["origin_turn_id"]
    kept = list(context["kept_turn_ids"])
    if origin not in kept:
        return "dropped"
    line = split_state(str(context["compressed_text_used"]))[0][kept.index(origin)]
    text = line.split(":", 1)[1].strip() if ":" in line else line.strip()
    return "whole" if text == probe["turns"][origin][1].strip() else "cut"


def split_state(context_text: str) -> tuple[list[str], str]:
    """A span method's context: its kept lines, and its state line ("" when none), which is
    the last line or, for a variant that heads the context with it, the first."""
    lines = context_text.split("\n")
    for at in (-1, 0):
        if lines[at].startswith(HEAD):
            return lines[:at] if at else lines[1:], lines[at]
    return lines, ""


def state_line(score: Row, context_text: str) -> str:
    """Whether the context's state line names the current value: ``current value``, ``other
    values`` (a line without it) or ``no line``."""
    line = split_state(context_text)[1]
    if not line:
        return "no line"
    named = value_occurs_in_text(score["gold"], line, dataset_key(score["dataset"]))
    return "current value" if named else "other values"


SLOT_KINDS = ("date", "time", "other")


def slot_kind(slot: str) -> str:
    """``date`` for a date slot (``check_out_date``, ``date``), ``time`` for a time slot
    (``pickup_time``, MultiWOZ's ``train-leaveat``), ``other`` for any other."""
    if "date" in slot:
        return "date"
    return "time" if "time" in slot or slot.endswith(("leaveat", "arriveby")) else "other"


def analyse(root: Path, method: str, ratio: float, dataset: str = "sgd") -> dict[str, Any]:
    """Counts (and the cases) of the method's P2 answers whose context keeps the value."""
    probes = _load(root / paths.fill(paths.PROBES, dataset=dataset, ratio=ratio))
    cell = {
        m: (
            _load(root / paths.fill(paths.CONTEXTS, dataset=dataset, method=m, ratio=ratio)),
            _load(root / paths.fill(paths.SCORES, dataset=dataset, method=m, ratio=ratio)),
        )
        for m in (method, "full_context")
    }
    contexts, scores = cell[method]
    full_contexts, full_scores = cell["full_context"]
    cases = []
    for pid, score in sorted(scores.items()):
        text = str(contexts[pid]["compressed_text_used"])
        if not value_occurs_in_text(score["gold"], text, dataset_key(dataset)):
            continue
        full = full_scores[pid]
        cases.append(
            {
                "probe_id": pid,
                "kind": kind(score, text),
                "full_context_kind": kind(full, str(full_contexts[pid]["compressed_text_used"])),
                "update_turn": update_turn(probes[pid], contexts[pid]),
                "prediction": score.get("prediction"),
                "full_context_prediction": full.get("prediction"),
                "gold": score["gold"],
                "old_value": score["old_value"],
            }
        )
    wrong = [c for c in cases if c["kind"] != "correct"]
    lines: Counter[tuple[str, str]] = Counter()  # (what the line names, whose answer is right)
    slots: Counter[tuple[str, str]] = Counter()  # (slot kind, whose answer is right)
    for pid, score in scores.items():
        right = bool(score["scores"]["strict"])
        full_right = bool(full_scores[pid]["scores"]["strict"])
        named = state_line(score, str(contexts[pid]["compressed_text_used"]))
        lines[named, "right" if right else "wrong"] += 1
        lines[named, "full context right"] += full_right
        group = slot_kind(str(score["slot"]))
        slots[group, "probes"] += 1
        slots[group, "right"] += right
        slots[group, "full context right"] += full_right
        slots[group, "only it"] += right > full_right
        slots[group, "only full context"] += full_right > right
    return {
        "by_slot": slots,
        "state_line": lines,
        "kept": len(cases),
        "read_kept": sum(c["kind"] == "correct" for c in cases),
        "full_context_right_on_kept": sum(c["full_context_kind"] == "correct" for c in cases),
        "n_p2": len(scores),
        "cases": cases,
        "wrong_by_kind": Counter(c["kind"] for c in wrong),
        "wrong_by_kind_full_right": Counter(
            c["kind"] for c in wrong if c["full_context_kind"] == "correct"
        ),
        "full_wrong_by_kind": Counter(
            c["full_context_kind"] for c in cases if c["full_context_kind"] != "correct"
        ),
        "update_turn_wrong": Counter(c["update_turn"] for c in wrong),
        "update_turn_right": Counter(c["update_turn"] for c in cases if c["kind"] == "correct"),
    }


def report(result: dict[str, Any], method: str) -> str:
    kept, n = result["kept"], result["n_p2"]
    lines = [
        f"{method}: value kept in {kept} of {n} P2 probes; read right {result['read_kept']} "
        f"of {kept}; full context right on the same {kept}: "
        f"{result['full_context_right_on_kept']}",
        "",
        f"| kind of answer | {method} wrong (of {kept} kept) | of those, full context right "
        f"| full context wrong on the same {kept} |",
        "|---|---|---|---|",
    ]
    for k in KINDS[1:]:
        lines.append(
            f"| {k} | {result['wrong_by_kind'][k]} | {result['wrong_by_kind_full_right'][k]} "
            f"| {result['full_wrong_by_kind'][k]} |"
        )
    wrong = sum(result["wrong_by_kind"].values())
    lines += [
        f"| all | {wrong} | {sum(result['wrong_by_kind_full_right'].values())} "
        f"| {sum(result['full_wrong_by_kind'].values())} |",
        "",
        "| update turn reached the reader | answers wrong | answers right |",
        "|---|---|---|",
    ]
    for state in ("whole", "cut", "dropped"):
        lines.append(
            f"| {state} | {result['update_turn_wrong'][state]} "
            f"| {result['update_turn_right'][state]} |"
        )
    line_counts = result["state_line"]
    if any(named != "no line" for named, _ in line_counts):
        lines += [
            "",
            f"| the state line (all {n} P2 probes) | answers wrong | answers right "
            "| full context right on the same |",
            "|---|---|---|---|",
        ]
        for named in ("current value", "other values", "no line"):
            lines.append(
                f"| {named} | {line_counts[named, 'wrong']} | {line_counts[named, 'right']} "
                f"| {line_counts[named, 'full context right']} |"
            )
    by_slot = result["by_slot"]
    columns = ("probes", "right", "full context right", "only it", "only full context")
    lines += [
        "",
        f"| slot kind (all {n} P2 probes) | probes | {method} right | full context right "
        "| only it right | only full context right |",
        "|---|---|---|---|---|---|",
    ]
    for group in SLOT_KINDS:
        lines.append(f"| {group} | " + " | ".join(str(by_slot[group, c]) for c in columns) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=".", help="the project folder holding data/")
    ap.add_argument("--method", default="turning_point")
    ap.add_argument("--ratio", type=float, default=0.3)
    ap.add_argument("--dataset", default="sgd", help="the run's dataset name (e.g. multiwoz)")
    ap.add_argument("--cases", action="store_true", help="also print every wrong case")
    args = ap.parse_args(argv)
    result = analyse(Path(args.root), args.method, args.ratio, args.dataset)
    print(report(result, args.method))
    if args.cases:
        for c in result["cases"]:
            if c["kind"] != "correct":
                print(json.dumps(c, ensure_ascii=False))


if __name__ == "__main__":
    main()
