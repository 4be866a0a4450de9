"""Keep docker/images.lock, docker/compose.yaml and docker/Dockerfile in agreement.

    python scripts/images_lock.py check     # exit 1 with one line per disagreement (CI)
    python scripts/images_lock.py sync      # rewrite compose.yaml's image references from the lock
    python scripts/images_lock.py base      # the Dockerfile's default BASE_IMAGE
    python scripts/images_lock.py record cpu --name ghcr.io/o/r/cpu --digest sha256:... \\
        --version 0.2.0 --commit <sha> --base <ref> --lock-sha256 <hex>   # the release workflow

``record`` writes what a release pushed (the base it was built FROM and the sha256 of the
target's hashed lock as they were at the tag), then ``sync``. A compose
service runs one target (``SERVICES``) and pins the lock's reference: ``name@digest`` once
released, ``name:version`` before that; ``COMPRESSBENCH_<TARGET>_IMAGE`` overrides it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from compressbench.errors import InputError
from compressbench.published_images import IMAGE_FIELDS, IMAGES_LOCK, load_images_lock

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = Path("docker/compose.yaml")
DOCKERFILE = Path("docker/Dockerfile")
#: compose service -> the image target it runs.
SERVICES = {"postgres": "postgres", "mlflow": "cpu", "vllm": "cuda"}
_IMAGE_LINE = re.compile(r"^(\s*image: \$\{COMPRESSBENCH_(\w+)_IMAGE:-)([^}]*)(\}\s*)$", re.M)


def dockerfile_base(root: Path) -> str:
    """The default ``BASE_IMAGE`` of the Dockerfile."""
    text = (root / DOCKERFILE).read_text(encoding="utf-8")
    found = re.search(r"^ARG BASE_IMAGE=(\S+)$", text, re.M)
    if not found:
        raise InputError("no default 'ARG BASE_IMAGE=...'", file=str(DOCKERFILE))
    return found.group(1)


def dockerfile_stages(root: Path) -> set[str]:
    """The stage names of the Dockerfile (``FROM ... AS <name>``)."""
    text = (root / DOCKERFILE).read_text(encoding="utf-8")
    return set(re.findall(r"^FROM \S+ AS (\S+)$", text, re.M))


def compose_refs(root: Path) -> dict[str, str]:
    """Target (from the COMPRESSBENCH_<TARGET>_IMAGE variable) -> default image reference."""
    text = (root / COMPOSE).read_text(encoding="utf-8")
    return {m.group(2).lower(): m.group(3) for m in _IMAGE_LINE.finditer(text)}


def problems(root: Path = ROOT) -> list[str]:
    """Every disagreement between the lock, compose.yaml and the Dockerfile, one line each:
    compose pins each service's target as the lock says, and every target is a Dockerfile stage.
    (A released image records the base it was built from, which may be older than the
    Dockerfile's current one: that is the next release's.)"""
    images = load_images_lock(root / IMAGES_LOCK)
    refs = compose_refs(root)
    out: list[str] = []
    for target in sorted(set(SERVICES.values()) - set(images)):
        out.append(f"{IMAGES_LOCK}: no entry for target {target!r} (compose runs it)")
    for service, target in SERVICES.items():
        image = images.get(target)
        ref = refs.get(target)
        if ref is None:
            out.append(f"{COMPOSE}: service {service}: no COMPRESSBENCH_{target.upper()}_IMAGE")
        elif image and ref != image.compose_ref:
            out.append(
                f"{COMPOSE}: service {service} pins {ref}, {IMAGES_LOCK} says "
                f"{image.compose_ref} (run: python scripts/images_lock.py sync)"
            )
    stages = dockerfile_stages(root)
    for target in sorted(set(images) - stages):
        out.append(f"{IMAGES_LOCK}: images.{target}: {DOCKERFILE} has no stage '{target}'")
    return out


def sync(root: Path = ROOT) -> bool:
    """Rewrite compose.yaml's defaults from the lock; True when the file changed."""
    images = load_images_lock(root / IMAGES_LOCK)
    path = root / COMPOSE
    text = path.read_text(encoding="utf-8")

    def pin(match: re.Match[str]) -> str:
        image = images.get(match.group(2).lower())
        ref = image.compose_ref if image else match.group(3)
        return f"{match.group(1)}{ref}{match.group(4)}"

    new = _IMAGE_LINE.sub(pin, text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def record(root: Path, target: str, pushed: dict[str, str | None]) -> None:
    """Write one pushed image (name, digest, version, commit, base, lock_sha256) into the lock,
    validated by loading it back, then sync compose.yaml."""
    path = root / IMAGES_LOCK
    data = json.loads(path.read_text(encoding="utf-8"))
    data["images"][target] = {key: pushed.get(key) for key in IMAGE_FIELDS}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    load_images_lock(tmp)
    tmp.replace(path)
    sync(root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="exit 1 when the lock, compose.yaml and Dockerfile disagree")
    sub.add_parser("sync", help="pin compose.yaml's images from the lock")
    rec = sub.add_parser("record", help="write a pushed image into the lock, then sync")
    rec.add_argument("target", choices=sorted(set(SERVICES.values())))
    for key in IMAGE_FIELDS:
        rec.add_argument(f"--{key.replace('_', '-')}", dest=key, required=key != "lock_sha256")
    sub.add_parser("base", help="print the Dockerfile's default BASE_IMAGE")
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            found = problems()
            for line in found:
                print(line, file=sys.stderr)
            return 1 if found else 0
        if args.command == "sync":
            print("changed" if sync(ROOT) else "unchanged", COMPOSE, file=sys.stderr)
            return 0
        if args.command == "base":
            print(dockerfile_base(ROOT))
            return 0
        record(ROOT, args.target, {key: getattr(args, key) for key in IMAGE_FIELDS})
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
