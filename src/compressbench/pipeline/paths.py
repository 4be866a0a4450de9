"""Path templates: how every benchmark says where its stages write (relative to the repo root).

A benchmark declares each location once as a template string with named fields
(``"data/answers/{dataset}/{method}/{ratio}.jsonl"``); its stages fill it with :func:`fill`
and the stage declarations list the same string, from which ``dvc.yaml`` is generated
(:mod:`compressbench.pipeline.dvc_yaml` fills the loop keys with DVC's ``${item...}``), so a
stage and its DVC outputs cannot disagree. TPBench's templates are in
:mod:`compressbench.tpbench.stages.paths`, KEEP-Bench's in
:mod:`compressbench.keepbench.stages.keep_paths`.

Also here: the answer cache's location, shared by every stage that asks a model.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA = Path("data")


def value_name(value: object) -> str:
    """A field value as it appears in file and DVC stage names: a float as ``repr``
    (``0.3``, ``1.0``), anything else as ``str``."""
    return repr(value) if isinstance(value, float) else str(value)


def fill(template: str, **values: object) -> Path:
    """``template`` with every field replaced by its value (:func:`value_name`)."""
    return Path(template.format(**{k: value_name(v) for k, v in values.items()}))


def answer_cache() -> Path:
    """The answer cache of readers and judges: ``$COMPRESSBENCH_ANSWER_CACHE`` or
    ``.cache/answers.sqlite`` (beside DVC, not a stage output)."""
    env = os.environ.get("COMPRESSBENCH_ANSWER_CACHE")
    return Path(env) if env else Path(".cache") / "answers.sqlite"
