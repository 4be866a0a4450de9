"""A deterministic in-process reader for the TPBench chain: it answers from the probes file."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from compressbench.readers.base import ChatRequest, Generation, Reader
from compressbench.text.normalize import value_occurs_in_text
from compressbench.tpbench.probes import read_probes

CONTEXT_END = "\n\nQuestion:"


class GoldWhereVisibleReader(Reader):
    """Answers from the probes file: the gold value when it survives in the prompt's context
    (P2, P3), else abstains; P1 always states the gold goal. Deterministic, no model."""

    name = "gold_where_visible"
    revision = "1"

    def __init__(self, model: str) -> None:
        self.model_id = model
        self.probes = {f"{p.probe_type}|{p.seed}|{p.probe_id}": p for p in read_probes(model)}
        self.calls = 0

    def decoding(self) -> dict[str, Any]:
        return {"rule": "gold where visible"}

    def answer(self, request: ChatRequest) -> str:
        probe = self.probes[request.id]  # the answers stage's id: probe type|seed|probe id
        probe_type = probe.probe_type
        context = request.user.split(CONTEXT_END)[0]
        if probe_type == "P1":
            return json.dumps({"value": probe.gold, "abstain": False})
        value = probe.gold if probe_type == "P2" else probe.gold_value
        if not value_occurs_in_text(value, context, probe.dataset):
            return json.dumps({"value": "unknown", "abstain": True})
        if probe_type == "P2":
            return json.dumps({"value": value, "abstain": False})
        joint = f"{probe.gold_story_label}; {probe.slot_human}: {value}"
        return json.dumps({"value": joint, "abstain": False})

    def generate(self, requests: Sequence[ChatRequest]) -> list[Generation]:
        self.calls += len(requests)
        return [
            Generation(id=r.id, raw=(a := self.answer(r)), json_text=a, error=None)
            for r in requests
        ]
