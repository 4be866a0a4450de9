"""The published images: ``docker/images.lock``, read by compose, the docs and ``doctor``.

The release workflow (``.github/workflows/release.yml``) builds the ``cpu`` and ``cuda`` targets
on a tag, pushes them to GHCR and writes what it pushed here: per target the image name, the
digest, the release version and commit, the base it was built ``FROM`` and the sha256 of the
hashed Python lock it installed. ``scripts/images_lock.py`` keeps ``docker/compose.yaml`` equal to
this file. A target never released has ``digest: null`` (no reference to pull yet).

Inside an image, :func:`match_image` names the published image the process runs in by the
identity the image carries (``COMPRESSBENCH_IMAGE_LOCK_SHA256`` / ``COMPRESSBENCH_BASE_DIGEST``,
see :mod:`compressbench.readers.image_env`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from compressbench.errors import InputError

__all__ = [
    "IMAGES_LOCK",
    "IMAGES_LOCK_ENV",
    "IMAGE_FIELDS",
    "PublishedImage",
    "find_images_lock",
    "load_images_lock",
    "match_image",
]

#: Repo-relative path of the lock.
IMAGES_LOCK = Path("docker/images.lock")
#: Environment variable that names another lock file.
IMAGES_LOCK_ENV = "COMPRESSBENCH_IMAGES_LOCK"

_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
#: The keys of one image in the lock.
IMAGE_FIELDS = ("name", "digest", "version", "commit", "base", "lock_sha256")


@dataclass(frozen=True)
class PublishedImage:
    """One target of the lock; ``digest``, ``commit``, ``base`` and ``lock_sha256`` are None
    until a release pushed it."""

    target: str
    name: str
    digest: str | None
    version: str | None
    commit: str | None
    base: str | None
    lock_sha256: str | None

    @property
    def ref(self) -> str | None:
        """``name@digest``, the reference to pull; None when not published."""
        return f"{self.name}@{self.digest}" if self.digest else None

    @property
    def compose_ref(self) -> str:
        """What compose pins: the digest reference, else ``name:version`` of the next release."""
        return self.ref or f"{self.name}:{self.version or 'unreleased'}"


def find_images_lock(start: Path | None = None) -> Path | None:
    """``$COMPRESSBENCH_IMAGES_LOCK``, else ``docker/images.lock`` in ``start`` or a parent."""
    if env := os.environ.get(IMAGES_LOCK_ENV):
        return Path(env)
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / IMAGES_LOCK).is_file():
            return folder / IMAGES_LOCK
    return None


def _field(path: Path, target: str, entry: Mapping[str, object], key: str) -> str | None:
    value = entry.get(key)

    def bad(message: str) -> InputError:
        return InputError(message, file=str(path), record=f"images.{target}", field=key)

    if value is not None and not isinstance(value, str):
        raise bad("expected a string or null")
    if key == "digest" and value is not None and not _DIGEST.match(value):
        raise bad(f"expected sha256:<64 hex>, got {value!r}")
    if key == "lock_sha256" and value is not None and not _HEX64.match(value):
        raise bad(f"expected 64 hex digits, got {value!r}")
    if key == "name" and not value:
        raise bad("required")
    return value


def load_images_lock(path: Path) -> dict[str, PublishedImage]:
    """Target -> :class:`PublishedImage`; an :class:`InputError` naming the field if bad."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read the images lock ({exc})", file=str(path)) from None
    images = data.get("images") if isinstance(data, dict) else None
    if not isinstance(images, dict) or not images:
        raise InputError("expected a mapping of target -> image", file=str(path), field="images")
    out: dict[str, PublishedImage] = {}
    for target, entry in images.items():
        if not isinstance(entry, dict):
            raise InputError("expected a mapping", file=str(path), record=f"images.{target}")
        unknown = sorted(set(entry) - set(IMAGE_FIELDS))
        if unknown:
            raise InputError(
                f"unknown keys {unknown}; allowed {list(IMAGE_FIELDS)}",
                file=str(path),
                record=f"images.{target}",
            )
        values = {key: _field(path, target, entry, key) for key in IMAGE_FIELDS}
        out[target] = PublishedImage(target=target, **values)  # type: ignore[arg-type]
    return out


def match_image(
    identity: Mapping[str, str], images: Mapping[str, PublishedImage]
) -> PublishedImage | None:
    """The published image whose lock sha256 and base equal ``identity``'s
    (``image.lock_sha256`` / ``image.base_digest``), or None (a local build or the host)."""
    for image in images.values():
        if (
            image.digest
            and image.lock_sha256 == identity.get("image.lock_sha256")
            and image.base == identity.get("image.base_digest")
        ):
            return image
    return None
