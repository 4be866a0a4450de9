"""Pinned upstream corpora: download from a real local HTTP server, verify blob ids / pins."""

from __future__ import annotations

import gzip
import http.server
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from compressbench.corpora import upstream
from compressbench.errors import InputError


@pytest.fixture()
def mirror(tmp_path: Path, corpora_dir: Path) -> Iterator[tuple[str, Path]]:
    """A local mirror of the SGD dev split at the pinned commit, served over HTTP."""
    spec = upstream.manifest()["sgd"]
    root = tmp_path / "mirror" / spec["commit"] / "dev"
    root.mkdir(parents=True)
    for name in ("schema.json", "dialogues_001.json", "dialogues_002.json"):
        data = gzip.decompress((corpora_dir / "sgd" / "dev" / f"{name}.gz").read_bytes())
        (root / name).write_bytes(data)
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "mirror"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/{{commit}}/{{file}}", tmp_path
    finally:
        server.shutdown()


def _only(monkeypatch: pytest.MonkeyPatch, url: str, files: dict[str, str | None]) -> None:
    real = upstream.manifest()

    def fake() -> dict:
        return {"sgd": {**real["sgd"], "url": url, "files": files}}

    monkeypatch.setattr(upstream, "manifest", fake)


def test_download_verifies_pinned_blob_ids(mirror, monkeypatch) -> None:
    url, tmp = mirror
    files = upstream.manifest()["sgd"]["files"]
    wanted = {k: files[k] for k in ("dev/schema.json", "dev/dialogues_001.json")}
    assert all(v and len(v) == 40 for v in wanted.values())
    _only(monkeypatch, url, wanted)
    root = upstream.fetch_upstream("sgd", ["dev"], root=tmp / "sources")
    assert (root / "dev" / "dialogues_001.json").exists()
    # second call verifies the files on disk instead of downloading again
    upstream.fetch_upstream("sgd", ["dev"], root=tmp / "sources")


def test_wrong_blob_id_is_refused_and_nothing_written(mirror, monkeypatch) -> None:
    url, tmp = mirror
    _only(monkeypatch, url, {"dev/dialogues_001.json": "0" * 40})
    with pytest.raises(InputError, match="does not match"):
        upstream.fetch_upstream("sgd", ["dev"], root=tmp / "sources")
    assert not (tmp / "sources" / "sgd" / "dev" / "dialogues_001.json").exists()


def test_unpinned_file_is_pinned_on_first_download(mirror, monkeypatch) -> None:
    url, tmp = mirror
    _only(monkeypatch, url, {"dev/dialogues_002.json": None})
    root = upstream.fetch_upstream("sgd", ["dev"], root=tmp / "sources")
    lock = (root / upstream.LOCK_NAME).read_text()
    assert "dev/dialogues_002.json" in lock
    (root / "dev" / "dialogues_002.json").write_text("[]")  # tampered copy
    with pytest.raises(InputError, match="differs from the pinned"):
        upstream.fetch_upstream("sgd", ["dev"], root=tmp / "sources")


def test_offline_download_says_what_to_do(monkeypatch, tmp_path) -> None:
    _only(monkeypatch, "http://127.0.0.1:9/{commit}/{file}", {"dev/dialogues_001.json": None})
    with pytest.raises(InputError, match="source: builtin"):
        upstream.fetch_upstream("sgd", ["dev"], root=tmp_path)


def test_manifest_pins_every_present_sgd_file(corpora_dir: Path) -> None:
    files = upstream.manifest()["sgd"]["files"]
    for gz in sorted((corpora_dir / "sgd").glob("*/*.json.gz")):
        key = f"{gz.parent.name}/{gz.name[:-3]}"
        assert files[key] == upstream.blob_sha1(gzip.decompress(gz.read_bytes()))
