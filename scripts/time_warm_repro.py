"""Time a warm ``dvc repro`` (nothing changed) of this repo's pipeline on its own params.yaml.

Builds a throwaway copy of the project (dvc.yaml, params.yaml, .dvcignore, .dvc/config, src/)
in its own git + DVC repo, fills every stage's outputs in-process with the mock
reader instead of the real one (DVC's bookkeeping does not depend on what the answers say),
records them with ``dvc commit``, then times ``dvc repro`` N times. ``--baseline REV`` also
times the dvc.yaml of a git revision in the same copy (interleaved runs, same outputs), so
two pipeline definitions are compared under the same machine load.

    python scripts/time_warm_repro.py --repeat 6 --baseline HEAD~1
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compressbench.keepbench.pipeline_spec import KEEPBENCH

REPO = Path(__file__).resolve().parents[1]
MOCK = "mock"  # the registered test backend: one fixed answer, no model


def _fill_outputs(root: Path) -> None:
    """Run every declared stage in-process (the copy's own src/) on the copy's params."""
    sys.path.insert(0, str(root / "src"))
    from compressbench.config import load_params
    from compressbench.pipeline.code_hash import write_fingerprint
    from compressbench.pipeline.declare import cells_of
    from compressbench.pipeline.dvc_yaml import fingerprint_stages
    from compressbench.stages import declarations

    params = load_params(root / "params.yaml")
    reader = dataclasses.replace(params.reader, backend=MOCK)
    keep = KEEPBENCH.of(params)  # KEEP's `llm` compressor names its own backend: echo it too
    compressors = {
        name: {**opts, "backend": MOCK, "model": "echo"} if name == "llm" else opts
        for name, opts in keep.compressors.items()
    }
    keep = dataclasses.replace(keep, compressors=compressors)
    params = dataclasses.replace(params, reader=reader, keepbench=keep)
    decls = declarations()
    for code in fingerprint_stages(decls):
        write_fingerprint(root / code.out, code.paths, root)
    for decl in decls:
        if decl.frozen:  # dvc repro skips it; its output is committed
            continue
        for cell in cells_of(decl.over, params):
            decl.run(params, *cell)


def _git_show(spec: str) -> str:
    return subprocess.run(
        ["git", "show", spec], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout


def _pipeline_files(root: Path, name: str = "dvc.yaml") -> dict[str, str]:
    """The copy's pipeline files called ``name`` (the root one and those under pipeline/)."""
    found = [root / name, *sorted(root.glob(f"pipeline/*/{name}"))]
    return {p.relative_to(root).as_posix(): p.read_text("utf-8") for p in found if p.exists()}


def _install(root: Path, files: dict[str, str], locks: dict[str, str]) -> None:
    """Make ``files`` (and their ``locks``) the copy's only pipeline definition."""
    for stale in [*_pipeline_files(root), *_pipeline_files(root, "dvc.lock")]:
        (root / stale).unlink()
    for rel, text in {**files, **locks}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def _timed(root: Path, *args: str) -> tuple[float, float]:
    """Wall and CPU seconds (the command and its children) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, cwd=root, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", help="git revision whose dvc.yaml to time as well")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="warm-repro-"))
    for name in ("params.yaml", ".dvcignore"):
        shutil.copy(REPO / name, root / name)
    shutil.copytree(REPO / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__"))
    sys.path.insert(0, str(root / "src"))
    from compressbench.pipeline.dvc_yaml import copy_dvc_files

    copy_dvc_files(REPO, root)
    os.environ["PYTHONPATH"] = str(root / "src")
    os.environ["COMPRESSBENCH_ANSWER_CACHE"] = str(root / ".cache" / "answers.sqlite")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["dvc", "init", "-q"], cwd=root, check=True)
    shutil.copy(REPO / ".dvc" / "config", root / ".dvc" / "config")
    cwd = Path.cwd()
    os.chdir(root)
    _fill_outputs(root)
    os.chdir(cwd)
    variants = {"current": _pipeline_files(root)}
    if args.baseline:
        variants[args.baseline] = {"dvc.yaml": _git_show(f"{args.baseline}:dvc.yaml")}
        for rel in _git_show(f"{args.baseline}").splitlines():  # its stages kept apart, if any
            if rel == "pipeline/":
                for sub in _git_show(f"{args.baseline}:pipeline").splitlines():
                    path = f"pipeline/{sub}dvc.yaml"
                    variants[args.baseline][path] = _git_show(f"{args.baseline}:{path}")
    locks = {}
    for name, files in variants.items():
        _install(root, files, {})
        live = [rel for rel, text in files.items() if "frozen: true" not in text]  # frozen:
        subprocess.run(["dvc", "commit", "-f", "-q", *live], cwd=root, check=True)  # lock kept
        locks[name] = _pipeline_files(root, "dvc.lock")
        for rel in set(files) - set(live):  # a frozen stage's lock is the committed one
            lock = rel.replace("dvc.yaml", "dvc.lock")
            locks[name][lock] = (REPO / lock).read_text(encoding="utf-8")
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for _ in range(args.repeat):
        for name, files in variants.items():
            _install(root, files, locks[name])
            times[name].append(_timed(root, "dvc", "repro", "-q"))
    for name, runs in times.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        print(
            f"{name}: warm dvc repro wall min {min(walls):.2f} s, median "
            f"{statistics.median(walls):.2f} s; CPU median {statistics.median(cpus):.2f} s; "
            f"dvc.lock {len(locks[name].get('dvc.lock', '').splitlines())} lines ({len(runs)} runs)"
        )
    shutil.rmtree(root)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
