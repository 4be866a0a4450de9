"""Errors that name the file, the record and the field at fault."""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input: always says where (file, record, field) and what is wrong."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        record: str | int | None = None,
        field: str | None = None,
    ) -> None:
        self.file = file
        self.record = record
        self.field = field
        where = []
        if file is not None:
            where.append(f"file {file}")
        if record is not None:
            where.append(f"record {record}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class ModelCallsFailed(RuntimeError):
    """Too many model calls of one stage cell raised (see :mod:`compressbench.readers.failures`):
    the cell's outputs are not written and the command exits non-zero with this one line."""
