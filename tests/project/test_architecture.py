"""The package's shape: small modules, no import cycles, layers that only import downwards.

The import graph is static (AST): module-level and function-level imports and the module names
lazy registries hold as strings (see ``compressbench.pipeline.import_graph``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compressbench.pipeline.import_graph import ROOT, ImportGraph, build_graph

MAX_LINES = 400

# package -> packages (or modules) it must never import
SHARED = ("text", "corpora", "compress", "readers", "analysis", "tracking", "flops", "viewer")
BENCHMARKS = ("tpbench", "keepbench")
FORBIDDEN: dict[str, tuple[str, ...]] = {
    **{p: (*BENCHMARKS, "pipeline", "scale", "commands", "cli", "config") for p in SHARED},
    # each benchmark stands beside the other, never on it; its stages stand on the engine
    **{b: ("scale", "commands", "cli", *set(BENCHMARKS) - {b}) for b in BENCHMARKS},
    # the engine (declarations, dvc.yaml, fingerprints, paths, tracking glue) knows no benchmark
    "pipeline": (*BENCHMARKS, "scale", "commands", "cli"),
    "scale": ("commands", "cli"),
    # the preflight checks read the configuration and the shared layers, never run a stage
    "doctor": (*BENCHMARKS, "pipeline", "scale", "commands", "cli"),
}


@pytest.fixture(scope="module")
def graph() -> ImportGraph:
    return build_graph()


def _top(module: str) -> str:
    """``compressbench.tpbench.scoring.parse`` -> ``tpbench``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_module_is_under_400_lines() -> None:
    sizes = {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in ROOT.rglob("*.py")
    }
    assert len(sizes) > 50
    too_long = {p: n for p, n in sizes.items() if n >= MAX_LINES}
    assert not too_long, f"modules of {MAX_LINES}+ lines: {too_long}"


def test_no_import_cycles(graph: ImportGraph) -> None:
    assert graph.cycles() == []


def test_no_package_cycles(graph: ImportGraph) -> None:
    """The graph of top-level packages (config, pipeline, tpbench, ...) is acyclic too."""
    assert graph.package_cycles() == []


def test_a_package_cycle_without_a_module_cycle_is_found(tmp_path: Path) -> None:
    """``cfg`` -> ``bench.spec``, ``bench.stage`` -> ``engine.run``, ``engine.run`` -> ``cfg``:
    no module reaches itself, but the packages cfg -> bench -> engine -> cfg do."""
    pkg = tmp_path / "compressbench"
    for sub in ("bench", "engine"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text('"""root"""\n')
    (pkg / "cfg.py").write_text("from compressbench.bench import spec\n")
    (pkg / "bench" / "spec.py").write_text("X = 1\n")
    (pkg / "bench" / "stage.py").write_text("from compressbench.engine import run\n")
    (pkg / "engine" / "run.py").write_text("import compressbench.cfg\n")
    graph = build_graph(pkg)
    assert graph.cycles() == []
    assert graph.package_cycles() == [
        ["compressbench.bench", "compressbench.cfg", "compressbench.engine"]
    ]
    (pkg / "cfg.py").write_text("X = 2\n")  # config points one way: the cycle is gone
    assert build_graph(pkg).package_cycles() == []


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layers_import_only_downwards(graph: ImportGraph, package: str) -> None:
    forbidden = FORBIDDEN[package]
    violations = sorted(
        f"{module} -> {target}"
        for module in graph.files
        if _top(module) == package
        for target in graph.imports_of(module)
        if _top(target) in forbidden
    )
    assert not violations, "\n".join(violations)


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    """A function-level import, a relative one, a registry's lazy name and ``from pkg import
    module`` are edges; an ``if TYPE_CHECKING:`` import is not (it never runs)."""
    pkg = tmp_path / "compressbench"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""root"""\n')
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from compressbench.a import typing_only\n"
        "def f():\n    from . import y\n"
        "LAZY = {'z': 'compressbench.a.z:Thing'}\n"
    )
    (pkg / "a" / "y.py").write_text("from compressbench.a import w\n")
    for name in ("z", "w", "typing_only"):
        (pkg / "a" / f"{name}.py").write_text("")
    g = build_graph(pkg)
    assert g.imports_of("compressbench.a.x") == {"compressbench.a.y", "compressbench.a.z"}
    assert g.imports_of("compressbench.a.y") == {"compressbench.a.w"}
    (pkg / "a" / "w.py").write_text("def g():\n    import compressbench.a.x\n")
    assert build_graph(pkg).cycles() == [
        ["compressbench.a.w", "compressbench.a.x", "compressbench.a.y"]
    ]
