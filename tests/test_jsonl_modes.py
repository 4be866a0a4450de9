"""Files written atomically get the mode a plain ``open`` gives (0666 less the umask), not the
private 0600 of the temp file they start as; a failed write leaves nothing behind."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from compressbench.jsonl import atomic_writer, write_json, write_jsonl


@pytest.fixture()
def umask() -> Iterator[None]:
    saved = os.umask(0o022)
    os.umask(saved)
    yield
    os.umask(saved)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_final_files_honour_the_umask(
    tmp_path: Path, umask: None, mask: int, expected: int
) -> None:
    os.umask(mask)
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    write_jsonl(tmp_path / "rows.jsonl", [{"a": 1}])
    write_json(tmp_path / "doc.json", {"a": 1})
    with atomic_writer(tmp_path / "fig.png", "wb") as fh:
        fh.write(b"\x89PNG")
    for name in ("rows.jsonl", "doc.json", "fig.png"):
        assert _mode(tmp_path / name) == expected == _mode(plain), name


def test_rewriting_a_private_file_gives_the_umask_mode(tmp_path: Path, umask: None) -> None:
    os.umask(0o022)
    target = tmp_path / "rows.jsonl"
    target.write_text("old\n")
    target.chmod(0o600)
    write_jsonl(target, [{"a": 2}])
    assert _mode(target) == 0o644
    assert target.read_text() == '{"a": 2}\n'


def test_a_failed_write_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "rows.jsonl"
    with pytest.raises(RuntimeError), atomic_writer(target) as fh:
        fh.write("partial")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []
