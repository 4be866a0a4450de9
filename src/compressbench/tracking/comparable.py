"""Provenance checks before runs share one table: same model revision, same image.

A table that averages or ranks cells is only a comparison when every cell was answered by the
same weights (one revision per model id) in the same software stack (one image identity, see
:mod:`compressbench.readers.image_env`). :func:`check_one_table` refuses a mix with one line
naming two cells that disagree. An unknown revision is a value of its own: a cell whose
revision was not recorded does not go beside one whose revision was.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from compressbench.errors import InputError
from compressbench.readers.image_env import HOST, IMAGE_ENV_VARS, image_label

__all__ = ["Origin", "check_one_table", "origin_from_run", "origin_from_stats"]

UNKNOWN = "unknown"


@dataclass(frozen=True)
class Origin:
    """Where one cell's answers come from: a label naming the cell, the reader's model id and
    revision, and the image identity (``image.*`` keys, ``host`` outside an image)."""

    label: str
    model_id: str
    model_revision: str
    image: tuple[tuple[str, str], ...]

    @property
    def image_text(self) -> str:
        return image_label(dict(self.image))


def _image(values: Mapping[str, Any] | None) -> tuple[tuple[str, str], ...]:
    got = dict(values or {})
    return tuple((key, str(got.get(key) or HOST)) for key in IMAGE_ENV_VARS)


def origin_from_stats(label: str, stats: Mapping[str, Any]) -> Origin:
    """The origin an answers stage recorded in a cell's ``.stats.json`` (``model_id``,
    ``model_revision``, ``image``; a file written before ``image`` existed counts as host)."""
    return Origin(
        label=label,
        model_id=str(stats.get("model_id") or UNKNOWN),
        model_revision=str(stats.get("model_revision") or UNKNOWN),
        image=_image(stats.get("image")),
    )


def origin_from_run(run: Any) -> Origin:
    """The origin of an MLflow cell run as read back (``CellRun``): tags ``model.id``,
    ``model.revision`` and ``image.*``."""
    tags: Mapping[str, str] = run.tags
    return Origin(
        label=f"run {run.run_id} ({run.run_name})",
        model_id=tags.get("model.id", UNKNOWN),
        model_revision=tags.get("model.revision", UNKNOWN),
        image=_image(tags),
    )


def check_one_table(origins: Iterable[Origin], table: str) -> None:
    """Raise :class:`InputError` (one line, naming ``table`` and two cells that disagree) when
    the origins mix revisions of one model id or image identities."""
    first_revision: dict[str, Origin] = {}
    first_image: Origin | None = None
    for origin in origins:
        seen = first_revision.setdefault(origin.model_id, origin)
        if seen.model_revision != origin.model_revision:
            raise InputError(
                f"refusing to put runs with different model revisions into one table: "
                f"{seen.label} used {origin.model_id}@{seen.model_revision}, "
                f"{origin.label} used @{origin.model_revision}; rerun one of them",
                file=table,
            )
        if first_image is None:
            first_image = origin
        elif first_image.image != origin.image:
            raise InputError(
                f"refusing to put runs from different images into one table: "
                f"{first_image.label} ran in {first_image.image_text}, "
                f"{origin.label} in {origin.image_text}; rerun one of them",
                file=table,
            )
