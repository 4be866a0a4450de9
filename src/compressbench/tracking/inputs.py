"""Row-level run content: per-row tables (``log_table``) and dataset inputs (``mlflow.data``).

mlflow and pandas are imported inside the functions, only when a run logs such content.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.jsonl import read_jsonl, sha256_file
from compressbench.tracking.values import TrackingError, as_text

__all__ = [
    "DIGEST_CHARS",
    "DatasetFile",
    "dataset_inputs",
    "log_table",
    "table_frame",
]

#: MLflow stores at most 36 characters of a dataset digest (``MAX_DATASET_DIGEST_SIZE``): the
#: digest is that prefix of the file's sha256; the full sha256 is the input tag ``sha256``.
DIGEST_CHARS = 36
SHA256_INPUT_TAG = "sha256"


@dataclass(frozen=True)
class DatasetFile:
    """A JSONL file to log as an MLflow dataset input of a run.

    ``name`` defaults to the path relative to the repo root; ``context`` is MLflow's
    ``mlflow.data.context`` input tag (``eval``, ``train`` ...).
    """

    path: Path
    name: str | None = None
    context: str = "eval"


def _cell_value(value: Any) -> Any:
    """Scalars as they are; lists, dicts and other objects as JSON text (one type a column)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return as_text(value)


def table_frame(rows: Sequence[Mapping[str, Any]]) -> Any:
    """A pandas DataFrame of ``rows``: columns in first-seen order, nested values as JSON."""
    import pandas as pd

    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    data = [[_cell_value(row.get(c)) for c in columns] for row in rows]
    return pd.DataFrame(data, columns=list(columns))


def log_table(
    client: Any, run_id: str, rows: Sequence[Mapping[str, Any]], artifact_file: str
) -> None:
    """Log ``rows`` with MLflow's ``log_table`` (a JSON artifact the UI shows as a table).

    Column names may not contain dots: the UI's table view reads them as nested keys and shows
    such a column empty.
    """
    dotted = sorted({k for row in rows for k in row if "." in k})
    if dotted:
        raise TrackingError(f"table {artifact_file}: column names with dots: {dotted}")
    client.log_table(run_id, data=table_frame(rows), artifact_file=artifact_file)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _dataset_input(spec: DatasetFile, root: Path, where: str) -> Any:
    from mlflow.data.dataset_source_registry import get_dataset_source_from_json
    from mlflow.data.pandas_dataset import from_pandas
    from mlflow.entities import Dataset, DatasetInput, InputTag
    from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

    path = Path(spec.path)
    if not path.is_file():
        raise TrackingError(f"{where}: dataset input {path} does not exist")
    rel = _relative(path, root)
    rows = list(read_jsonl(path))  # a bad line raises InputError naming file and line
    sha = sha256_file(path)
    source = get_dataset_source_from_json(json.dumps({"uri": rel}), source_type="local")
    with warnings.catch_warnings():  # schema inference hints about integer columns
        warnings.simplefilter("ignore", UserWarning)
        dataset = from_pandas(
            table_frame(rows), source=source, name=spec.name or rel, digest=sha[:DIGEST_CHARS]
        )
        d = dataset.to_dict()
    tags = [InputTag(MLFLOW_DATASET_CONTEXT, spec.context), InputTag(SHA256_INPUT_TAG, sha)]
    entity = Dataset(
        name=d["name"],
        digest=d["digest"],
        source_type=d["source_type"],
        source=d["source"],
        schema=d.get("schema"),
        profile=d.get("profile"),
    )
    return DatasetInput(entity, tags=tags)


def dataset_inputs(specs: Sequence[DatasetFile], root: Path, where: str) -> list[Any]:
    """MLflow ``DatasetInput`` entities for ``specs``: name, sha256-prefix digest, the path
    (relative to ``root``) as a local source, schema and row count from the file's rows."""
    return [_dataset_input(spec, root, where) for spec in specs]
