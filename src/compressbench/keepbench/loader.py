"""Load KEEP-Bench cases: the built-in sample, a local JSON/JSONL/parquet path, or the release.

Sources (``load_cases(source)``):

- ``"builtin"``: the sample written for this project (``keepbench/data/sample_cases.json``,
  fictional entities, demonstration cases included and marked);
- a local file (``.json`` holding a list, ``{"cases": [...]}`` or ``{"data": [...]}``;
  ``.jsonl``; ``.parquet``) or a folder of such files (read in name order);
- ``"uclanlp/KEEP-Bench"`` or ``"hf:<dataset id or local dataset folder>"``: every config and
  split through ``datasets.load_dataset``.

Rows are in this project's form (``case_id`` + ``paragraphs``) or in a release layout mapped by
a :class:`~.release_schema.ReleaseSchema` (``schema="auto"`` picks per row). Every case is
checked (``cases.check_case``); duplicate ids are refused. When the full release is loaded the
published subset sizes and their hop/perspective splits (each
:class:`~compressbench.keepbench.subsets.Subset`'s) are asserted (:func:`check_published_counts`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from compressbench.errors import InputError
from compressbench.jsonl import read_jsonl_lines
from compressbench.keepbench.cases import IMBALANCED, KeepCase, case_from_dict
from compressbench.keepbench.release_schema import (
    FILE_SUBSETS,
    RELEASE_SCHEMAS,
    RELEASE_V0,
    ReleaseSchema,
    release_row_to_native,
)
from compressbench.keepbench.subsets import PUBLISHED_TOTAL, SUBSETS

BUILTIN = "builtin"
HUB_ID = "uclanlp/KEEP-Bench"
NATIVE = "native"

Row = tuple[str, str, Mapping[str, Any], tuple[str, str] | None]  # file, record, row, defaults


def load_cases(
    source: str | Path = BUILTIN,
    *,
    schema: str | ReleaseSchema = "auto",
    expect_full: bool | None = None,
) -> list[KeepCase]:
    """All cases of ``source`` in file order. ``expect_full`` (default: true for the Hub id)
    asserts the published counts."""
    rows = _rows(source)
    cases: list[KeepCase] = []
    seen: dict[str, str] = {}
    for file, record, row, defaults in rows:
        native = _to_native(row, schema, file=file, record=record, defaults=defaults)
        case = case_from_dict(native, file=file, record=record)
        if case.case_id in seen:
            raise InputError(
                f"duplicate case id (first in {seen[case.case_id]})",
                file=file,
                record=case.case_id,
                field="case_id",
            )
        seen[case.case_id] = file
        cases.append(case)
    if expect_full is None:
        expect_full = str(source) in (HUB_ID, f"hf:{HUB_ID}")
    if expect_full:
        check_published_counts(cases, source=str(source))
    return cases


def builtin_cases() -> list[KeepCase]:
    """The built-in sample (evaluation and demonstration cases)."""
    return load_cases(BUILTIN)


def evaluation_cases(cases: Sequence[KeepCase]) -> list[KeepCase]:
    """Cases that are evaluated (demonstrations dropped)."""
    return [c for c in cases if not c.demonstration]


def demonstration_cases(cases: Sequence[KeepCase], subset: str | None = None) -> list[KeepCase]:
    """Demonstration cases, optionally of one subset (a :data:`~.subsets.SUBSETS` name)."""
    return [c for c in cases if c.demonstration and (subset is None or c.subset == subset)]


def check_published_counts(cases: Sequence[KeepCase], *, source: str = "") -> None:
    """Assert the paper's subset sizes and hop/perspective splits on evaluation cases."""
    evaluated = evaluation_cases(cases)
    counts = Counter(c.subset for c in evaluated)
    for subset in SUBSETS:
        if counts.get(subset.name, 0) != subset.published_cases:
            raise InputError(
                f"{subset.name}: {counts.get(subset.name, 0)} cases, the release has "
                f"{subset.published_cases} (total {PUBLISHED_TOTAL}); is this the full release?",
                file=source or None,
                field="setting/domain",
            )
    for subset in SUBSETS:
        got = Counter(
            c.perspectives if c.setting == IMBALANCED else c.hops
            for c in evaluated
            if c.subset == subset.name
        )
        if dict(got) != dict(subset.published_split):
            raise InputError(
                f"{subset.name}: split {dict(sorted(got.items()))}, published "
                f"{dict(sorted(subset.published_split.items()))}",
                file=source or None,
                field=subset.split_field,
            )


def _to_native(
    row: Mapping[str, Any],
    schema: str | ReleaseSchema,
    *,
    file: str,
    record: str,
    defaults: tuple[str, str] | None,
) -> Mapping[str, Any]:
    if not isinstance(row, Mapping):
        raise InputError(f"expected an object, got {type(row).__name__}", file=file, record=record)
    if isinstance(schema, ReleaseSchema):
        return release_row_to_native(row, schema, file=file, record=record, defaults=defaults)
    if schema == "auto":
        schema = NATIVE if "case_id" in row and "paragraphs" in row else RELEASE_V0.version
    if schema == NATIVE:
        return row
    if schema not in RELEASE_SCHEMAS:
        allowed = ", ".join(["auto", NATIVE, *RELEASE_SCHEMAS])
        raise InputError(f"unknown schema {schema!r}; allowed: {allowed}")
    return release_row_to_native(
        row, RELEASE_SCHEMAS[schema], file=file, record=record, defaults=defaults
    )


def _rows(source: str | Path) -> Iterator[Row]:
    text = str(source)
    if text == BUILTIN:
        ref = resources.files("compressbench.keepbench").joinpath("data/sample_cases.json")
        yield from _json_rows(json.loads(ref.read_text(encoding="utf-8")), "builtin:sample", None)
        return
    if text.startswith("hf:") or (text == HUB_ID and not Path(text).exists()):
        yield from _hub_rows(text.removeprefix("hf:"))
        return
    path = Path(text)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in _READERS)
        if not files:
            raise InputError("no .json/.jsonl/.parquet files in folder", file=text)
        for f in files:
            yield from _file_rows(f)
    elif path.is_file():
        yield from _file_rows(path)
    else:
        raise InputError(
            f"no such file or folder (sources: {BUILTIN!r}, a local path, {HUB_ID!r}, hf:ID)",
            file=text,
        )


def _file_rows(path: Path) -> Iterator[Row]:
    reader = _READERS.get(path.suffix)
    if reader is None:
        raise InputError(
            f"unsupported file type {path.suffix!r}; use .json, .jsonl or .parquet", file=str(path)
        )
    yield from reader(path)


def _read_json(path: Path) -> Iterator[Row]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc})", file=str(path)) from None
    yield from _json_rows(data, str(path), FILE_SUBSETS.get(path.stem))


def _json_rows(data: Any, file: str, defaults: tuple[str, str] | None) -> Iterator[Row]:
    if isinstance(data, Mapping):
        key = next((k for k in ("cases", "data") if isinstance(data.get(k), list)), None)
        if key is None:
            raise InputError("expected a list of cases or an object with 'cases'", file=file)
        data = data[key]
    if not isinstance(data, list):
        raise InputError(f"expected a list of cases, got {type(data).__name__}", file=file)
    for i, row in enumerate(data):
        yield file, f"row {i}", row, defaults


def _read_jsonl(path: Path) -> Iterator[Row]:
    defaults = FILE_SUBSETS.get(path.stem)
    for n, row in read_jsonl_lines(path):
        yield str(path), f"line {n}", row, defaults


def _read_parquet(path: Path) -> Iterator[Row]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises several types for a corrupt file
        raise InputError(
            f"unreadable parquet ({type(exc).__name__}: {exc})", file=str(path)
        ) from None
    defaults = FILE_SUBSETS.get(path.stem)
    for i, row in enumerate(table.to_pylist()):
        yield str(path), f"row {i}", row, defaults


_READERS = {".json": _read_json, ".jsonl": _read_jsonl, ".parquet": _read_parquet}


def _hub_rows(name: str) -> Iterator[Row]:
    """Every config and split of a Hub dataset (or a local dataset folder) via ``datasets``."""
    import datasets

    try:
        configs = datasets.get_dataset_config_names(name) or [None]
        loaded = [(c, datasets.load_dataset(name, c)) for c in configs]
    except OSError as exc:  # ConnectionError, DatasetNotFoundError, FileNotFoundError
        raise InputError(
            f"could not load {name!r} through datasets ({type(exc).__name__}: {exc}); "
            "download the release and pass its local path",
            file=name,
        ) from None
    for config, dsd in loaded:
        splits = dsd.items() if isinstance(dsd, Mapping) else [("train", dsd)]
        for split, ds in splits:
            file = f"hf:{name}" + (f"/{config}" if config else "") + f"[{split}]"
            defaults = FILE_SUBSETS.get(str(config)) or FILE_SUBSETS.get(str(split))
            for i, row in enumerate(ds):
                yield file, f"row {i}", row, defaults
