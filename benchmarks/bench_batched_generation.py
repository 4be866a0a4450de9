"""Batched vs one-at-a-time generation on the default reader (SmolLM2-135M-Instruct, CPU).

Runs ~24 TPBench-like probes (the released rows in ../shared/ref/probe_examples.jsonl when
present, else synthetic dialogues rendered with the same templates) once serially and once in
length-sorted batches, asserts the answers are identical and prints the throughput ratio.

    python benchmarks/bench_batched_generation.py [--n 24] [--batch-size 8]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from compressbench.readers.base import ChatRequest
from compressbench.readers.hf import HFReader
from compressbench.readers.smollm import prepare_default_model

PROBES = Path(__file__).resolve().parents[2] / "shared" / "ref" / "probe_examples.jsonl"
SYSTEM = (
    "You are reading a conversation that may be partial or compressed. Answer ONLY using the "
    "provided context. Reply with a single JSON object and no other text. Do not add markdown "
    "fences."
)
SCHEMA = (
    '{"value": <string>, "support": <verbatim span from context, <= 30 words>, '
    '"abstain": <true if you cannot tell, else false>}'
)
QUESTION = (
    "After the most recent change visible in the context, what is the user's CURRENT value for "
    "{slot}? Reply with one short value."
)


def released_probes(n: int) -> list[ChatRequest]:
    rows = [json.loads(line) for line in PROBES.read_text().splitlines() if line.strip()]
    return [
        ChatRequest(
            f"{r['dialogue_id']}:{r['method']}:{r['probe_type']}",
            r["prompt_system"],
            r["prompt_user"],
            128 if r["probe_type"] == "P1_LATE" else 96,
        )
        for r in rows[:n]
    ]


def synthetic_probes(n: int, seed: int = 0) -> list[ChatRequest]:
    rng = random.Random(seed)
    cities = ["Berkeley", "Boston", "Paris", "Denver", "Austin", "Seattle"]
    times = ["6 pm", "7:30 pm", "noon", "8 am", "quarter to 1 in the afternoon"]
    out = []
    for i in range(n):
        turns = [f"I need a table in {rng.choice(cities)}.", "What time would you like?"]
        for _ in range(rng.randint(1, 12)):
            turns += [f"Let's say {rng.choice(times)}.", "Noted. Anything else?"]
        ctx = "\n".join(f"[T{j}] {('USER', 'SYSTEM')[j % 2]}: {t}" for j, t in enumerate(turns))
        user = (
            "Context:\n"
            + ctx
            + "\n\nQuestion: "
            + QUESTION.format(slot="time")
            + "\n\nRequired JSON schema:\n"
            + SCHEMA
            + "\nReply with only the JSON object."
        )
        out.append(ChatRequest(f"synthetic:{i}", SYSTEM, user, 96))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument(
        "--threads", type=int, default=None, help="torch threads (default: torch's)"
    )
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--attn", default="eager", help="attention implementation")
    args = parser.parse_args()

    start = time.perf_counter()
    prepared = prepare_default_model()
    print(
        f"model ready in {time.perf_counter() - start:.1f} s "
        f"(dequantised now: {prepared.dequantise_seconds:.1f} s)"
    )
    requests = released_probes(args.n) if PROBES.exists() else synthetic_probes(args.n)
    source = "released rows" if PROBES.exists() else "synthetic dialogues"
    print(f"{len(requests)} probes from {source}")
    reader = HFReader(
        batch_size=1, num_threads=args.threads, dtype=args.dtype, attn_implementation=args.attn
    )
    print(f"dtype {args.dtype}, attention {args.attn}")

    start = time.perf_counter()
    serial = reader.generate(requests)
    t_serial = time.perf_counter() - start
    reader.batch_size = args.batch_size
    start = time.perf_counter()
    batched = reader.generate(requests)
    t_batched = time.perf_counter() - start

    same = [
        (a.raw, a.tokens_out) == (b.raw, b.tokens_out) for a, b in zip(serial, batched, strict=True)
    ]
    tokens = sum(g.tokens_out for g in serial)
    json_ok = sum(g.error is None for g in serial)
    print(
        f"serial : {t_serial:7.1f} s  {len(requests) / t_serial:6.3f} req/s  "
        f"{tokens / t_serial:6.1f} new tok/s  ({t_serial / len(requests):.2f} s/prompt)"
    )
    print(
        f"batch {args.batch_size}: {t_batched:7.1f} s  {len(requests) / t_batched:6.3f} req/s  "
        f"{tokens / t_batched:6.1f} new tok/s"
    )
    print(f"throughput ratio batched/serial: {t_serial / t_batched:.2f}x")
    print(f"identical answers: {sum(same)}/{len(same)}; JSON parsed: {json_ok}/{len(serial)}")
    assert all(same), "batched answers differ from one-at-a-time answers"


if __name__ == "__main__":
    main()
