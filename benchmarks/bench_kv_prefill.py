"""Benchmark: KV-press kept positions from one shared forward per event against one pressed
prefill per (event, press, ratio), on real SGD P2 prompts and the default SmolLM2 reader.

For every P2- or P3-eligible change event of the first ``--dialogues`` SGD test dialogues, the
event's full-context P2 prompt (as the retention diagnostic renders it) is
(a) prefilled under each of the four presets (snapkv, pyramidkv, streamingllm in full-prompt
mode, chunkkv context-only) at every ratio with :func:`run_with_press`, as today, and
(b) passed once to :func:`kept_positions_many` (one forward per distinct prefilled sequence:
the full prompt, and chunkkv's context; ``--share-prefix``: the context cut from the full
prompt's forward). Prints prefills per event and wall time of both and exits 1 unless every
kept position (majority and any-slot) and per-layer count is identical and (b) needs >= 5x
(``--share-prefix``: 10x) fewer prefills per event.

    python benchmarks/bench_kv_prefill.py [--corpora ../shared/corpora] [--dialogues 5]
        [--share-prefix]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path
from typing import Any

from compressbench.compress.kv.generate import run_with_press
from compressbench.compress.kv.shared import PressJob, kept_positions_many
from compressbench.compress.method import Source
from compressbench.compress.presses import get_preset, get_press
from compressbench.compress.registry import get_method
from compressbench.corpora.loaders import load_corpus
from compressbench.readers.registry import get_reader
from compressbench.tpbench.probes import probe_id_for
from compressbench.tpbench.retention_reader import LazyReader
from compressbench.tpbench.transitions import dialogue_transitions

DEFAULT_CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
PRESETS = ("snapkv", "pyramidkv", "streamingllm", "chunkkv")
FIELDS = ("mode", "kept_entries_per_layer", "kept_positions", "kept_positions_any")


def event_prompts(path: Path, dialogues: int, reader: LazyReader) -> list[tuple[str, list[int]]]:
    """``(templated text, ids)`` of each eligible event's full-context P2 prompt."""
    from compressbench.text.normalize import humanize_slot
    from compressbench.tpbench.prompts import build_prompt

    full = get_method("snapkv")  # a press's text is the full context
    out = []
    for d in itertools.islice(load_corpus("sgd", path, ["test"]), dialogues):
        for t in dialogue_transitions(d):
            if not (t.p2_eligible or t.p3_eligible):
                continue
            key = probe_id_for(d.dataset, d.dialogue_id, t.event_index)
            context = full.compress(Source(d.turns, key=key), 0.3).text
            prompt = build_prompt("P2", context, humanize_slot(t.slot))
            out.append(reader.prompt(prompt.system, prompt.user))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    p.add_argument("--dialogues", type=int, default=5)
    p.add_argument("--ratios", default="0.1,0.3,0.5,0.7")
    p.add_argument("--share-prefix", action="store_true")
    a = p.parse_args(argv)
    ratios = [float(r) for r in a.ratios.split(",")]
    path = a.corpora / "sgd"
    if not path.is_dir():
        print(f"no SGD corpus at {path}")
        return 2
    reader = LazyReader(lambda: get_reader("hf"))
    prompts = event_prompts(path, a.dialogues, reader)
    model, tok, limit = reader.model, reader.tokenizer, reader.max_input_tokens

    def jobs() -> dict[tuple[str, float], PressJob]:
        return {
            (n, r): PressJob(get_press(n, r), get_preset(n).default_mode)
            for n in PRESETS
            for r in ratios
        }

    text0, ids0 = prompts[0]  # warm both paths up once
    kept_positions_many(model, tok, text0, jobs(), prompt_ids=ids0, share_prefix=a.share_prefix)
    run_with_press(model, tok, text0, get_press("snapkv", 0.3), 1, prompt_ids=ids0)
    old_s = new_s = 0.0
    old_n = new_n = 0
    mismatches: list[Any] = []
    for i, (text, ids) in enumerate(prompts):
        todo = jobs()
        t = time.perf_counter()
        shared, forwards = kept_positions_many(
            model,
            tok,
            text,
            todo,
            prompt_ids=ids,
            max_input_tokens=limit,
            share_prefix=a.share_prefix,
        )
        new_s += time.perf_counter() - t
        new_n += forwards
        for key, job in todo.items():
            t = time.perf_counter()
            _, rec = run_with_press(
                model, tok, text, job.press, 1, job.mode, max_input_tokens=limit, prompt_ids=ids
            )
            old_s += time.perf_counter() - t
            old_n += 1
            bad = [f for f in FIELDS if shared[key][f] != getattr(rec, f)]
            if bad:
                mismatches.append((i, key, bad))
        print(f"event {i + 1}/{len(prompts)}: shared {new_s:.1f} s, separate {old_s:.1f} s",
              file=sys.stderr, flush=True)  # fmt: skip
    events = len(prompts)
    print(f"SGD test, first {a.dialogues} dialogues: {events} events x {len(PRESETS)} presses x")
    shared_by = "one forward, prefix shared" if a.share_prefix else "a forward per sequence"
    print(f"{len(ratios)} ratios (SmolLM2-135M-Instruct, {model.config._attn_implementation})")
    print("| path | prefills per event | wall (s) | s per event |")
    print("|---|---|---|---|")
    print(f"| one prefill per (press, ratio) | {old_n / events:.1f} | {old_s:.1f} | "
          f"{old_s / events:.2f} |")  # fmt: skip
    print(f"| shared ({shared_by}) | {new_n / events:.1f} | {new_s:.1f} | {new_s / events:.2f} |")
    print(f"prefills {old_n / new_n:.1f}x fewer, wall {old_s / new_s:.1f}x faster;"
          f" kept positions identical: {not mismatches}")  # fmt: skip
    if mismatches:
        print("mismatches (event, job, fields):", mismatches[:10])
    return 0 if not mismatches and old_n >= (10 if a.share_prefix else 5) * new_n else 1


if __name__ == "__main__":
    sys.exit(main())
