"""Root ``dvc.yaml`` stages read their code through fingerprint stages that lose nothing: each
stage's fingerprints cover exactly its declared code, a changed module changes the fingerprints
of exactly the stages declaring it, and bytecode or dot files change none. Also: the CLI imports
only the module of the command it runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from compressbench.cli import COMMANDS, build_parser, main
from compressbench.pipeline.code_hash import BASE, MODULE, fingerprint, write_fingerprint
from compressbench.pipeline.declare import BASE_MODELS, SRC_PREFIX
from compressbench.pipeline.dvc_yaml import covered, fingerprint_stages
from compressbench.stages import declarations
from support.paths import REPO_ROOT


def _root_stages() -> dict[str, dict]:
    stages = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    return {name: body.get("do", body) for name, body in stages.items()}


def test_each_root_stage_reads_exactly_its_declared_code_through_two_fingerprints() -> None:
    stages = _root_stages()
    codes = {c.name: c for c in fingerprint_stages(declarations())}
    for decl in (d for d in declarations() if d.name in stages):
        deps = stages[decl.name]["deps"]
        assert not [d for d in deps if d.startswith("src/")], decl.name
        assert deps[-2:] == [f"data/code/{BASE}.json", f"data/code/{decl.name}.json"]
        hashed = [*codes[BASE].paths, *codes[decl.name].paths]
        declared = [*(SRC_PREFIX + c for c in decl.code), *BASE_MODELS]  # + trained artefacts
        assert sorted(hashed) == sorted(declared), decl.name
    for code in codes.values():  # the command hashes exactly what the stage declares it reads
        body = stages[code.stage]
        assert body["deps"] == [MODULE, *code.paths]
        assert body["cmd"].split()[4:] == list(code.paths)
        assert body["outs"] == [code.out]  # DVC-cached: `dvc pull` restores it


def _copy_src(tmp_path: Path) -> Path:
    """The code and trained artefacts the fingerprints hash, in a folder of their own."""
    for folder in ("src", "models"):
        shutil.copytree(
            REPO_ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    return tmp_path


def _fingerprints(root: Path) -> dict[str, dict[str, str]]:
    return {c.name: fingerprint(c.paths, root) for c in fingerprint_stages(declarations())}


def test_a_changed_module_changes_the_fingerprints_of_exactly_the_stages_declaring_it(
    tmp_path: Path,
) -> None:
    root = _copy_src(tmp_path)
    before = _fingerprints(root)
    prompts = root / "src/compressbench/tpbench/prompts.py"
    prompts.write_text(prompts.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    after = _fingerprints(root)
    changed = {name for name in before if before[name] != after[name]}
    readers = {d.name for d in declarations() if covered(d.code, "tpbench/prompts.py")}
    assert changed == readers & set(before)
    assert {"probes", "contexts", "judge"} <= changed and "scores" not in changed
    # a module of the base code changes the base fingerprint only
    errors = root / "src/compressbench/errors.py"
    errors.write_text(errors.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert {n for n, f in _fingerprints(root).items() if f != after[n]} == {BASE}
    # so does a refitted turning_point scorer (models/, outside src/)
    base = _fingerprints(root)
    scorer = root / BASE_MODELS[0]
    scorer.write_text(scorer.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert {n for n, f in _fingerprints(root).items() if f != base[n]} == {BASE}


def test_bytecode_and_dot_files_change_no_fingerprint(tmp_path: Path) -> None:
    root = _copy_src(tmp_path)
    before = _fingerprints(root)
    text = root / "src/compressbench/text"
    (text / "__pycache__").mkdir()
    (text / "__pycache__" / "normalize.cpython-311.pyc").write_bytes(b"\0bytecode")
    (text / "stray.pyc").write_bytes(b"\0")
    (text / ".normalize.py.swp").write_bytes(b"editor")
    assert _fingerprints(root) == before


def test_code_hash_writes_sorted_sha256_and_refuses_a_missing_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "b.py").write_text("b = 1\n", encoding="utf-8")
    (tmp_path / "pkg" / "sub" / "a.py").write_text("", encoding="utf-8")
    (tmp_path / "one.py").write_text("x\n", encoding="utf-8")
    out = tmp_path / "fp.json"
    assert write_fingerprint(out, ["pkg", "one.py"], tmp_path) == 3
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["paths"] == ["pkg", "one.py"]
    assert list(doc["files"]) == ["one.py", "pkg/b.py", "pkg/sub/a.py"]
    # sha256 of "" and of "b = 1\n"
    assert doc["files"]["pkg/sub/a.py"] == (
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
    assert doc["files"]["pkg/b.py"] == fingerprint(["pkg/b.py"], tmp_path)["pkg/b.py"]
    missing = tmp_path / "no_such"
    assert main(["code-hash", "--out", str(tmp_path / "x.json"), str(missing)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"compressbench code-hash: error: file {missing}: no such file or folder"
    assert not (tmp_path / "x.json").exists()


def test_each_command_module_registers_exactly_its_command() -> None:
    for command in COMMANDS:
        sub = build_parser(command)._subparsers._group_actions[0]  # type: ignore[union-attr]
        assert set(sub.choices) == {command}
    full = build_parser()._subparsers._group_actions[0]  # type: ignore[union-attr]
    assert set(full.choices) == set(COMMANDS)


def test_running_a_command_imports_only_its_module(tmp_path: Path) -> None:
    probe = (
        "import sys; from compressbench.cli import main; main(['code-hash', '--out', sys.argv[1],"
        " 'src/compressbench/text']); print(sorted(m for m in sys.modules"
        " if m.startswith('compressbench.commands.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "fp.json")],
        cwd=REPO_ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert out.strip().splitlines()[-1] == "['compressbench.commands.code_hash']"
