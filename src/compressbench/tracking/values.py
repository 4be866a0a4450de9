"""Turning Python values into MLflow keys, params, tags and metrics (pure, no mlflow import)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "CELL_KEYS",
    "KEY_BAD_CHARS",
    "TrackingError",
    "as_text",
    "cell_run_name",
    "check_lengths",
    "flatten_params",
    "safe_key",
    "split_numeric",
    "to_float",
]

#: The usual keys of a TPBench cell, in run-name order (other keys are allowed and follow).
CELL_KEYS: tuple[str, ...] = ("dataset", "probe", "seed", "ratio", "method", "reader")

MAX_PARAM_VALUE = 6000
MAX_TAG_VALUE = 8000
KEY_BAD_CHARS = re.compile(r"[^\w.\-/ ]")


class TrackingError(RuntimeError):
    """MLflow logging failed; the message names the tracking URI, run and cell."""


def as_text(value: Any) -> str:
    """Strings as they are, paths in POSIX form, everything else as sorted JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, Path):
        return value.as_posix()
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def flatten_params(params: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested mappings become dotted keys; leaves become strings (JSON for non-strings)."""
    flat: dict[str, str] = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten_params(value, prefix=f"{name}."))
        else:
            flat[name] = as_text(value)
    return flat


def split_numeric(
    values: Mapping[str, Any], prefix: str = ""
) -> tuple[dict[str, float], dict[str, str]]:
    """Flatten a nested mapping into (metrics, params): int/float leaves become metrics, every
    other leaf (strings, booleans, None, lists) a param, keys dotted under ``prefix``."""
    metrics: dict[str, float] = {}
    params: dict[str, str] = {}
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            m, p = split_numeric(value, prefix=f"{name}.")
            metrics.update(m)
            params.update(p)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            metrics[name] = float(value)
        else:
            params[name] = as_text(value)
    return metrics, params


def cell_run_name(cell: Mapping[str, Any]) -> str:
    """Compact run name, the method first (MLflow's runs table cuts long names at the end), then
    the other keys: string values bare, others as ``key=value`` (``r`` for the ratio), usual
    keys first.

    ``{"dataset": "sgd", "probe": "P2", "seed": 0, "ratio": 0.5, "method": "recency",
    "reader": "smollm2"}`` -> ``recency · sgd/P2/seed=0/r=0.5/smollm2``.
    """
    keys = [k for k in CELL_KEYS if k in cell] + [k for k in cell if k not in CELL_KEYS]
    parts = []
    for k in keys:
        if k == "method":
            continue
        v = cell[k]
        label = "r" if k == "ratio" else k
        parts.append(str(v) if isinstance(v, str) else f"{label}={as_text(v)}")
    rest = "/".join(parts)
    if "method" not in cell:
        return rest
    method = as_text(cell["method"])
    return f"{method} · {rest}" if rest else method


def safe_key(key: str) -> str:
    """Make a string usable as an MLflow tag/param/metric key (chars and path-normal form)."""
    cleaned = KEY_BAD_CHARS.sub("_", key).strip("/ ")
    parts = [p for p in cleaned.split("/") if p not in {"", ".", ".."}]
    return "/".join(parts) or "_"


def to_float(key: str, value: Any, where: str) -> float:
    """A metric value as float (booleans count 0/1); anything else raises, naming ``where``."""
    if isinstance(value, (bool, int, float)):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise TrackingError(f"{where}: metric {key!r} is not a number: {value!r}") from exc


def check_lengths(params: Mapping[str, str], tags: Mapping[str, str], where: str) -> None:
    """Raise when a param or tag value is over MLflow's length limit, naming ``where``."""
    for k, v in params.items():
        if len(v) > MAX_PARAM_VALUE:
            raise TrackingError(
                f"{where}: param {k!r} is {len(v)} chars, over MLflow's {MAX_PARAM_VALUE}; "
                "log it as an artifact instead"
            )
    for k, v in tags.items():
        if len(v) > MAX_TAG_VALUE:
            raise TrackingError(
                f"{where}: tag {k!r} is {len(v)} chars, over MLflow's {MAX_TAG_VALUE}"
            )
