"""Build the built-in mini corpus from the authored dialogues.

Writes ``src/compressbench/corpora/builtin/data/test/`` (``dialogues_00N.json`` from
``dialogues_N.py`` and ``schema.json`` from ``schema_def.py``), wherever it is run from:

    python scripts/builtin_corpus/build.py            # rebuild all files
    python scripts/builtin_corpus/build.py 2          # rebuild dialogues_002.json (+ schema)
    python scripts/builtin_corpus/build.py --check    # exit 1 if a committed file is stale

The output is deterministic, so ``--check`` compares the rebuilt files with the committed ones
byte for byte (nothing is written).
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dsl import D, S, U
from schema_def import SERVICES, schema_json

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
OUT = REPO_ROOT / "src" / "compressbench" / "corpora" / "builtin" / "data" / "test"
FILES = (1, 2, 3)  # dialogues_N.py -> dialogues_00N.json
SCHEMA = "schema.json"


def norm(x: str) -> str:
    """Lower-case, punctuation (except ``:/-``) to spaces, whitespace collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s:/\-]+", " ", x.lower())).strip()


def act(name: str, slot: str, values: Sequence[str]) -> dict[str, Any]:
    return {"act": name, "canonical_values": list(values), "slot": slot, "values": list(values)}


def spans(text: str, values_by_slot: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """Character spans of the first value of each slot found in the text (word-bounded)."""
    out = []
    for slot, vals in values_by_slot.items():
        for v in vals:
            m = re.search(r"(?<!\w)" + re.escape(v) + r"(?!\w)", text)
            if m:
                out.append({"exclusive_end": m.end(), "slot": slot, "start": m.start()})
                break
    return out


def build(d: D, file_no: int, index: int, warnings: list[str]) -> dict[str, Any]:
    """SGD dialogue ``<file_no>_<index>`` from its authored form; soft problems go to warnings."""
    did = f"{file_no}_{index:05d}"
    svc = d.service
    intents: dict[str, str] = {}
    state: dict[str, dict[str, list[str]]] = {}
    services: list[str] = []
    turns = []
    all_text = " ".join(norm(t.text) for t in d.turns)
    for i, t in enumerate(d.turns):
        assert isinstance(t, U if i % 2 == 0 else S), (did, i, "alternation")
        if isinstance(t, U):
            if t.svc:
                svc = t.svc
            if svc not in services:
                services.append(svc)
            spec = SERVICES[svc]
            prev_intent = intents.get(svc, "NONE")
            if i == 0:
                intents[svc] = d.intent
            if t.intent:
                intents[svc] = t.intent
            assert intents.get(svc) in spec["intents"], (did, i, intents.get(svc))
            st = state.setdefault(svc, {})
            actions = []
            if intents[svc] != prev_intent:
                actions.append(act("INFORM_INTENT", "intent", [intents[svc]]))
            updates = {}
            for slot, v in t.slots.items():
                assert slot in spec["slots"], (did, i, svc, slot)
                vals = [v] if isinstance(v, str) else list(v)
                sdef = spec["slots"][slot]
                if sdef["is_categorical"]:
                    assert vals[0] in sdef["possible_values"], (did, i, slot, vals)
                elif slot not in d.absent and norm(vals[0]) not in all_text:
                    warnings.append(f"{did} turn {i}: {slot}={vals[0]!r} not in text")
                updates[slot] = vals
                st[slot] = vals
                actions.append(act("INFORM", slot, vals))
            for slot in t.req:
                assert slot in spec["slots"], (did, i, slot)
                actions.append(act("REQUEST", slot, []))
            if not actions and t.text.lower().startswith(("yes", "okay", "sure")):
                actions.append(act("AFFIRM", "", []))
            frame = {
                "actions": actions,
                "service": svc,
                "slots": spans(t.text, updates),
                "state": {
                    "active_intent": intents[svc],
                    "requested_slots": list(t.req),
                    "slot_values": {k: list(st[k]) for k in sorted(st)},
                },
            }
            turns.append({"frames": [frame], "speaker": "USER", "utterance": t.text})
        else:
            spec = SERVICES[svc]
            actions = [act("REQUEST", slot, []) for slot in t.req]
            for slot in t.req:
                assert slot in spec["slots"], (did, i, slot)
            confirmed = {}
            if "Please confirm" in t.text:
                low = t.text.lower()
                for slot, vals in state.get(svc, {}).items():
                    if any(v.lower() in low for v in vals):
                        actions.append(act("CONFIRM", slot, vals))
                        confirmed[slot] = vals
            frame = {"actions": actions, "service": svc, "slots": spans(t.text, confirmed)}
            turns.append({"frames": [frame], "speaker": "SYSTEM", "utterance": t.text})
    return {"dialogue_id": did, "services": services, "turns": turns}


def load_dialogues(file_no: int) -> list[D]:
    """The ``DIALOGUES`` list of ``dialogues_<file_no>.py``."""
    return list(importlib.import_module(f"dialogues_{file_no}").DIALOGUES)


def render(files: Sequence[int], warnings: list[str]) -> dict[str, str]:
    """File name -> exact file content, for the given dialogue files and the schema."""
    out = {}
    for n in files:
        dialogues = [build(d, n, i, warnings) for i, d in enumerate(load_dialogues(n))]
        out[f"dialogues_{n:03d}.json"] = json.dumps(dialogues, indent=2, ensure_ascii=False) + "\n"
    out[SCHEMA] = json.dumps(schema_json(), indent=2) + "\n"
    return out


def check(rendered: Mapping[str, str], out_dir: Path, all_files: bool) -> list[str]:
    """Problems found comparing the rendered files with ``out_dir`` (empty: up to date)."""
    problems = []
    for name, text in rendered.items():
        path = out_dir / name
        if not path.is_file():
            problems.append(f"{name}: missing")
            continue
        new, old = text.encode("utf-8"), path.read_bytes()
        if new != old:
            new_lines, old_lines = new.splitlines(), old.splitlines()
            line = next(
                (
                    k
                    for k, (a, b) in enumerate(zip(new_lines, old_lines, strict=False), 1)
                    if a != b
                ),
                min(len(new_lines), len(old_lines)) + 1,
            )
            problems.append(f"{name}: differs from the rebuilt file (first at line {line})")
    if all_files:  # a stray dialogues_*.json would still be loaded as part of the corpus
        for path in sorted(out_dir.glob("dialogues_*.json")):
            if path.name not in rendered:
                problems.append(f"{path.name}: not generated by any dialogues_N.py")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "files",
        nargs="*",
        type=int,
        metavar="N",
        help=f"dialogue files to rebuild (default: all of {', '.join(map(str, FILES))})",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if any rebuilt file differs from the committed one",
    )
    parser.add_argument("--out", type=Path, default=OUT, help=f"output directory (default: {OUT})")
    args = parser.parse_args(argv)
    if unknown := sorted(set(args.files) - set(FILES)):
        parser.error(f"no such dialogue file: {unknown} (known: {list(FILES)})")
    files = sorted(set(args.files)) or list(FILES)

    warnings: list[str] = []
    rendered = render(files, warnings)
    for w in warnings:
        print("WARN", w, file=sys.stderr)
    n_dialogues = sum(len(load_dialogues(n)) for n in files)

    if args.check:
        problems = check(rendered, args.out, all_files=files == list(FILES))
        for p in problems:
            print("STALE", p, file=sys.stderr)
        if problems:
            print(
                f"{len(problems)} file(s) out of date; rebuild with "
                "`python scripts/builtin_corpus/build.py`",
                file=sys.stderr,
            )
            return 1
        print(f"{n_dialogues} dialogues, {len(rendered)} files up to date in {args.out}")
        return 0

    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in rendered.items():
        (args.out / name).write_text(text, encoding="utf-8", newline="\n")
    print(f"{n_dialogues} dialogues, {len(rendered)} files written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
