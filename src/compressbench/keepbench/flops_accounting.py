"""Per-case inference FLOPs of a KEEP compressor cell (KEEP-Bench App. C.4).

A compressor names the function that counts its cell as its ``flops_account`` member; each
counts with the model config the compressor actually loaded (or ``keepbench.flops_configs[name]``, a
``config.json``, when it runs behind an API):

* ``llm``: decoder formula with ``T = P + G - 1``, ``Z = G`` (P, G recorded by the reader),
  **prefix-amortised** per subset (eq. 7): the longest common token prefix of the subset's
  prompts, tokenised as the reader feeds them, is prefilled once;
* ``brief_pro``: decoder formula, no amortisation (no ICL prefix);
* ``recomp_abstractive``: encoder-decoder formula, n = input tokens, r = output tokens;
* ``recomp_extractive``: bi-encoder formula over the query and every candidate sentence
  (token counts from the encoder's own tokenizer), 0 when the budget keeps every sentence
  (nothing is encoded);
* ``exit``: one classification pass per sentence (``exit`` formula; the bare decoder with
  full-sequence logits when no adapter is loaded);
* KV presses: the reader's forward pass over the prompt it prefilled under the press plus the
  question tokens fed after it, one generated token (``T = P``, ``Z = 1``); the press's own
  scoring (a few attention reads) is not counted.

Methods without a model (turn selectors on sentences) get ``None``: no FLOPs estimate, no EPR.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from compressbench.compress.method import Compression, Source
from compressbench.flops.amortize import amortize, common_prefix_length
from compressbench.flops.cells import reader_config
from compressbench.flops.decoder import decoder_cost
from compressbench.flops.encdec import encdec_cost
from compressbench.flops.fields import ConfigFields
from compressbench.readers.base import Reader

log = logging.getLogger(__name__)


@dataclass
class CellFlops:
    """FLOPs of every case of a cell (None: not estimated) and how they were counted."""

    per_case: list[float | None]
    formula: str | None = None
    coefficients: dict[str, int] = field(default_factory=dict)
    prefix_tokens: dict[str, int] = field(default_factory=dict)  # subset -> shared prefix p
    note: str = ""

    def summary(self) -> dict[str, Any]:
        counted = [f for f in self.per_case if f is not None]
        return {
            "formula": self.formula,
            "coefficients": self.coefficients,
            "prefix_tokens": self.prefix_tokens,
            "cases_counted": len(counted),
            "tflops_per_case": sum(counted) / 1e12 / len(counted) if counted else None,
            "note": self.note,
        }


Account = Callable[[Any, Sequence[Source], Sequence[Compression], str | None], CellFlops]


class NoLocalConfig(ValueError):
    """The compressor's model config is not available here (an API model)."""


def model_config(model: Any, override: str | None, what: str) -> ConfigFields:
    if override is not None:
        return ConfigFields.load(override)
    config = getattr(model, "config", None)
    if config is None or not callable(getattr(config, "to_dict", None)):
        raise NoLocalConfig(f"{what} has no local model config; set keepbench.flops_configs")
    return ConfigFields(config.to_dict(), source=f"{what} config")


def _tokens(comp: Compression) -> tuple[int, int]:
    return int(comp.record.get("tokens_in") or 0), int(comp.record.get("tokens_out") or 0)


def _prompt_ids(reader: Reader, method: Any, source: Source, k: int) -> list[int] | None:
    """The token ids the reader feeds for this case's request (None: not a local reader)."""
    return reader.prompt_ids(method.request(source, k))


def llm_flops(
    method: Any, sources: Sequence[Source], comps: Sequence[Compression], override: str | None
) -> CellFlops:
    reader = method.reader()
    raw = None if override is not None else reader_config(reader)
    if raw is not None:
        cost = decoder_cost(ConfigFields(raw, source="the llm reader config"))
    else:
        cost = decoder_cost(model_config(reader.model, override, "the llm reader"))
    by_subset: dict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(sources):
        by_subset[s.case.subset].append(i)  # type: ignore[attr-defined]
    per_case: list[float | None] = [None] * len(sources)
    prefixes: dict[str, int] = {}
    for subset, idx in by_subset.items():
        ids = [_prompt_ids(reader, method, sources[i], comps[i].budget) for i in idx]
        lengths = [_tokens(comps[i]) for i in idx]
        p = 0 if any(x is None for x in ids) else common_prefix_length(ids)  # type: ignore[arg-type]
        p = min([p, *(n for n, _ in lengths)])
        prefixes[subset] = p
        for i, f in zip(idx, amortize(cost, lengths, p).per_case, strict=True):
            per_case[i] = f
    return CellFlops(
        per_case, "decoder", cost.to_dict(), prefixes, "prefix-amortised per subset (eq. 7)"
    )


def brief_pro_flops(
    method: Any, sources: Sequence[Source], comps: Sequence[Compression], override: str | None
) -> CellFlops:
    cost = decoder_cost(model_config(method.reader().model, override, "brief_pro"))
    return CellFlops([cost.case(*_tokens(c)) for c in comps], "decoder", cost.to_dict())


def recomp_abstractive_flops(
    method: Any, sources: Sequence[Source], comps: Sequence[Compression], override: str | None
) -> CellFlops:
    model = method.reader().model
    cost = encdec_cost(model_config(model, override, "recomp_abstractive"))
    return CellFlops([cost.case(*_tokens(c)) for c in comps], "encoder_decoder", cost.to_dict())


def press_flops(
    method: Any, sources: Sequence[Source], comps: Sequence[Compression], override: str | None
) -> CellFlops:
    cost = decoder_cost(model_config(method.reader().model, override, "the press"))

    def prompt_tokens(comp: Compression) -> int:
        press = comp.record.get("press") or {}
        return int(press["prefill_tokens"]) + int(press.get("question_tokens_after_press") or 0)

    per_case: list[float | None] = [cost.case(prompt_tokens(c), 1) for c in comps]
    return CellFlops(per_case, "decoder", cost.to_dict(), note="reader prefill under the press")


def cell_flops(
    name: str,
    method: Any,
    sources: Sequence[Source],
    comps: Sequence[Compression],
    override: str | None = None,
) -> CellFlops:
    """The cell's FLOPs by its compressor's account (no account: not estimated)."""
    account = getattr(method, "flops_account", None)
    if account is None:
        return CellFlops([None] * len(sources), note="no model: FLOPs not estimated")
    try:
        return account(method, sources, comps, override)
    except NoLocalConfig as exc:  # an API-served model without keepbench.flops_configs
        log.warning("%s: FLOPs not estimated: %s", name, exc)
        return CellFlops([None] * len(sources), note=f"not estimated: {exc}")
