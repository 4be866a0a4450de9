"""Finding and reading the dialogue files of a corpus (``<root>/<split>/dialogues_*.json``).

A corpus path is either a directory of split folders (``train/ dev/ test/``) or one dialogue
file. Split folders hold ``dialogues_*.json`` or ``dialogues_*.json.gz`` files (``.partial``
names included); ``schema.json`` and anything else is ignored.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from compressbench.errors import InputError

SPLIT_ORDER: tuple[str, ...] = ("train", "dev", "test")
_PATTERNS: tuple[str, ...] = ("dialogues_*.json", "dialogues_*.json.gz")


def is_dialogue_file(path: Path) -> bool:
    """True for ``dialogues_*.json`` and ``dialogues_*.json.gz`` files."""
    return path.is_file() and any(path.match(p) for p in _PATTERNS)


def _split_files(folder: Path) -> list[Path]:
    files = sorted((p for p in folder.iterdir() if is_dialogue_file(p)), key=lambda p: p.name)
    stems = [p.name.removesuffix(".gz") for p in files]
    dupes = sorted({s for s in stems if stems.count(s) > 1})
    if dupes:
        raise InputError(
            f"both plain and .gz copies of {', '.join(dupes)}; keep one of them", file=str(folder)
        )
    return files


def iter_dialogue_files(path: str | Path, splits: Sequence[str] | None = None) -> Iterator[Path]:
    """Dialogue files of a corpus in load order: splits as given (default: the present ones of
    train, dev, test, in that order), files sorted by name. A file path yields itself."""
    root = Path(path)
    if root.is_file():
        if not is_dialogue_file(root):
            raise InputError("not a dialogues_*.json(.gz) file", file=str(root))
        yield root
        return
    if not root.is_dir():
        raise InputError("corpus path does not exist", file=str(root))
    if splits is None:
        wanted = [s for s in SPLIT_ORDER if (root / s).is_dir()]
        if not wanted:
            raise InputError(
                f"no split folder ({', '.join(SPLIT_ORDER)}) in the corpus directory",
                file=str(root),
            )
    else:
        wanted = list(splits)
        missing = [s for s in wanted if not (root / s).is_dir()]
        if missing:
            present = [p.name for p in sorted(root.iterdir()) if p.is_dir()]
            raise InputError(
                f"split folder(s) {', '.join(missing)} not found; present: "
                f"{', '.join(present) or 'none'}",
                file=str(root),
            )
    for split in wanted:
        files = _split_files(root / split)
        if not files:
            raise InputError(
                "no dialogues_*.json(.gz) files in split folder", file=str(root / split)
            )
        yield from files


def read_json(path: Path) -> object:
    """Parse a JSON (or gzipped JSON) file; any decoding problem is an InputError naming it."""
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"invalid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", file=str(path)
        ) from exc
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read file ({exc})", file=str(path)) from exc
