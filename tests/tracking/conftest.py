"""Fixtures of the tracking tests: a migrated, empty MLflow sqlite store and fresh copies of it."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def empty_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated, empty sqlite store, built once (MLflow's migrations take seconds)."""
    from compressbench.tracking import open_client

    db = tmp_path_factory.mktemp("template") / "mlflow.db"
    open_client(f"sqlite:///{db.as_posix()}").search_experiments()
    return db


@pytest.fixture
def store_uri(tmp_path: Path, empty_store: Path) -> str:
    """The URI of a fresh copy of :func:`empty_store` under ``tmp_path/store``."""
    db = tmp_path / "store" / "mlflow.db"
    db.parent.mkdir()
    # The backup API copies committed pages, WAL included (a plain file copy would not).
    with closing(sqlite3.connect(empty_store)) as src, closing(sqlite3.connect(db)) as dst:
        src.backup(dst)
    return f"sqlite:///{db.as_posix()}"
