"""scripts/compare_image_builds.py on `docker save` archives written here (the format: a
manifest, an image config with history and diff IDs, one uncompressed tar per layer)."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

from support.scripts import load_script

COMPARE = load_script("compare_image_builds")


def _layer(files: dict[str, tuple[bytes, int]]) -> bytes:
    """An uncompressed layer tar: path -> (content, mtime); a path ending in / is a folder."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, (data, mtime) in files.items():
            info = tarfile.TarInfo(name.rstrip("/"))
            info.size, info.mtime = len(data), mtime
            if name.endswith("/"):
                info.type = tarfile.DIRTYPE
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _saved_image(path: Path, layers: list[dict[str, tuple[bytes, int]]]) -> Path:
    blobs = [_layer(files) for files in layers]
    diff_ids = ["sha256:" + hashlib.sha256(blob).hexdigest() for blob in blobs]
    config = {
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": [
            {"created_by": "ENV A=1", "empty_layer": True},
            *({"created_by": f"RUN step {i}"} for i in range(len(blobs))),
        ],
    }
    members = {"config.json": json.dumps(config).encode()}
    members.update({f"{d[7:]}/layer.tar": blob for d, blob in zip(diff_ids, blobs, strict=True)})
    manifest = [{"Config": "config.json", "Layers": [f"{d[7:]}/layer.tar" for d in diff_ids]}]
    members["manifest.json"] = json.dumps(manifest).encode()
    with tarfile.open(path, "w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_layers_pair_with_their_steps_and_differences_are_classified(tmp_path: Path) -> None:
    same = {"usr/bin/tool": (b"x", 0)}
    a = _saved_image(
        tmp_path / "a.tar",
        [same, {"etc/": (b"", 5), "venv/a.py": (b"1", 0), "log": (b"t1", 0), "old": (b"", 0)}],
    )
    b = _saved_image(
        tmp_path / "b.tar",
        [same, {"etc/": (b"", 9), "venv/a.py": (b"1", 0), "log": (b"t2", 0), "new": (b"", 0)}],
    )
    layers_a, layers_b = COMPARE.saved_layers(a), COMPARE.saved_layers(b)
    assert [layer.step for layer in layers_a] == ["RUN step 0", "RUN step 1"]  # empty ones skipped
    assert layers_a[0].diff_id == layers_b[0].diff_id
    assert layers_a[1].diff_id != layers_b[1].diff_id

    report = COMPARE.explain(
        COMPARE.layer_entries(a, layers_a[1]), COMPARE.layer_entries(b, layers_b[1])
    )
    assert report["only_in_a"]["count"] == 1 and report["only_in_a_examples"] == ["old"]
    assert report["only_in_b_examples"] == ["new"]
    assert report["content_examples"] == ["log"]
    assert report["metadata_only_examples"] == ["etc"]
