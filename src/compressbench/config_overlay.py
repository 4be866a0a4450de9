"""Apply a parameter file (``configs/readers/*.yaml``) onto ``params.yaml`` in one step.

An overlay is a fragment of ``params.yaml``: its mappings merge key by key into the params'
mappings, everything else (scalars, lists) replaces the value it names. The merged whole is
validated by :func:`compressbench.config.parse_params` before anything is written, and written
atomically, so a bad overlay leaves ``params.yaml`` untouched. ruamel.yaml's round trip keeps
the comments and key order of ``params.yaml`` (PyYAML would drop every comment).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compressbench.config import Params, parse_params
from compressbench.errors import InputError
from compressbench.jsonl import atomic_writer

__all__ = ["Change", "apply_overlay", "merge"]

Change = tuple[str, Any, Any]  # dotted key, old value (None if new), new value


def _yaml() -> Any:
    try:
        from ruamel.yaml import YAML
    except ImportError as exc:  # ruamel comes with the pipeline extra (dvc)
        raise InputError(
            "use-config needs ruamel.yaml: pip install 'compressbench[pipeline]'"
        ) from exc
    yaml = YAML()  # round-trip: comments and key order survive
    yaml.preserve_quotes = True
    yaml.width = 100
    return yaml


def _load(path: Path, yaml: Any) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("parameters file not found", file=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"unreadable ({exc})", file=str(path)) from exc
    try:
        return yaml.load(text)
    except Exception as exc:  # ruamel's parser and scanner errors share no public base
        one_line = " ".join(str(exc).split())
        raise InputError(f"invalid YAML: {one_line}", file=str(path)) from exc


def _plain(value: Any) -> Any:
    """ruamel's commented containers as plain dicts and lists (for validation and messages)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def merge(base: Any, overlay: Mapping[str, Any], prefix: str = "") -> list[Change]:
    """Merge ``overlay`` into the mapping ``base`` in place; the changed keys, dotted."""
    changes: list[Change] = []
    for key, new in overlay.items():
        name = f"{prefix}{key}"
        old = base.get(key)
        if isinstance(new, Mapping) and isinstance(old, Mapping):
            changes.extend(merge(old, new, f"{name}."))
        elif key not in base or _plain(old) != _plain(new):
            base[key] = new
            changes.append((name, _plain(old), _plain(new)))
    return changes


def apply_overlay(
    params_file: str | Path, overlay_file: str | Path, *, write: bool = True
) -> tuple[Params, list[Change]]:
    """Merge ``overlay_file`` into ``params_file``; validate; write (unless ``write`` is off).

    Returns the validated parameters and the changed keys. Bad input (a missing file, a
    non-mapping overlay, a merged result ``parse_params`` rejects) raises InputError naming the
    file and the field; ``params_file`` is then left as it was.
    """
    yaml = _yaml()
    params_path, overlay_path = Path(params_file), Path(overlay_file)
    base = _load(params_path, yaml)
    overlay = _load(overlay_path, yaml)
    if not isinstance(base, Mapping):
        raise InputError("expected a mapping of parameters", file=str(params_path))
    if not isinstance(overlay, Mapping) or not overlay:
        raise InputError("expected a non-empty mapping of parameters", file=str(overlay_path))
    changes = merge(base, overlay)
    params = parse_params(_plain(base), f"{params_path} + {overlay_path}")
    if write and changes:
        buffer = io.StringIO()
        yaml.dump(base, buffer)
        with atomic_writer(params_path) as fh:
            fh.write(buffer.getvalue())
    return params, changes
