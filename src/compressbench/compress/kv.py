"""KV-cache compression through kvpress: presses by name, presets, generation under a press.

KV-cache methods leave the displayed dialogue intact and prune the reader's stored keys and
values while it prefills (TPBench §5, §6.4; spec §3.10, §6). Their budget unit is cache
entries: a press keeps the fraction ``r`` of the entries it compresses, so
``compression_ratio = 1 - r`` (the fraction dropped).

* :func:`build_press` - any kvpress press by class name and keyword arguments, nested presses
  from dict specs (``{"name": "ChunkKVPress", "chunk_length": 20, "press": {"name":
  "SnapKVPress", "compression_ratio": 0.7}}``); :func:`press_spec` turns a press back into one.
* Presets by name (``snapkv``, ``pyramidkv``, ``streamingllm``, ``chunkkv``; one file each in
  :mod:`compressbench.compress.presses`) taking the retained fraction ``r``:
  :func:`get_press`, :data:`PRESS_PRESETS`, :func:`register_press_preset`.
* :func:`generate_with_press` - greedy generation under a press in one of two modes:

  - ``context_only``: the prompt before the *last* occurrence of ``question_marker`` (the
    system prompt and the dialogue) is prefilled with the press active; the question tail is
    then fed to the compressed cache and the answer generated without the press. Falls back to
    ``full_prompt`` (and records why) if the marker is missing or the context has at most
    ``window_size + 4`` tokens. This is how TPBench's ChunkKV rows were produced.
  - ``full_prompt``: the whole prompt is prefilled under the press (the question is inside the
    compressed window), then the answer is generated. kvpress compresses only while
    prefilling, so generation never runs under the press.

  Both modes decode greedily with a manual loop that keeps the original token positions after
  pruning (rotary positions continue from the uncompressed length), as kvpress's own pipeline
  does. When layers keep different numbers of entries (PyramidKV) the question tail is fed one
  token at a time, because one causal mask cannot fit layers of different lengths.

  The :class:`KVRecord` it returns says what happened: mode used, budget unit, compression
  ratio, context tokens, kept entries per layer (measured from the cache) and - for presses
  that prune by gathering cache rows, which covers SnapKV, PyramidKV, StreamingLLM and ChunkKV -
  the kept token positions, recovered by matching the kept key rows against the prefill keys,
  and the kept tokens' text for the retention diagnostic. Presses keep different entries per
  head and layer, so ``kept_positions`` / ``kept_token_text`` are the positions kept by at
  least half of the (layer, KV-head) slots and ``kept_positions_any`` /
  ``kept_token_text_any`` those kept by at least one; runs of kept tokens are joined by
  ``GAP`` so no phrase spans a gap. Presses that mask entries per head instead of pruning them
  (AdaKV style) leave the cache full; then, and wherever positions cannot be recovered,
  ``kept_tokens_unavailable_reason`` says why (``track_positions=False`` skips the recovery).

kvpress's chunk presses refuse eager attention weights; for them the weights are withheld (the
inner scorer recomputes its window attention), so ChunkKV also runs with eager attention, the
setting of the paper's ChunkKV P3 reader.

Nothing here caches, logs or retries: the pipeline does.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

BUDGET_UNIT = "kv_cache_entries"
MODES = ("context_only", "full_prompt")
DEFAULT_QUESTION_MARKER = "\n\nQuestion:"
DEFAULT_MAX_INPUT_TOKENS = 7168
GAP = " \u2026 "  # between non-contiguous runs of kept tokens in ``kept_token_text``
# kvpress presses that assert ``attentions is None`` (they rescore from hidden states).
MASKED = "masked"  # per-layer marker: the press masked entries instead of pruning them
_WITHHOLD_ATTENTIONS = frozenset(
    {"ChunkKVPress", "ChunkPress", "BlockPress", "EntropyGatedChunkKVPress"}
)


# -- presses by name ---------------------------------------------------------------------------


def compression_ratio_for(r: float) -> float:
    """kvpress ``compression_ratio`` (fraction dropped) for a retained fraction ``r``."""
    if not 0.0 < r <= 1.0:
        raise ValueError(f"retained fraction r must be in (0, 1], got {r}")
    return round(1.0 - r, 10)


def press_class(name: str) -> type:
    """A kvpress press class by its class name (``"SnapKVPress"``)."""
    import kvpress

    cls = getattr(kvpress, name, None)
    if not isinstance(cls, type) or not issubclass(cls, kvpress.BasePress):
        known = sorted(
            n
            for n in dir(kvpress)
            if isinstance(getattr(kvpress, n), type)
            and issubclass(getattr(kvpress, n), kvpress.BasePress)
        )
        raise KeyError(f"unknown kvpress press {name!r}; known: {', '.join(known)}")
    return cls


def _is_spec(value: Any) -> bool:
    return isinstance(value, Mapping) and ("name" in value or "class" in value)


def build_press(spec: str | Mapping[str, Any], **kwargs: Any) -> Any:
    """Build a kvpress press from a class name plus keyword arguments, or from a dict spec.

    ``build_press("SnapKVPress", compression_ratio=0.7, window_size=64, kernel_size=5)``;
    ``build_press({"name": "ChunkKVPress", "chunk_length": 20, "press": {"name":
    "SnapKVPress", "compression_ratio": 0.7}})``. Any keyword value that is itself a spec
    (a mapping with ``name``) is built first, so presses nest; lists of specs too
    (``ComposedPress(presses=[...])``).
    """
    if isinstance(spec, Mapping):
        params = dict(spec)
        name = params.pop("name", None) or params.pop("class", None)
        if not isinstance(name, str):
            raise ValueError(f"press spec needs a 'name': {dict(spec)!r}")
        params.update(kwargs)
    else:
        name, params = spec, dict(kwargs)

    def build_value(value: Any) -> Any:
        if _is_spec(value):
            return build_press(value)
        if isinstance(value, list | tuple) and value and all(_is_spec(v) for v in value):
            return [build_press(v) for v in value]
        return value

    cls = press_class(name)
    try:
        return cls(**{key: build_value(v) for key, v in params.items()})
    except TypeError as exc:
        raise TypeError(f"cannot build {name} with {sorted(params)}: {exc}") from exc


def press_spec(press: Any) -> dict[str, Any]:
    """The dict spec of a press (class name + init fields, nested presses as specs)."""

    def value(v: Any) -> Any:
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return press_spec(v)
        if isinstance(v, list | tuple):
            return [value(x) for x in v]
        if isinstance(v, int | float | str | bool) or v is None:
            return v
        return repr(v)

    spec: dict[str, Any] = {"name": type(press).__name__}
    if dataclasses.is_dataclass(press):
        for f in dataclasses.fields(press):
            if f.init and not f.name.startswith("_"):
                spec[f.name] = value(getattr(press, f.name))
    return spec


# -- presets -----------------------------------------------------------------------------------

PresetFactory = Callable[..., Any]


@dataclass(frozen=True)
class PressPreset:
    """A named press recipe: ``factory(r, **overrides)`` builds the press for fraction ``r``."""

    name: str
    factory: PresetFactory
    default_mode: str

    def build(self, r: float, **overrides: Any) -> Any:
        return self.factory(r, **overrides)


PRESS_PRESETS: dict[str, PressPreset] = {}


def register_press_preset(
    name: str, *, default_mode: str = "full_prompt"
) -> Callable[[PresetFactory], PresetFactory]:
    """Decorator for a preset factory ``(r, **overrides) -> press``."""
    if default_mode not in MODES:
        raise ValueError(f"default_mode must be one of {MODES}, got {default_mode!r}")

    def deco(factory: PresetFactory) -> PresetFactory:
        if name in PRESS_PRESETS:
            raise ValueError(f"press preset {name!r} registered twice")
        PRESS_PRESETS[name] = PressPreset(name, factory, default_mode)
        return factory

    return deco


def get_preset(name: str) -> PressPreset:
    """A registered preset by name."""
    from compressbench.compress import presses  # noqa: F401  (imports register every preset)

    try:
        return PRESS_PRESETS[name]
    except KeyError:
        known = ", ".join(sorted(PRESS_PRESETS))
        raise KeyError(f"unknown press preset {name!r}; known: {known}") from None


def get_press(name: str, r: float, **overrides: Any) -> Any:
    """Build a preset (``snapkv``...) for retained fraction ``r``, or any kvpress class by name
    (``"SnapKVPress"``, with ``compression_ratio = 1 - r`` unless given)."""
    from compressbench.compress import presses  # noqa: F401

    if name in PRESS_PRESETS:
        return PRESS_PRESETS[name].build(r, **overrides)
    overrides.setdefault("compression_ratio", compression_ratio_for(r))
    return build_press(name, **overrides)


# -- generation under a press --------------------------------------------------------------------


@dataclass
class KVRecord:
    """What one generation under a press did (JSON-ready through :meth:`to_dict`)."""

    mode_requested: str
    mode: str
    press: dict[str, Any]
    compression_ratio: float | None
    context_tokens: int  # tokens prefilled under the press
    question_tokens: int  # tokens fed after compression (0 in full_prompt mode)
    kept_entries_per_layer: list[int]
    kept_fraction: float  # mean kept entries / context tokens
    budget_unit: str = BUDGET_UNIT
    fallback_reason: str | None = None
    cache_entries_after_question: list[int] | None = None
    question_feed: str | None = None  # "block" | "token_by_token" (context_only)
    new_tokens: int = 0
    attn_implementation: str | None = None
    kept_positions: list[int] | None = None  # kept by a majority of (layer, kv-head) slots
    kept_positions_any: list[int] | None = None  # kept by at least one slot
    kept_token_text: str | None = None  # text of kept_positions, runs joined by GAP
    kept_token_text_any: str | None = None
    kept_tokens_unavailable_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def window_size_of(press: Any) -> int:
    """``window_size`` of the press or of a press nested in it (0 if none)."""
    seen = 0
    current = press
    while current is not None and seen < 8:
        w = getattr(current, "window_size", None)
        if isinstance(w, int):
            return w
        current = getattr(current, "press", None)
        seen += 1
    return 0


def _compression_ratio_of(press: Any) -> float | None:
    cr = getattr(press, "compression_ratio", None)
    return float(cr) if isinstance(cr, int | float) else None


@functools.lru_cache(maxsize=4)
def _hash_weights(width: int) -> torch.Tensor:
    import torch

    gen = torch.Generator().manual_seed(20260928)
    return torch.randint(1, 2**31 - 1, (width,), generator=gen, dtype=torch.int64)


def _row_hashes(x: torch.Tensor) -> torch.Tensor:
    """Exact integer hash of every row ``x[..., t, :]`` from its bytes (order-free, exact)."""
    import torch

    raw = x.detach().contiguous()
    as_bytes = raw.view(torch.uint8).to(torch.int64)  # [..., t, d * itemsize], on x's device
    return (as_bytes * _hash_weights(as_bytes.shape[-1]).to(x.device)).sum(dim=-1)


def match_kept_rows(before: torch.Tensor, after: torch.Tensor) -> torch.Tensor | None:
    """Positions in ``before`` ``[b, h, T, d]`` of each row of ``after`` ``[b, h, T', d]``.

    Returns ``[h, T']`` (batch row 0), or None if some kept row is not an exact copy of a
    prefill row (the press transformed keys instead of pruning them).
    """
    import torch

    b0, a0 = before[0], after[0]
    hb, ha = _row_hashes(b0), _row_hashes(a0)  # [h, T], [h, T']
    out = torch.empty(ha.shape, dtype=torch.long)
    for h in range(hb.shape[0]):
        order = torch.argsort(hb[h])
        sorted_h = hb[h][order]
        idx = torch.searchsorted(sorted_h, ha[h]).clamp(max=sorted_h.numel() - 1)
        if not torch.equal(sorted_h[idx], ha[h]):
            return None
        pos = order[idx]
        if not torch.equal(b0[h][pos], a0[h]):
            return None
        out[h] = pos.cpu()
    return out


@contextmanager
def _instrumented(press: Any, positions: dict[int, Any], track: bool = True) -> Iterator[None]:
    """Wrap ``press.compress`` for one prefill: withhold attentions where kvpress requires it,
    record the kept positions of every layer (if ``track``)."""
    original = press.compress
    withhold = type(press).__name__ in _WITHHOLD_ATTENTIONS

    def compress(
        module: Any, hidden_states: Any, keys: Any, values: Any, attentions: Any, kwargs: Any
    ) -> tuple[Any, Any]:
        new_keys, new_values = original(
            module, hidden_states, keys, values, None if withhold else attentions, kwargs
        )
        if track:
            layer = int(getattr(module, "layer_idx", len(positions)))
            if getattr(module, "masked_key_indices", None) is not None:
                positions[layer] = MASKED  # head-wise masking (AdaKV style), not pruning
            else:
                positions[layer] = match_kept_rows(keys, new_keys)
        return new_keys, new_values

    press.compress = compress
    try:
        yield
    finally:
        try:
            del press.compress
        except AttributeError:  # pragma: no cover - press defines compress per instance
            press.compress = original


def cache_lengths(cache: Any) -> list[int]:
    """Stored entries per layer of a transformers cache."""
    layers = getattr(cache, "layers", None)
    if layers is not None:
        return [
            int(layer.keys.shape[-2]) if layer.keys is not None and layer.keys.dim() == 4 else 0
            for layer in layers
        ]
    return [int(k.shape[-2]) for k in cache.key_cache]  # pragma: no cover - old transformers


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    for source in (getattr(model, "generation_config", None), tokenizer):
        value = getattr(source, "eos_token_id", None)
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return ids


def _forward(
    model: Any, ids: list[int], cache: Any, start: int, device: Any, uneven: bool = False
) -> Any:
    """One forward over ``ids`` at rotary positions ``start...``; returns last-token logits.

    ``uneven``: the layers' caches hold different numbers of entries (per-layer budgets).
    SDPA and flash attention need no mask for one new query, but eager attention adds
    transformers' mask, sized from layer 0, which fits no other layer. A single new query may
    see every cached key, so under eager it gets a zero additive mask of shape ``[1, 1, 1, 1]``
    that broadcasts over any key length (the other implementations are left as they are).
    """
    import torch

    input_ids = torch.tensor([ids], dtype=torch.long, device=device)
    position_ids = torch.arange(start, start + len(ids), device=device).unsqueeze(0)
    extra: dict[str, Any] = {}
    if uneven and len(ids) != 1:
        raise ValueError("uneven per-layer caches take one token per forward")
    if uneven and getattr(model.config, "_attn_implementation", None) == "eager":
        extra["attention_mask"] = torch.zeros((1, 1, 1, 1), dtype=model.dtype, device=device)
    out = model(
        input_ids=input_ids,
        past_key_values=cache,
        position_ids=position_ids,
        use_cache=True,
        logits_to_keep=1,
        **extra,
    )
    return out.logits[0, -1]


def _kept_text(tokenizer: Any, ids: Sequence[int], positions: Sequence[int]) -> str:
    runs: list[list[int]] = []
    prev = -2
    for p in positions:
        if p != prev + 1:
            runs.append([])
        runs[-1].append(ids[p])
        prev = p
    return GAP.join(tokenizer.decode(run, skip_special_tokens=False) for run in runs)


def generate_ids_with_press(
    model: Any,
    tokenizer: Any,
    context_ids: Sequence[int],
    question_ids: Sequence[int],
    press: Any,
    max_new_tokens: int,
    *,
    eos_token_ids: set[int] | None = None,
    cache: Any = None,
    track_positions: bool = True,
) -> tuple[list[int], dict[str, Any]]:
    """Prefill ``context_ids`` under ``press``, feed ``question_ids`` (may be empty) without it,
    then greedy-decode. Returns the new ids (ending at the first eos, inclusive) and the
    measurements (see :class:`KVRecord`). ``cache`` (an empty ``DynamicCache``) may be passed
    to inspect it afterwards; it then holds context, question and generated entries.
    ``track_positions=False`` skips recovering the kept positions (one hash pass over each
    layer's keys)."""
    import torch
    from transformers import DynamicCache

    device = next(model.parameters()).device
    eos = eos_token_ids if eos_token_ids is not None else _eos_ids(model, tokenizer)
    if cache is None:
        cache = DynamicCache()
    positions: dict[int, Any] = {}
    with torch.inference_mode():
        with _instrumented(press, positions, track_positions), press(model):
            logits = _forward(model, list(context_ids), cache, 0, device)
        kept = cache_lengths(cache)
        uneven = len(set(kept)) > 1
        n_ctx = len(context_ids)
        feed = None
        after_q: list[int] | None = None
        if question_ids:
            if not uneven:
                feed = "block"
                logits = _forward(model, list(question_ids), cache, n_ctx, device)
            else:
                feed = "token_by_token"
                for j, tok in enumerate(question_ids):
                    logits = _forward(model, [tok], cache, n_ctx + j, device, uneven)
            after_q = cache_lengths(cache)
        pos = n_ctx + len(question_ids)
        new_ids: list[int] = []
        for step in range(max_new_tokens):
            token = int(torch.argmax(logits).item())
            new_ids.append(token)
            if token in eos or step == max_new_tokens - 1:
                break
            logits = _forward(model, [token], cache, pos, device, uneven)
            pos += 1
    info: dict[str, Any] = {
        "kept_entries_per_layer": kept,
        "cache_entries_after_question": after_q,
        "question_feed": feed,
    }
    if track_positions:
        info.update(_positions_summary(tokenizer, list(context_ids), kept, positions))
    else:
        info.update(_unavailable("not tracked (track_positions=False)"))
    return new_ids, info


def _unavailable(reason: str) -> dict[str, Any]:
    return {"kept_tokens_unavailable_reason": reason}


def _positions_summary(
    tokenizer: Any, ids: list[int], kept: list[int], positions: dict[int, Any]
) -> dict[str, Any]:
    import torch

    n_layers = len(kept)
    if not positions:
        return _unavailable(
            "the press did not call compress() on any layer (it prunes in its own hook"
            " or does not prune)"
        )
    if len(positions) != n_layers:
        missing = sorted(set(range(n_layers)) - set(positions))
        return _unavailable(f"no compress() record for layers {missing[:8]}")
    if any(isinstance(p, str) for p in positions.values()):
        return _unavailable(
            "the press masks entries per head (kvpress masked_key_indices) instead of pruning"
            " them; the cache keeps every entry, so there is no kept subset to decode"
        )
    if any(p is None for p in positions.values()):
        return _unavailable(
            "the press's kept keys are not copies of prefill keys (it transforms or merges"
            " entries), so kept positions cannot be recovered"
        )
    for layer, p in positions.items():
        assert p is not None
        if p.shape[-1] != kept[layer]:
            return _unavailable(
                f"layer {layer}: cache holds {kept[layer]} entries but compress() kept"
                f" {p.shape[-1]} (the press masks rather than prunes)"
            )
    votes = torch.zeros(len(ids), dtype=torch.long)
    slots = 0
    for p in positions.values():
        assert p is not None
        for h in range(p.shape[0]):
            votes[p[h]] += 1
            slots += 1
    any_pos = torch.nonzero(votes > 0).flatten().tolist()
    majority = torch.nonzero(votes * 2 >= slots).flatten().tolist()
    return {
        "kept_positions": majority,
        "kept_positions_any": any_pos,
        "kept_token_text": _kept_text(tokenizer, ids, majority),
        "kept_token_text_any": _kept_text(tokenizer, ids, any_pos),
    }


def split_prompt(prompt_text: str, question_marker: str) -> tuple[str, str] | None:
    """``(context, question tail)`` split at the last marker occurrence, or None."""
    at = prompt_text.rfind(question_marker)
    if at < 0:
        return None
    return prompt_text[:at], prompt_text[at:]


def generate_with_press(
    model: Any,
    tokenizer: Any,
    prompt_text: str,
    press: Any,
    max_new_tokens: int,
    mode: str = "context_only",
    question_marker: str = DEFAULT_QUESTION_MARKER,
    *,
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
    prompt_ids: Sequence[int] | None = None,
    track_positions: bool = True,
) -> tuple[str, KVRecord]:
    """Greedy generation for one templated prompt under ``press`` (see module docstring).

    ``context_only`` tokenizes the context without special tokens, right-truncated at
    ``max_input_tokens``, and the question tail without special tokens. ``full_prompt``
    tokenizes the prompt with the tokenizer's default special tokens, left-truncated at
    ``max_input_tokens`` (the reader's rule), unless ``prompt_ids`` are given. Returns the
    decoded answer (special tokens skipped) and the :class:`KVRecord`.
    """
    new_ids, record = run_with_press(
        model,
        tokenizer,
        prompt_text,
        press,
        max_new_tokens,
        mode,
        question_marker,
        max_input_tokens=max_input_tokens,
        prompt_ids=prompt_ids,
        track_positions=track_positions,
    )
    return tokenizer.decode(new_ids, skip_special_tokens=True), record


def run_with_press(
    model: Any,
    tokenizer: Any,
    prompt_text: str,
    press: Any,
    max_new_tokens: int,
    mode: str = "context_only",
    question_marker: str = DEFAULT_QUESTION_MARKER,
    *,
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
    prompt_ids: Sequence[int] | None = None,
    track_positions: bool = True,
) -> tuple[list[int], KVRecord]:
    """:func:`generate_with_press` returning the new token ids instead of their text."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    used, reason = mode, None
    context_ids: list[int] = []
    question_ids: list[int] = []
    if mode == "context_only":
        parts = split_prompt(prompt_text, question_marker)
        if parts is None:
            used, reason = "full_prompt", f"question marker {question_marker!r} not in prompt"
        else:
            context_ids = _encode(tokenizer, parts[0], special=False)[:max_input_tokens]
            question_ids = _encode(tokenizer, parts[1], special=False)
            limit = window_size_of(press) + 4
            if len(context_ids) <= limit:
                used = "full_prompt"
                reason = f"context has {len(context_ids)} tokens <= window_size + 4 = {limit}"
    if used == "full_prompt":
        ids = list(prompt_ids) if prompt_ids is not None else _encode(tokenizer, prompt_text, True)
        context_ids, question_ids = ids[-max_input_tokens:], []
    new_ids, info = generate_ids_with_press(
        model,
        tokenizer,
        context_ids,
        question_ids,
        press,
        max_new_tokens,
        track_positions=track_positions,
    )
    kept = info.pop("kept_entries_per_layer")
    record = KVRecord(
        mode_requested=mode,
        mode=used,
        press=press_spec(press),
        compression_ratio=_compression_ratio_of(press),
        context_tokens=len(context_ids),
        question_tokens=len(question_ids),
        kept_entries_per_layer=kept,
        kept_fraction=(sum(kept) / len(kept) / len(context_ids)) if kept and context_ids else 1.0,
        fallback_reason=reason,
        new_tokens=len(new_ids),
        attn_implementation=getattr(model.config, "_attn_implementation", None),
        **info,
    )
    return new_ids, record


def _encode(tokenizer: Any, text: str, special: bool) -> list[int]:
    return list(tokenizer(text, add_special_tokens=special)["input_ids"])


class KVPressHook:
    """Plugs a press into :class:`compressbench.readers.hf.HFReader` (its ``press`` argument).

    Every prompt of a batch is generated on its own with :func:`generate_with_press`; the new
    ids are right-padded with ``pad_token_id``. ``records`` collects one :class:`KVRecord` per
    prompt, in call order; ``spec`` describes the press for the answer cache key.
    """

    def __init__(
        self,
        press: Any,
        *,
        mode: str = "context_only",
        question_marker: str = DEFAULT_QUESTION_MARKER,
        max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
        preset: str | None = None,
        track_positions: bool = True,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.press = press
        self.mode = mode
        self.question_marker = question_marker
        self.max_input_tokens = max_input_tokens
        self.track_positions = track_positions
        self.records: list[KVRecord] = []
        self.spec: dict[str, Any] = {
            "press": press_spec(press),
            "mode": mode,
            "question_marker": question_marker,
            "budget_unit": BUDGET_UNIT,
        }
        if preset is not None:
            self.spec["preset"] = preset

    def __call__(
        self,
        *,
        model: Any,
        tokenizer: Any,
        prompts: Sequence[str],
        input_ids: Any,
        attention_mask: Any,
        generate_kwargs: dict[str, Any],
    ) -> Any:
        import torch

        config = generate_kwargs.get("generation_config")
        max_new = int(getattr(config, "max_new_tokens", None) or generate_kwargs["max_new_tokens"])
        pad = getattr(config, "pad_token_id", None)
        pad = int(pad if pad is not None else tokenizer.eos_token_id)
        rows: list[list[int]] = []
        for i, prompt in enumerate(prompts):
            ids = input_ids[i][attention_mask[i].bool()].tolist()
            new_ids, record = run_with_press(
                model,
                tokenizer,
                prompt,
                self.press,
                max_new,
                self.mode,
                self.question_marker,
                max_input_tokens=self.max_input_tokens,
                prompt_ids=ids,
                track_positions=self.track_positions,
            )
            self.records.append(record)
            rows.append(new_ids)
        width = max((len(r) for r in rows), default=0)
        padded = [r + [pad] * (width - len(r)) for r in rows]
        return torch.tensor(padded, dtype=torch.long, device=input_ids.device)
