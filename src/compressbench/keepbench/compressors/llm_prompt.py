"""The ``llm`` compressor's messages (KEEP-Bench C.2, E.2), from the ``compress`` templates.

* system: the setting's instruction (``system_parallel`` / ``system_conditional`` /
  ``system_imbalanced``), then the in-context demonstrations of the case's subset;
* user: the question, the original context (paragraphs separated by a blank line) and K.

Each demonstration is the user message its own case would get, at its own budget, followed by
its ``reference_compression`` (which must fit that budget). Demonstrations come from cases
marked ``demonstration`` (never evaluated); a case is never its own demonstration. The paper
sends demonstrations as prior chat turns; the project's reader protocol carries one system and
one user message, so they sit at the end of the system message. Every request of a subset
therefore shares the same prefix (instruction + demonstrations), which is what the FLOPs
prefix amortisation (eq. 7) relies on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from compressbench.errors import InputError
from compressbench.keepbench.cases import KeepCase, case_from_dict, sentence_budget
from compressbench.keepbench.prompts.templates import PromptSet
from compressbench.keepbench.sentences import count_sentences

SAMPLE_FILE = Path(__file__).resolve().parents[1] / "data" / "sample_cases.json"


def user_message(prompts: PromptSet, case: KeepCase, k: int) -> str:
    return prompts.render("user", QUESTION=case.query, CONTEXT=case.context, K=k)


def system_message(prompts: PromptSet, case: KeepCase, demos: Sequence[KeepCase]) -> str:
    """The setting's instruction followed by the rendered demonstrations (if any)."""
    instruction = prompts.text(f"system_{case.setting}")
    if not demos:
        return instruction
    examples = "\n\n".join(
        prompts.render(
            "demonstration",
            INDEX=i,
            REQUEST=user_message(prompts, demo, demo_budget(demo)),
            COMPRESSION=demo.reference_compression.strip(),
        )
        for i, demo in enumerate(demos, start=1)
    )
    return instruction + "\n\n" + prompts.render("demonstrations", EXAMPLES=examples)


def demo_budget(demo: KeepCase) -> int:
    """The budget a demonstration shows: its own default K (its answer was written for it)."""
    return sentence_budget(demo, 1.0)


def check_demonstration(demo: KeepCase, file: str) -> KeepCase:
    """A demonstration needs a reference compression within its own budget."""
    text = demo.reference_compression.strip()
    if not text:
        raise InputError(
            "demonstration without a reference compression",
            file=file,
            record=demo.case_id,
            field="reference_compression",
        )
    n, k = count_sentences(text), demo_budget(demo)
    if n > k:
        raise InputError(
            f"reference compression has {n} sentences, over its own budget K = {k}",
            file=file,
            record=demo.case_id,
            field="reference_compression",
        )
    return demo


def demonstration_pool(path: str | None) -> tuple[KeepCase, ...]:
    """The demonstration cases of a case file (JSON list, ``{"cases": [...]}`` or JSONL);
    ``None`` = the built-in sample. Read once per file version (path, size, mtime)."""
    file = Path(path) if path is not None else SAMPLE_FILE
    if not file.is_file():
        raise InputError("demonstration file does not exist", file=str(file))
    stat = file.stat()
    return _read_pool(str(file), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=8)
def _read_pool(path: str, size: int, mtime_ns: int) -> tuple[KeepCase, ...]:
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
        rows = data.get("cases", [data]) if isinstance(data, dict) else data
    except json.JSONDecodeError:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    if not isinstance(rows, list):
        raise InputError("expected a list of cases", file=str(file), field="cases")
    cases = (case_from_dict(row, file=str(file), record=f"case {i}") for i, row in enumerate(rows))
    return tuple(check_demonstration(c, str(file)) for c in cases if c.demonstration)


def demonstrations_for(
    case: KeepCase, pool: Sequence[KeepCase], limit: int | None
) -> list[KeepCase]:
    """The pool's demonstrations of ``case``'s subset, in file order, never ``case`` itself."""
    chosen = [d for d in pool if d.subset == case.subset and d.case_id != case.case_id]
    return chosen if limit is None else chosen[:limit]
