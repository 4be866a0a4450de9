"""Compare two builds of one image layer by layer: which layers differ, and in what files.

    python scripts/compare_image_builds.py compressbench:cpu-a compressbench:cpu-b [--json OUT]

Reads both images with ``docker save`` (uncompressed layer tars, named by their diff IDs),
pairs the layers in order with the Dockerfile step that made each (the image history), and for
each pair whose diff IDs differ lists the files that are only in one build, whose content
differs, or whose metadata alone (time, mode, owner) differs, with a few example paths per kind
grouped by folder. Docker's own tools answer only "same diff ID or not"; this says why.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

DOCKER = "/usr/bin/docker"
EXAMPLES = 8


@dataclass(frozen=True)
class Layer:
    diff_id: str
    step: str
    tar_path: str  # member of the saved image tar


def saved_layers(image_tar: Path) -> list[Layer]:
    """The layers of a ``docker save`` tar, in order, with the step that made each."""
    with tarfile.open(image_tar) as tar:
        manifest = json.load(tar.extractfile("manifest.json"))[0]  # type: ignore[arg-type]
        config = json.load(tar.extractfile(manifest["Config"]))  # type: ignore[arg-type]
    steps = [h.get("created_by", "") for h in config["history"] if not h.get("empty_layer")]
    diff_ids = config["rootfs"]["diff_ids"]
    if not len(steps) == len(diff_ids) == len(manifest["Layers"]):
        raise SystemExit(f"{image_tar}: history, diff_ids and layers do not line up")
    return [Layer(d, s, p) for d, s, p in zip(diff_ids, steps, manifest["Layers"], strict=True)]


def layer_entries(image_tar: Path, layer: Layer) -> dict[str, tuple]:
    """path -> (content key, metadata key) of every entry of one layer."""
    out: dict[str, tuple] = {}
    with tarfile.open(image_tar) as outer:
        inner_file = outer.extractfile(layer.tar_path)
        assert inner_file is not None
        with tarfile.open(fileobj=inner_file, mode="r|") as inner:
            for member in inner:
                digest = member.linkname
                if member.isfile():
                    data = inner.extractfile(member)
                    digest = hashlib.sha256(data.read() if data else b"").hexdigest()
                content = (member.type, member.size, digest)
                meta = (member.mode, member.uid, member.gid, int(member.mtime))
                out[member.name] = (content, meta)
    return out


def folder(path: str, depth: int = 4) -> str:
    return "/".join(path.split("/")[:depth])


def explain(a: dict[str, tuple], b: dict[str, tuple]) -> dict[str, object]:
    """Counts and example folders of the entries that differ between two layers."""
    kinds: dict[str, list[str]] = {
        "only_in_a": sorted(set(a) - set(b)),
        "only_in_b": sorted(set(b) - set(a)),
        "content": sorted(p for p in set(a) & set(b) if a[p][0] != b[p][0]),
        "metadata_only": sorted(
            p for p in set(a) & set(b) if a[p][0] == b[p][0] and a[p][1] != b[p][1]
        ),
    }
    report: dict[str, object] = {"entries": [len(a), len(b)]}
    for kind, paths in kinds.items():
        folders = Counter(folder(p) for p in paths)
        report[kind] = {"count": len(paths), "folders": dict(folders.most_common(EXAMPLES))}
        report[kind + "_examples"] = paths[:EXAMPLES]
    return report


def save(image: str, folder_: Path) -> Path:
    out = folder_ / (image.replace("/", "_").replace(":", "_") + ".tar")
    subprocess.run([DOCKER, "save", "-o", str(out), image], check=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("image_a")
    parser.add_argument("image_b")
    parser.add_argument("--json", type=Path, help="also write the full report here")
    parser.add_argument("--workdir", type=Path, help="where the saved tars go (default: a tmp dir)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        tar_a, tar_b = save(args.image_a, Path(tmp)), save(args.image_b, Path(tmp))
        layers_a, layers_b = saved_layers(tar_a), saved_layers(tar_b)
        if len(layers_a) != len(layers_b):
            print(f"different layer counts: {len(layers_a)} vs {len(layers_b)}", file=sys.stderr)
            return 1
        report = []
        for index, (la, lb) in enumerate(zip(layers_a, layers_b, strict=True)):
            same = la.diff_id == lb.diff_id
            row: dict[str, object] = {"layer": index, "step": la.step[:160], "same": same}
            row["diff_id"] = la.diff_id if same else [la.diff_id, lb.diff_id]
            if not same:
                row.update(explain(layer_entries(tar_a, la), layer_entries(tar_b, lb)))
            report.append(row)
            print(f"{index:2d} {'same   ' if same else 'DIFFERS'} {la.step[:110]}")
            if not same:
                for kind in ("only_in_a", "only_in_b", "content", "metadata_only"):
                    found = row[kind]
                    if found["count"]:  # type: ignore[index]
                        print(f"     {kind}: {found['count']} {found['folders']}")  # type: ignore[index]
    print(f"{sum(1 for r in report if r['same'])} of {len(report)} layers identical")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
