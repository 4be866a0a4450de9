"""Checks ``versions`` (torch, transformers, vLLM, kvpress against the image target's hashed lock)
and ``image`` (the image this runs in: its lock, its base, its published digest).

The target is ``--image-target``, else ``COMPRESSBENCH_IMAGE_TARGET`` (the images set it), else
the host, which is held to the ``cpu`` lock (``--image-target cuda`` for a CUDA host install).
The lock is ``docker/requirements-<target>.lock`` of the project, else the one an image keeps in
``/opt/compressbench``. Its requirement lines (``name[extras]==version \\`` and their hashes)
are read with :mod:`packaging`, and an installed version matches a pin as pip's ``==`` matches
it (PEP 440): ``2.11.0`` equals ``2.11.0.0``, and a pin without a local label (``2.11.0``)
accepts any local build of it (``2.11.0+cu130``), while a pin with one (``2.13.0+cpu``) accepts
only that build.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import re
from pathlib import Path

from compressbench.doctor.base import FAIL, PASS, Context, Result, Skip
from compressbench.errors import InputError
from compressbench.published_images import find_images_lock, load_images_lock, match_image
from compressbench.readers.image_env import HOST, image_identity

PACKAGES = ("torch", "transformers", "vllm", "kvpress")
TARGET_ENV = "COMPRESSBENCH_IMAGE_TARGET"
IMAGE_LOCK = Path("/opt/compressbench/requirements.lock")
CODE_ROOT = Path(__file__).resolve().parents[3]  # the checkout of an editable install


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def target(ctx: Context) -> str | None:
    """The image target to hold this install to; None on the host."""
    return ctx.options.image_target or ctx.environ.get(TARGET_ENV) or None


def lock_file(ctx: Context, name: str) -> Path | None:
    """``docker/requirements-<name>.lock`` of the project or of this code's checkout (an editable
    install), else the image's own copy."""
    for root in (ctx.repo_root, CODE_ROOT):
        here = root / "docker" / f"requirements-{name}.lock"
        if here.is_file():
            return here
    return IMAGE_LOCK if IMAGE_LOCK.is_file() and ctx.environ.get(TARGET_ENV) == name else None


def pins(path: Path) -> dict[str, str]:
    """Normalised distribution name -> pinned version of a hashed ``name==version`` lock.

    A requirement starts a line (continuation lines with ``--hash`` start with blanks; options
    with ``-``; comments with ``#``); extras are allowed, a marker that does not hold here
    drops the line, and a line that is not a single ``==`` pin is an :class:`InputError`
    naming the file and line."""
    from packaging.requirements import InvalidRequirement, Requirement

    out = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line or line[0] in " \t#-":
            continue
        text = line.split(" --hash", 1)[0].rstrip(" \\")
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            raise InputError(f"not a requirement: {exc}", file=str(path), record=number) from exc
        if req.marker is not None and not req.marker.evaluate():
            continue
        specs = list(req.specifier)
        if len(specs) != 1 or specs[0].operator != "==":
            raise InputError(f"{text!r} is not pinned with ==", file=str(path), record=number)
        out[_norm(req.name)] = specs[0].version
    return out


def matches(have: str | None, pinned: str | None) -> bool:
    """True when installed version ``have`` satisfies ``==pinned`` (PEP 440, local labels as
    pip treats them); both absent is a match, one absent is not."""
    if have is None or pinned is None:
        return have == pinned
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return SpecifierSet(f"=={pinned}").contains(Version(have), prereleases=True)
    except InvalidVersion:  # not a PEP 440 version: only the same text matches
        return have == pinned


def installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_versions(ctx: Context) -> Result:
    tgt = target(ctx)
    name = tgt or "cpu"
    where = f"image target {tgt}" if tgt else "host (held to the cpu lock)"
    path = lock_file(ctx, name)
    if path is None:
        return Result("versions", FAIL, f"{where}: no docker/requirements-{name}.lock found")
    locked = pins(path)
    have = {p: installed(p) for p in PACKAGES}
    want = {p: locked.get(_norm(p)) for p in PACKAGES}
    figures = {"target": name, "lock": str(path), "installed": have, "locked": want}
    bad = [
        f"{p} {have[p] or 'not installed'} (lock {want[p] or 'none'})"
        for p in PACKAGES
        if not matches(have[p], want[p])
    ]
    if bad:
        hint = "" if tgt else "; --image-target cuda for a CUDA install"
        text = f"{where}: differs from {path.name}: {'; '.join(bad)}{hint}"
        return Result("versions", FAIL, text, figures)
    listed = ", ".join(f"{p} {have[p]}" for p in PACKAGES if have[p])
    absent = [p for p in PACKAGES if not have[p]]
    tail = f" ({', '.join(absent)}: not in the lock, not installed)" if absent else ""
    return Result("versions", PASS, f"{where}: as {path.name}: {listed}{tail}", figures)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_image(ctx: Context) -> Result:
    ident = image_identity(ctx.environ)
    lock_sha, base = ident["image.lock_sha256"], ident["image.base_digest"]
    if lock_sha == HOST:
        raise Skip("not in a compressbench image (COMPRESSBENCH_IMAGE_LOCK_SHA256 unset): host")
    figures: dict[str, object] = {"lock_sha256": lock_sha, "base": base, "target": target(ctx)}
    label = f"lock {lock_sha[:12]}, base {base}"
    tgt = target(ctx)
    here = ctx.repo_root / "docker" / f"requirements-{tgt}.lock" if tgt else None
    if here is not None and here.is_file() and _sha256(here) != lock_sha:
        text = (
            f"{label}: the image installed another lock than this checkout's {here.name} "
            f"({_sha256(here)[:12]}); pull or build the image of this commit"
        )
        return Result("image", FAIL, text, figures)
    path = ctx.options.images_lock or find_images_lock(ctx.repo_root)
    if path is None:
        return Result("image", PASS, f"{label}; no docker/images.lock to look it up", figures)
    images = load_images_lock(path)  # a bad lock: InputError, one FAIL line
    found = match_image(ident, images)
    if found is None:
        text = f"{label}; not a published image in {path.name} (a local build or unreleased)"
        return Result("image", PASS, text, figures)
    figures.update(published=found.ref, version=found.version, commit=found.commit)
    text = f"{label}; published {found.ref} (version {found.version}, commit {found.commit})"
    return Result("image", PASS, text, figures)
