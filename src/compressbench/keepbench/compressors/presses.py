"""TPBench's KV presses on KEEP cases: the reader prefills the case under the press, and the
context tokens the press kept, decoded in order, are the compressed context.

Every press the Method registry knows runs here by its name: a preset (``snapkv``,
``pyramidkv``, ``streamingllm``, ``chunkkv``) or any kvpress press class (``KnormPress``),
with the same parameters as in TPBench (``mode`` and the press's own settings) plus the
reader's (``model``: None = the offline SmolLM2-135M-Instruct; ``reader_options``: extra
``HFReader`` parameters). Only the ``hf`` backend can run a press (it needs the model in
process). How the case is prefilled and read back: :mod:`.press_span`.

Budget: a press keeps a fraction of the cache, a KEEP compressor K sentences. The press
runs at the retained fraction ``r = min(1, K / n)`` (:func:`retained_fraction`), K the case's
sentence budget at the budget scale and n its number of sentences: the fraction of the
context a sentence selector keeps, i.e. the token share of K sentences of average length. As in
TPBench, kvpress's ``compression_ratio = 1 - r`` applies to every prefilled token (template
and, in ``full_prompt`` mode, the question too); the fraction of context tokens really kept
is measured and recorded. Each row's ``record`` holds the budget unit (``keep_sentences``, K),
the derived ``r``, the press's own unit (``kv_cache_entries``), the mode requested and the mode
used with the fallback reason, and the reader's identity. A press that masks or merges cache
entries instead of pruning them keeps no decodable subset: it stops the run with a one-line
error naming it (:class:`~compressbench.errors.InputError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compressbench.compress.kv.record import BUDGET_UNIT as PRESS_UNIT
from compressbench.compress.method import Compression, RetentionUnavailable, Source
from compressbench.compress.press_method import PressMethod
from compressbench.compress.registry import check_choices, get_method, known_methods, method_entry
from compressbench.errors import InputError
from compressbench.keepbench.compressors.backend import shared_reader
from compressbench.keepbench.compressors.base import KeepMethodBase, budget_of
from compressbench.keepbench.compressors.press_span import PROMPT_VERSION, press_case
from compressbench.keepbench.flops_accounting import press_flops
from compressbench.readers.base import Reader

PRESS_FAMILIES = ("kv_press", "kvpress_class")
READER_PARAMETERS = ("model", "reader_options")
BUDGET_RULE = "r = min(1, K / n_sentences)"
RENDER = "kept_tokens"  # runs of kept context tokens, decoded, joined by " \u2026 "


def keep_press_names() -> list[str]:
    """Every press name that runs on KEEP cases (presets and kvpress classes)."""
    return sorted({n for f in PRESS_FAMILIES for n in known_methods(f)})


def is_keep_press(name: str) -> bool:
    entry = method_entry(name)
    return entry is not None and entry.family in PRESS_FAMILIES


def press_parameters(name: str) -> tuple[str, ...]:
    """The keys a KEEP press accepts: the press's own (``mode``...) and the reader's."""
    entry = method_entry(name)
    if entry is None or entry.family not in PRESS_FAMILIES:
        raise KeyError(f"{name!r} is not a KV press")
    return (*entry.parameters, *READER_PARAMETERS)


def check_press_values(name: str, params: Mapping[str, Any], source: str, field: str) -> None:
    """InputError naming the field unless every restricted value (``mode``) is allowed."""
    check_choices(method_entry(name), params, source, f"{field}.{name}")


def retained_fraction(k: int, n_sentences: int) -> float:
    """The press's retained fraction for sentence budget ``k`` of ``n_sentences``."""
    if k < 1 or n_sentences < 1:
        raise ValueError(f"need k >= 1 and n_sentences >= 1, got {k}, {n_sentences}")
    return min(1.0, k / n_sentences)


@dataclass
class KeepPressMethod(KeepMethodBase):
    """A KV press keeping the share of a KEEP case's context that K sentences are."""

    flops_account = staticmethod(press_flops)  # counts its cells

    name: str
    params: dict[str, Any] = field(default_factory=dict)

    family = "kv_press_on_sentences"
    needs_reader = True

    @classmethod
    def build(cls, name: str, params: Mapping[str, Any] | None = None) -> KeepPressMethod:
        allowed = press_parameters(name)
        unknown = sorted(set(params or {}) - set(allowed))
        if unknown:
            raise KeyError(f"unknown parameter {unknown[0]!r} of {name!r}; allowed: {allowed}")
        return cls(name, dict(params or {}))

    def press_method(self) -> PressMethod:
        """The TPBench press method (preset or class, ``mode``, overrides)."""
        own = {k: v for k, v in self.params.items() if k not in READER_PARAMETERS}
        method = get_method(self.name, own)
        if not isinstance(method, PressMethod):  # pragma: no cover - families checked above
            raise TypeError(f"{self.name!r} is not a KV press")
        return method

    def reader(self) -> Reader:
        return shared_reader("hf", self.params.get("model"), self.params.get("reader_options"))

    def describe(self) -> dict[str, Any]:
        press = self.press_method()
        return {
            **{k: v for k, v in self.params.items() if k != "mode"},
            "mode": press.mode,
            "backend": "hf",
            "prompt_version": PROMPT_VERSION,
            "budget_rule": BUDGET_RULE,
        }

    def compress(self, source: Source, ratio: float) -> Compression:
        """Press ``source``'s case at budget scale ``ratio`` (see the module docstring)."""
        k = budget_of(source, ratio)
        n = len(source.units)
        press = self.press_method()
        r = retained_fraction(k, n) if n else 1.0
        reader: Any = self.reader()
        try:
            pressed = press_case(
                reader.model,
                reader.tokenizer,
                source.case,  # type: ignore[attr-defined]
                press.press(r),
                press.mode,
                int(reader.max_input_tokens),
            )
        except RetentionUnavailable as exc:
            raise InputError(
                f"press {self.name!r} cannot run on KEEP cases: {exc}",
                field=f"keepbench.compressors.{self.name}",
            ) from None
        extra = {
            "n_sentences": n,
            "retained_fraction": r,
            "budget_rule": BUDGET_RULE,
            "press": {
                **press.press_record(r),
                "budget_unit": PRESS_UNIT,
                **pressed.record,
            },
            "model_id": reader.model_id,
            "model_revision": reader.revision,
            "backend": reader.name,
        }
        return Compression(
            text=pressed.text,
            kept_ids=(),
            kept_text=pressed.text,
            n_units=n,
            budget=k,
            budget_unit=self.budget_unit,
            render=RENDER,
            ratio=ratio,
            record=self._record(k, extra),
        )
