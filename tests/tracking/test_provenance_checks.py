"""Runs with different model revisions or from different images never share one table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from compressbench.cli import main
from compressbench.errors import InputError
from compressbench.readers.image_env import image_identity, image_label
from compressbench.tpbench.stages import paths
from compressbench.tracking.comparable import check_one_table, origin_from_stats
from support.params import RATIO, chain_params

LOCK = "COMPRESSBENCH_IMAGE_LOCK_SHA256"
BASE = "COMPRESSBENCH_BASE_DIGEST"


def _stats(revision: str = "abc", lock: str | None = None) -> dict[str, object]:
    image = {"image.lock_sha256": lock or "host", "image.base_digest": "host"}
    return {"model_id": "m", "model_revision": revision, "image": image}


def test_image_identity_reads_the_image_variables() -> None:
    assert image_identity({}) == {"image.lock_sha256": "host", "image.base_digest": "host"}
    ident = image_identity({LOCK: "ab" * 32, BASE: "sha256:" + "cd" * 32, "OTHER": "x"})
    assert ident == {"image.lock_sha256": "ab" * 32, "image.base_digest": "sha256:" + "cd" * 32}
    assert image_label(ident) == f"lock {'ab' * 6}, base sha256:{'cd' * 32}"
    assert image_label(image_identity({LOCK: " "})) == "host"


def test_same_revision_and_image_pass() -> None:
    check_one_table([origin_from_stats(f"cell{i}", _stats()) for i in range(3)], "t.json")
    # another model may have its own revision (the check is per model id)
    other = origin_from_stats("x", {**_stats("zzz"), "model_id": "other"})
    check_one_table([origin_from_stats("a", _stats()), other], "t.json")


@pytest.mark.parametrize(
    ("second", "expected"),
    [
        (_stats("def"), "different model revisions into one table: a used m@abc, b used @def"),
        ({"model_id": "m"}, "b used @unknown"),  # a revision not recorded is not a match
        (_stats(lock="f" * 64), "different images into one table: a ran in host, b in lock ffff"),
        ({"model_id": "m", "model_revision": "abc"}, None),  # written before `image`: host
    ],
)
def test_a_mix_is_refused_naming_both_cells(second: dict, expected: str | None) -> None:
    origins = [origin_from_stats("a", _stats()), origin_from_stats("b", second)]
    if expected is None:
        check_one_table(origins, "t.json")
        return
    with pytest.raises(InputError) as err:
        check_one_table(origins, "t.json")
    message = str(err.value)
    assert message.startswith("file t.json: refusing") and expected in message
    assert "\n" not in message


def _write_params(path: Path, revision: str) -> None:
    """The fixed-answer ``mock`` reader, model ``m`` at ``revision``."""
    reader = {"backend": "mock", "model": "m", "revision": revision}
    raw = chain_params(reader, path.parent, "prov")
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")


def _stage(*args: str) -> int:
    return main(["stage", *args, "--params", "params.yaml"])


def _cell(method: str) -> list[str]:
    return ["--dataset", "builtin", "--method", method, "--ratio", str(RATIO)]


@pytest.mark.parametrize("mix", ["revision", "image"])
def test_metrics_stage_refuses_a_mixed_grid(
    mix: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One cell answered by another revision (or inside an image): the metrics stage stops
    with one line naming both cells' stats files and writes no metrics."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(tmp_path / "answers.sqlite"))
    for var in (LOCK, BASE):
        monkeypatch.delenv(var, raising=False)
    params = tmp_path / "params.yaml"
    _write_params(params, "1")
    assert _stage("corpora", "--dataset", "builtin") == 0
    assert _stage("probes", "--dataset", "builtin", "--ratio", str(RATIO)) == 0
    for method in ("full_context", "recency"):
        if method == "recency":  # the second cell comes from elsewhere
            if mix == "revision":
                _write_params(params, "2")  # the same model id at another revision
            else:
                monkeypatch.setenv(LOCK, "e" * 64)
                monkeypatch.setenv(BASE, "sha256:" + "0" * 64)
        for stage in ("contexts", "answers", "scores"):
            assert _stage(stage, *_cell(method)) == 0
    stats = json.loads(paths.CellFiles("builtin", "recency", RATIO).answer_stats.read_text())
    if mix == "image":
        assert stats["image"]["image.lock_sha256"] == "e" * 64
    capsys.readouterr()

    assert _stage("metrics") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "full_context" in err and "recency" in err
    assert ("revisions" if mix == "revision" else "images") in err
    assert not paths.METRICS_FILE.exists() and not paths.FULL_METRICS_FILE.exists()
