"""The press hook of the HF reader: every prompt generated under one press, records kept."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compressbench.compress.kv.batched import ContextStore, run_batch_with_press
from compressbench.compress.kv.build import press_spec
from compressbench.compress.kv.generate import eos_ids, run_with_press
from compressbench.compress.kv.record import (
    BUDGET_UNIT,
    DEFAULT_MAX_INPUT_TOKENS,
    DEFAULT_QUESTION_MARKER,
    KVRecord,
    check_mode,
)


class KVPressHook:
    """Plugs a press into :class:`compressbench.readers.hf.HFReader` (its ``press`` argument).

    Every prompt of a batch is generated on its own with
    :func:`~compressbench.compress.kv.generate.run_with_press`, or, when the reader asks to
    ``decode_together`` (its fast decode mode), compressed on its own and decoded with the
    others (:func:`~compressbench.compress.kv.batched.run_batch_with_press`); mode
    ``context_shared`` compresses each distinct context once. The new ids are right-padded
    with ``pad_token_id``. ``records`` collects one :class:`KVRecord` per prompt, in call
    order; ``spec`` describes the press for the answer cache key.
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
        self.press = press
        self.mode = check_mode(mode)
        self.question_marker = question_marker
        self.max_input_tokens = max_input_tokens
        self.track_positions = track_positions
        self.records: list[KVRecord] = []
        # context_shared: one compression per distinct context, copied for each of its prompts
        self.store = ContextStore() if mode == "context_shared" else None
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
        decode_together: bool = False,
        questions_at: Sequence[int | None] | None = None,
    ) -> Any:
        """New ids ``[batch, new]`` of every prompt (see the class notes); ``decode_together``:
        the rows' compressed caches are decoded in one batch (:mod:`.batched`);
        ``questions_at``: where each prompt's question starts (None: at the question marker)."""
        import torch

        config = generate_kwargs.get("generation_config")
        max_new = int(getattr(config, "max_new_tokens", None) or generate_kwargs["max_new_tokens"])
        pad = getattr(config, "pad_token_id", None)
        pad = int(pad if pad is not None else tokenizer.eos_token_id)
        rows: list[list[int]] = []
        starts = list(questions_at) if questions_at is not None else [None] * len(prompts)
        ids = [input_ids[i][attention_mask[i].bool()].tolist() for i in range(len(prompts))]
        if decode_together or self.store is not None:
            groups = (
                [list(range(len(prompts)))]
                if decode_together
                else [[i] for i in range(len(prompts))]
            )
            for group in groups:
                for new_ids, record in run_batch_with_press(
                    model,
                    tokenizer,
                    [prompts[i] for i in group],
                    [ids[i] for i in group],
                    self.press,
                    max_new,
                    self.mode,
                    eos_ids(model, tokenizer),
                    question_marker=self.question_marker,
                    max_input_tokens=self.max_input_tokens,
                    track_positions=self.track_positions,
                    store=self.store,
                    questions_at=[starts[i] for i in group],
                ):
                    self.records.append(record)
                    rows.append(new_ids)
        else:  # one prompt at a time, start to end (the paper mode's loop)
            for prompt, prompt_ids, at in zip(prompts, ids, starts, strict=True):
                new_ids, record = run_with_press(
                    model,
                    tokenizer,
                    prompt,
                    self.press,
                    max_new,
                    self.mode,
                    self.question_marker,
                    max_input_tokens=self.max_input_tokens,
                    prompt_ids=prompt_ids,
                    track_positions=self.track_positions,
                    question_at=at,
                )
                self.records.append(record)
                rows.append(new_ids)
        width = max((len(r) for r in rows), default=0)
        padded = [r + [pad] * (width - len(r)) for r in rows]
        return torch.tensor(padded, dtype=torch.long, device=input_ids.device)
