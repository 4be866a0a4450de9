"""Which container image a process runs in, from the environment variables the image sets.

The project's images (``docker/``) set ``COMPRESSBENCH_IMAGE_LOCK_SHA256`` (sha256 of the
hashed lock file they installed) and ``COMPRESSBENCH_BASE_DIGEST`` (the digest of the base
image). Outside an image both are unset and the identity says ``host``. Pure: reads only
``os.environ`` (or the mapping given).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["HOST", "IMAGE_ENV_VARS", "image_identity", "image_label"]

#: MLflow tag / stats key -> the environment variable an image sets.
IMAGE_ENV_VARS: dict[str, str] = {
    "image.lock_sha256": "COMPRESSBENCH_IMAGE_LOCK_SHA256",
    "image.base_digest": "COMPRESSBENCH_BASE_DIGEST",
}
#: The value of every key outside an image.
HOST = "host"


def image_identity(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{"image.lock_sha256": ..., "image.base_digest": ...}``; ``host`` where a variable is
    unset or empty."""
    env = os.environ if environ is None else environ
    return {key: (env.get(var) or "").strip() or HOST for key, var in IMAGE_ENV_VARS.items()}


def image_label(identity: Mapping[str, str] | None) -> str:
    """One short label of an identity: ``host`` or ``lock <12 hex>, base <digest>``."""
    ident = dict(identity or {})
    lock = ident.get("image.lock_sha256", HOST)
    base = ident.get("image.base_digest", HOST)
    if lock == HOST and base == HOST:
        return HOST
    return f"lock {lock[:12]}, base {base}"
