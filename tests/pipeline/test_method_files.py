"""The files a method's method_params name: declared per method, fingerprinted by content."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from compressbench.compress.registry import known_methods, method_entry
from compressbench.pipeline.method_files import method_files, path_fingerprint


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_every_declared_path_is_a_parameter_of_its_method() -> None:
    declared = {}
    for name in known_methods():
        entry = method_entry(name)
        assert entry is not None
        assert set(entry.paths) <= set(entry.parameters), name
        declared[name] = entry.paths
    assert declared["turning_point"] == ("tokenizer", "scorer", "schema")
    assert declared["turning_point_filled"] == declared["turning_point"]
    assert declared["embedding_mmr"] == ("encoder",)
    assert declared["attention_h2o"] == ("feature_model", "gguf_file")
    assert declared["recency"] == ()


def test_a_file_is_fingerprinted_by_content(tmp_path: Path) -> None:
    f = tmp_path / "schema.json"
    f.write_bytes(b"[]")
    first = path_fingerprint(str(f))
    assert first == {"path": str(f), "files": [["schema.json", 2, _sha(b"[]")]]}
    f.write_bytes(b"[{}]")
    assert path_fingerprint(str(f))["files"][0][2] == _sha(b"[{}]") != first["files"][0][2]


def test_a_folder_lists_its_files_in_order(tmp_path: Path) -> None:
    (tmp_path / "enc" / "sub").mkdir(parents=True)
    (tmp_path / "enc" / "b.bin").write_bytes(b"b")
    (tmp_path / "enc" / "a.json").write_bytes(b"{}")
    (tmp_path / "enc" / "sub" / "c.txt").write_bytes(b"cc")
    out = path_fingerprint(str(tmp_path / "enc"))
    assert [row[:2] for row in out["files"]] == [["a.json", 2], ["b.bin", 1], ["sub/c.txt", 2]]
    assert out["files"][2][2] == _sha(b"cc")


def test_a_value_that_is_no_path_is_recorded_as_a_name() -> None:
    assert path_fingerprint("org/some-model") == {"name": "org/some-model"}


@pytest.mark.parametrize("params", [None, {}, {"units": "sentence", "schema": None}])
def test_no_named_file_gives_an_empty_record(params: dict[str, object] | None) -> None:
    assert method_files("turning_point", params) == {}


def test_a_comma_separated_list_and_other_parameters(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_bytes(b"1")
    b.write_bytes(b"2")
    out = method_files("turning_point", {"schema": f"{a}, {b}", "units": "sentence"})
    assert list(out) == ["schema"]
    assert [e["files"][0][2] for e in out["schema"]] == [_sha(b"1"), _sha(b"2")]
    assert method_files("recency", {}) == {}


def test_keep_compressors_declare_their_files(tmp_path: Path) -> None:
    entry = method_entry("llm")
    assert entry is not None and entry.paths == ("model", "prompt_dir", "demonstrations")
    demos = tmp_path / "demos.jsonl"
    demos.write_bytes(b"{}\n")
    out = method_files(
        "llm", {"model": "qwen2.5-coder-1.5b-instruct", "demonstrations": str(demos)}
    )
    assert out == {
        "model": [{"name": "qwen2.5-coder-1.5b-instruct"}],  # a packaged model's name, no path
        "demonstrations": [{"path": str(demos), "files": [["demos.jsonl", 3, _sha(b"{}\n")]]}],
    }
