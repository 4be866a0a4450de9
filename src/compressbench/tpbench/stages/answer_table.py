"""The per-probe answers table of a cell run: what the reader saw, said, and how it scored.

One row per scored answer of one (probe type, seed) group of a cell: the probe and dialogue
ids, the question, the gold, the parsed prediction, every score, the abstain / format-error
flags, the reader's raw output, the kept turn ids and an excerpt of the compressed context, and
the KV hook's measured mode and fallback reason where the answer carries a ``kv_record``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from compressbench.errors import InputError
from compressbench.readers.base import render_user
from compressbench.tpbench.prompts import split_user

__all__ = ["EXCERPT_CHARS", "answer_table", "context_excerpt", "question_of"]

#: Characters kept from each end of a compressed context in the table.
EXCERPT_CHARS = 150
_GAP = " […] "


def question_of(prompt_user: str, context: str, fallback: str = "") -> str:
    """The question of a user prompt built around the rendered ``context``, as the prompt
    states it (``Question: ...``, :func:`~compressbench.tpbench.prompts.split_user`);
    ``fallback`` (the probe's slot) when the prompt was not built that way."""
    question = split_user(prompt_user, context)[1]
    return render_user("", question).strip() if question is not None else fallback


def context_excerpt(text: str, chars: int = EXCERPT_CHARS) -> str:
    """``text`` when short, else its first and last ``chars`` characters around a gap mark."""
    if len(text) <= 2 * chars + len(_GAP):
        return text
    return text[:chars] + _GAP + text[-chars:]


def _key(row: Mapping[str, Any]) -> tuple[str, int, str]:
    return (str(row["probe_type"]), int(row["seed"]), str(row["probe_id"]))


def _index_contexts(rows: Iterable[Mapping[str, Any]], file: Path) -> dict[tuple, Mapping]:
    index: dict[tuple, Mapping[str, Any]] = {}
    for n, row in enumerate(rows, start=1):
        for field in ("probe_type", "seed", "probe_id", "prompt_user", "compressed_text_used"):
            if field not in row:
                raise InputError("missing field", file=str(file), record=f"row {n}", field=field)
        index[_key(row)] = row
    return index


def _row(score: Mapping[str, Any], ctx: Mapping[str, Any]) -> dict[str, Any]:
    """One table row, the columns that say why an answer failed first."""
    text = str(ctx["compressed_text_used"])
    out: dict[str, Any] = {
        "probe_id": score["probe_id"],
        "dialogue_id": score.get("dialogue_id"),
        "question": question_of(str(ctx["prompt_user"]), text, str(score.get("slot", ""))),
        "gold": score.get("gold"),
        "gold_value": score.get("gold_value"),
        "gold_story_label": score.get("gold_story_label"),
        "prediction": score.get("prediction"),
    }
    for name, value in (score.get("scores") or {}).items():
        out[f"score_{name}"] = value
    out.update(
        {
            "abstain": score.get("abstain"),
            "format_error": score.get("format_error"),
            "output": score.get("output"),
            "error": score.get("error"),
            "kept_turn_ids": ctx.get("kept_turn_ids"),
            "context_chars": len(text),
            "context_excerpt": context_excerpt(text),
        }
    )
    record = score.get("kv_record")
    if isinstance(record, Mapping):
        out["kv_mode"] = record.get("mode")
        out["kv_fallback_reason"] = record.get("fallback_reason")
    return out


def answer_table(
    contexts: Iterable[Mapping[str, Any]],
    scores: Sequence[Mapping[str, Any]],
    *,
    contexts_file: Path,
) -> list[dict[str, Any]]:
    """One table row per scored answer in ``scores``, joined to its context row by (probe
    type, seed, probe id). Columns that are empty in every row (P3 golds outside P3, KV fields
    outside KV cells) are left out; a scored answer without its context raises InputError."""
    index = _index_contexts(contexts, contexts_file)
    rows = []
    for score in scores:
        ctx = index.get(_key(score))
        if ctx is None:
            raise InputError(
                "no context row for this scored answer (stale contexts file?)",
                file=str(contexts_file),
                record=str(score.get("probe_id")),
            )
        rows.append(_row(score, ctx))
    keep = [c for c in dict.fromkeys(k for r in rows for k in r) if _filled(rows, c)]
    return [{c: r.get(c) for c in keep} for r in rows]


_ALWAYS = frozenset({"probe_id", "output", "prediction", "gold", "abstain", "format_error"})


def _filled(rows: Sequence[Mapping[str, Any]], column: str) -> bool:
    return column in _ALWAYS or any(r.get(column) not in (None, "") for r in rows)
