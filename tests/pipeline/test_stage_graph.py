"""Every DVC stage reads only what it declares, and ``dvc.yaml`` is generated from those
declarations (``@stage`` next to each stage function).

- params: each stage runs (in-process, built-in corpus, a deterministic in-process reader)
  on a view of ``Params`` that raises on any undeclared top-level key;
- data: each stage runs in an empty directory holding only its declared deps and must write
  exactly its declared outs;
- code: each stage module's static import closure lies inside its declared code paths.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from compressbench.cli import main
from compressbench.config import Params, load_params, parse_params
from compressbench.pipeline import paths as templates
from compressbench.pipeline.declare import BASE_CODE, REGISTRY, StageDecl, cells_of, stage
from compressbench.pipeline.dvc_yaml import problems, render, undeclared_modules
from compressbench.pipeline.import_graph import build_graph
from compressbench.pipeline.params_view import ParamsView, UndeclaredParamError
from compressbench.pipeline.run_log import LOGS
from compressbench.stages import PACKAGES, STAGES, declaration, declarations
from compressbench.tpbench.stages import paths
from support.params import RATIO, pipeline_params, sqlite_tracking
from support.paths import REPO_ROOT

# Stores beside DVC (answer/retention caches, MLflow): never stage outputs.
NOT_DVC = (".cache", "mlruns", "mlartifacts")


def test_committed_dvc_yaml_is_generated_from_the_declarations() -> None:
    files = render(declarations())
    assert set(files) == {"dvc.yaml", "dvc-stages/turning_point_scorer/dvc.yaml"}  # frozen: apart
    # and no folder is left under pipeline/ by a stage that moved back into the root dvc.yaml
    apart = {p.relative_to(REPO_ROOT).as_posix() for p in REPO_ROOT.glob("dvc-stages/*/dvc.yaml")}
    assert apart == set(files) - {"dvc.yaml"}
    assert {rel: (REPO_ROOT / rel).read_text(encoding="utf-8") for rel in files} == files, (
        "dvc.yaml differs from the stage declarations: run `compressbench dvc-yaml`"
    )


def test_declared_code_covers_every_module_a_stage_imports() -> None:
    assert problems(declarations()) == []


def test_stages_are_registered_once_each_in_their_own_module() -> None:
    decls = declarations()
    assert [d.name for d in decls] == list(STAGES)
    assert all(d.module == f"{PACKAGES[d.name]}.{d.name}" for d in decls)
    assert all(REGISTRY[d.name] is d for d in decls)


def test_declared_params_are_keys_of_params_yaml() -> None:
    """Every declared param (a dotted one too; a loop key filled with each of its values) is a
    key of the shipped params.yaml."""
    raw = yaml.safe_load((REPO_ROOT / "params.yaml").read_text(encoding="utf-8"))
    params = load_params(REPO_ROOT / "params.yaml")
    for decl in declarations():
        for cell in cells_of(decl.over, params):
            marks = {k: str(v) for k, v in zip(decl.over, cell, strict=True)}
            for key in decl.params:
                value = raw
                for part in key.format(**marks).split("."):
                    assert isinstance(value, dict) and part in value, (decl.name, key)
                    value = value[part]


def test_the_code_check_names_an_import_left_undeclared() -> None:
    scores = declaration("scores")
    narrowed = dataclasses.replace(scores, code=(*BASE_CODE, "tpbench/stages/scores.py"))
    missing = undeclared_modules(narrowed, build_graph())
    assert "tpbench/scoring/parse.py" in missing
    ghost = dataclasses.replace(scores, code=(*scores.code, "tpbench/no_such_module.py"))
    assert problems([ghost]) == [
        "stage scores: declared code 'tpbench/no_such_module.py' does not exist under "
        "src/compressbench"
    ]


def _params(tmp_path: Path, backend: str = "hf") -> Params:
    raw = pipeline_params(
        n_per_cell=3,
        methods=["full_context", "recency"],
        retention={"ratios": [RATIO]},
        reader={"backend": backend, "model": "echo"},
        tracking=sqlite_tracking(tmp_path, "declared"),
        keepbench={  # one case per subset; the llm compressor on the same reader
            "max_per_subset": 1,
            "compressors": {"llm": {"backend": backend, "model": "echo"}, "first_n": {}},
        },
    )
    return parse_params(raw, "declared-params.yaml")


def test_the_view_refuses_undeclared_keys(tmp_path: Path) -> None:
    params = _params(tmp_path)
    view = ParamsView(params, ("reader", "render"), "demo")
    assert view.reader == params.reader and view.render == params.render
    assert view.source == "declared-params.yaml"
    with pytest.raises(UndeclaredParamError, match=r"'demo' reads params\.yaml key 'methods'"):
        _ = view.methods
    with pytest.raises(UndeclaredParamError, match="'corpora'"):
        view.corpus("builtin")  # a Params method reads through the view
    assert ParamsView(params, ("corpora",), "c").corpus("builtin") == params.corpus("builtin")
    assert set(view.as_dict()) == {"reader", "render"}
    narrower = ParamsView(view, ("render", "methods"), "inner")  # a view of a view: intersection
    with pytest.raises(UndeclaredParamError):
        _ = narrower.methods


def test_a_stage_that_reads_an_undeclared_key_fails(tmp_path: Path) -> None:
    @stage("sneaky", params=("scoring",), code=())
    def stage_sneaky(params: Params) -> Path:
        return Path(params.reader.model)

    try:
        with pytest.raises(UndeclaredParamError, match=r"'sneaky' reads params\.yaml key 'reader'"):
            stage_sneaky(_params(tmp_path))
    finally:
        REGISTRY.pop("sneaky")


@pytest.fixture()
def echo_reader() -> str:
    """The registered ``mock`` backend: the same JSON answer to every request, no model."""
    return "mock"


def _cells(decl: StageDecl, params: Params) -> list[tuple[Any, ...]]:
    return cells_of(decl.over, params)


def _path(template: str, decl: StageDecl, cell: tuple[Any, ...]) -> Path:
    return templates.fill(template, **dict(zip(decl.over, cell, strict=True)))


def _files(root: Path) -> set[Path]:
    return {
        p.relative_to(root)
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).parts[0] not in NOT_DVC
    }


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dst)
    elif src.exists():
        shutil.copy2(src, dst)


def test_every_stage_runs_on_its_declared_params_and_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, echo_reader: str
) -> None:
    """Each stage (every cell, pipeline order) runs in its own empty directory holding only
    its declared deps, on a view of its declared params, and writes exactly its declared outs;
    the outs then join the store the next stage's deps come from. Frozen stages (SGD train,
    absent offline) are run in tests/tpbench/test_turning_point_scorer_stage.py."""
    params = _params(tmp_path, echo_reader)
    monkeypatch.setenv("COMPRESSBENCH_ANSWER_CACHE", str(tmp_path / "answers.sqlite"))
    store = tmp_path / "store"
    ran = []
    for decl in (d for d in declarations() if not d.frozen):
        for cell in _cells(decl, params):
            box = tmp_path / "box" / "-".join([decl.name, *map(str, cell)])
            box.mkdir(parents=True)
            for dep in decl.deps:
                _copy(store / _path(dep, decl, cell), box / _path(dep, decl, cell))
            given = _files(box)
            monkeypatch.chdir(box)
            decl.run(params, *cell)
            outs = {_path(o.path, decl, cell) for o in (*decl.outs, *decl.metrics, *decl.plots)}
            # a folder out holds the files written under it; run logs (logs/) are the one
            # undeclared write: observations nothing depends on (pipeline/run_log.py)
            made = {f for f in _files(box) - given if LOGS not in f.parents}
            assert all((box / o).exists() for o in outs), decl.name
            assert made == {f for f in made if any(f == o or o in f.parents for o in outs)}, (
                decl.name
            )
            for out in outs:
                _copy(box / out, store / out)
            ran.append(decl.name)
    assert set(ran) == {d.name for d in declarations() if not d.frozen}
    summary = (store / paths.SUMMARY_FILE).read_text(encoding="utf-8")
    assert "| recency |" in summary and "`mock` `echo`" in summary


def test_cli_writes_and_checks_dvc_yaml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "dvc.yaml"
    args = ["dvc-yaml", "--root", str(tmp_path)]
    assert main([*args, "--check"]) == 1  # absent
    assert main(args) == 0
    for rel in render(declarations()):
        assert (tmp_path / rel).read_text("utf-8") == (REPO_ROOT / rel).read_text(encoding="utf-8")
    assert main([*args, "--check"]) == 0
    out.write_text(out.read_text(encoding="utf-8").replace("- scoring\n", ""), encoding="utf-8")
    assert main([*args, "--check"]) == 1
    assert "differs from the stage declarations" in capsys.readouterr().err
    main(args)
    leftover = tmp_path / "dvc-stages" / "gone" / "dvc.yaml"  # a stage that moved back to the root
    leftover.parent.mkdir(parents=True)
    leftover.write_text("stages: {}\n", encoding="utf-8")
    assert main([*args, "--check"]) == 1
    assert "is no longer generated" in capsys.readouterr().err
