"""Regenerate ``src/compressbench/corpora/upstream_manifest.json`` from a local copy of the
upstream corpora (``../shared/corpora``): the git blob SHA-1 of every file present, and the
blob-id prefixes recorded for files that are not present (from that folder's README)."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src/compressbench/corpora/upstream_manifest.json"
SGD_COUNTS = {"train": 127, "dev": 20, "test": 34}
MULTIWOZ_COUNTS = {"train": 17, "dev": 2, "test": 2}


def blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def missing_prefixes(readme: str) -> dict[str, str]:
    """``split/file -> blob prefix`` from the README's list of missing files."""
    out: dict[str, str] = {}
    for split, body in re.findall(r"- (train|dev|test) \(\d+\): (.*)", readme):
        for name, prefix in re.findall(r"`(dialogues_\d+\.json)` \(([0-9a-f]+)\)", body):
            out[f"{split}/{name}"] = prefix
    return out


def main(corpora: Path) -> None:
    prefixes = missing_prefixes((corpora / "README.md").read_text(encoding="utf-8"))
    sgd: dict[str, str | None] = {}
    for split, count in SGD_COUNTS.items():
        for name in ["schema.json"] + [f"dialogues_{i:03d}.json" for i in range(1, count + 1)]:
            gz = corpora / "sgd" / split / f"{name}.gz"
            key = f"{split}/{name}"
            sgd[key] = (
                blob_sha1(gzip.decompress(gz.read_bytes())) if gz.exists() else prefixes.get(key)
            )
    mw: dict[str, str | None] = {
        f"{split}/dialogues_{i:03d}.json": None
        for split, count in MULTIWOZ_COUNTS.items()
        for i in range(1, count + 1)
    }
    # The only full upstream blob id recorded for MultiWOZ 2.2 dialogue files.
    mw["test/dialogues_001.json"] = "fd420005cc9dc259892f541b001d9d48608bd38d"
    mw["schema.json"] = blob_sha1(
        gzip.decompress((corpora / "multiwoz22/schema.json.gz").read_bytes())
    )
    manifest = {
        "sgd": {
            "url": "https://raw.githubusercontent.com/google-research-datasets/"
            "dstc8-schema-guided-dialogue/{commit}/{file}",
            "commit": "e852981ae34990f4358979625854259302feaa78",
            "files": sgd,
        },
        "multiwoz": {
            "url": "https://raw.githubusercontent.com/budzianowski/multiwoz/{commit}/data/MultiWOZ_2.2/{file}",
            "commit": "fe0c8e65cfcd8462bd33c86e35f21addc84ca82b",
            "files": mw,
        },
    }
    OUT.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).resolve().parents[2] / "shared/corpora"
    )
