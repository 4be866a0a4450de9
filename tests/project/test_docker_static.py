"""Static checks of the Docker images (no daemon): pinned bases, hashed locks that match
pyproject.toml, the CPU target installing what .ci/run installs, pinned compose images."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from compressbench.published_images import load_images_lock
from support.paths import REPO_ROOT
from support.scripts import load_script

DOCKERFILE = REPO_ROOT / "docker" / "Dockerfile"
COMPOSE = REPO_ROOT / "docker" / "compose.yaml"
CI_RUN = REPO_ROOT / ".ci" / "run"
DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
# Python 3.11 on linux x86_64: the environment the locks are resolved for.
LOCK_ENV = {"python_version": "3.11", "sys_platform": "linux", "platform_machine": "x86_64"}


LOCK = load_script("lock")
IMAGES_SCRIPT = load_script("images_lock")


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) per instruction, continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        current += " " + line[:-1] if line.endswith("\\") else " " + line
        if line.endswith("\\"):
            continue
        word, _, rest = current.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
        current = ""
    return out


def stages(instructions: list[tuple[str, str]]) -> dict[str, list[tuple[str, str]]]:
    """Stage name -> its instructions (FROM first)."""
    found: dict[str, list[tuple[str, str]]] = {}
    name = None
    for word, rest in instructions:
        if word == "FROM":
            parts = rest.split()
            name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else parts[0]
            found[name] = []
        if name is not None:
            found[name].append((word, rest))
    return found


def parse_lock(path: Path) -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) of a ``--generate-hashes`` requirements file."""
    entries: dict[str, tuple[str, list[str]]] = {}
    logical = path.read_text(encoding="utf-8").replace("\\\n", " ")
    for raw in logical.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("--extra-index-url "):
            continue
        m = re.match(r"([A-Za-z0-9_.-]+)(\[[^\]]*\])?==(\S+)(.*)$", line)
        assert m, f"{path.name}: not pinned with == : {line[:80]!r}"
        name, _extras, version, options = m.groups()
        hashes = re.findall(r"--hash=sha256:(\S+)", options)
        entries[str(canonicalize_name(name))] = (version, hashes)
    return entries


# ------------------------------------------------------------------------- base image pins


def test_every_from_pins_a_digest() -> None:
    instructions = dockerfile_instructions(DOCKERFILE.read_text(encoding="utf-8"))
    args: dict[str, str] = {}
    seen_stages: set[str] = set()
    froms = 0
    for word, rest in instructions:
        if word == "ARG" and "=" in rest and not seen_stages:
            key, value = rest.split("=", 1)
            args[key.strip()] = value.strip()
        if word != "FROM":
            continue
        froms += 1
        parts = rest.split()
        image = re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), "<unset>"), parts[0])
        if image not in seen_stages:
            assert DIGEST.search(image), f"FROM {parts[0]} -> {image}: not pinned by digest"
        if len(parts) >= 3:
            seen_stages.add(parts[2])
    assert froms >= 4
    assert DIGEST.search(args["BASE_IMAGE"])
    # The default base is public (Docker Hub's official Debian image), not a machine's registry.
    assert args["BASE_IMAGE"].startswith("docker.io/library/debian:bookworm-slim@sha256:")


def test_both_targets_exist_and_run_as_non_root_with_the_cli() -> None:
    found = stages(dockerfile_instructions(DOCKERFILE.read_text(encoding="utf-8")))
    runtime = dict(found["runtime"])
    assert runtime["ENTRYPOINT"] == '["/usr/local/bin/compressbench-entrypoint"]'
    assert runtime["CMD"] == '["dvc", "repro"]'
    volumes = runtime["VOLUME"]
    for path in ("/cache", "/workspace/data", "/mlflow"):
        assert f'"{path}"' in volumes
    for target in ("cpu", "cuda"):
        body = found[target]
        assert body[0] == ("FROM", "runtime AS " + target)
        users = [rest for word, rest in body if word == "USER"]
        assert users == ["bench"], f"{target}: USER {users}"
        env = " ".join(rest for word, rest in body if word == "ENV")
        assert "COMPRESSBENCH_IMAGE_LOCK_SHA256=${LOCK_SHA256}" in env
        assert "COMPRESSBENCH_BASE_DIGEST=${BASE_IMAGE}" in env
        runs = " ".join(rest for word, rest in body if word == "RUN")
        assert "sha256sum -c --quiet -" in runs  # the lock hash is checked, not trusted
        copied = [rest for word, rest in body if word == "COPY"]
        assert f"docker/requirements-{target}.lock /opt/compressbench/requirements.lock" in copied


def test_the_workspace_holds_every_pipeline_file() -> None:
    """The image's default `dvc repro` needs the root dvc.yaml and the stages kept apart
    (dvc-stages/<stage>/dvc.yaml, a frozen stage's dvc.lock) and the trained models/: copied and
    not docker-ignored."""
    runtime = stages(dockerfile_instructions(DOCKERFILE.read_text(encoding="utf-8")))["runtime"]
    copied = " ".join(rest for word, rest in runtime if word == "COPY")
    ignore = (REPO_ROOT / "docker" / "Dockerfile.dockerignore").read_text(encoding="utf-8").split()
    for path in (
        "dvc.yaml",
        "params.yaml",
        ".dvcignore",
        ".dvc/config",
        "dvc-stages",
        "src",
        "models",
    ):
        assert path in copied.split(), path
        assert f"!{path}" in ignore, path
    assert sorted(REPO_ROOT.glob("dvc-stages/*/dvc.yaml"))  # there is something to copy


def test_entrypoint_dispatches_to_the_cli() -> None:
    script = (REPO_ROOT / "docker" / "entrypoint.sh").read_text(encoding="utf-8")
    assert script.startswith("#!/bin/sh")
    assert '*) exec compressbench "$@" ;;' in script
    assert '"") exec dvc repro ;;' in script


# ------------------------------------------------------------------------- the locks


@pytest.mark.parametrize("target", sorted(LOCK.TARGETS))
def test_every_locked_requirement_is_pinned_with_hashes(target: str) -> None:
    entries = parse_lock(LOCK.TARGETS[target].lock)
    assert len(entries) > 100
    missing = [name for name, (_, hashes) in entries.items() if not hashes]
    assert not missing, f"{target} lock: no --hash for {missing}"
    assert all(re.fullmatch(r"[0-9a-f]{64}", h) for _, hs in entries.values() for h in hs)
    assert "compressbench" not in entries  # the project is installed from the context


@pytest.mark.parametrize("target", sorted(LOCK.TARGETS))
def test_lock_header_matches_pyproject(target: str) -> None:
    """The requirement set recorded at lock time is pyproject.toml's now (`lock.py --check`)."""
    assert LOCK.stale(LOCK.TARGETS[target]) is None, (
        f"docker/requirements-{target}.lock is stale: run python scripts/lock.py"
    )


@pytest.mark.parametrize("target", sorted(LOCK.TARGETS))
def test_lock_satisfies_every_pyproject_requirement(target: str) -> None:
    spec = LOCK.TARGETS[target]
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    entries = parse_lock(spec.lock)
    overrides = {}
    if spec.overrides:
        for line in LOCK.override_lines(REPO_ROOT / spec.overrides):
            req = Requirement(line)
            overrides[canonicalize_name(req.name)] = req
    checked = 0
    for req in LOCK.expand_extras(pyproject, spec.extras):
        if req.marker is not None and not req.marker.evaluate(LOCK_ENV):
            continue
        name = canonicalize_name(req.name)
        req = overrides.get(name, req)
        assert name in entries, f"{target} lock lacks {req} (pyproject.toml)"
        version = Version(entries[name][0])
        assert req.specifier.contains(version, prereleases=True), (
            f"{target} lock pins {name}=={version}, pyproject.toml wants {req}"
        )
        checked += 1
    assert checked >= 10


def test_requirement_set_hash_follows_pyproject(tmp_path: Path) -> None:
    """Adding a dependency to pyproject.toml changes the recorded hash (the check can fail)."""
    (tmp_path / "pyproject.toml").write_text(
        (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker/cuda-overrides.txt").write_text("torch==2.11.0\n", encoding="utf-8")
    target = LOCK.TARGETS["cpu"]
    before = LOCK.requirement_set_sha256(target, tmp_path)
    text = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    text = text.replace('"scipy>=1.11",', '"scipy>=1.11",\n  "six",', 1)
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    assert LOCK.requirement_set_sha256(target, tmp_path) != before


def test_cpu_lock_takes_the_cpu_torch_and_cuda_lock_the_cuda_stack() -> None:
    cpu = parse_lock(LOCK.TARGETS["cpu"].lock)
    cuda = parse_lock(LOCK.TARGETS["cuda"].lock)
    assert cpu["torch"][0].endswith("+cpu")
    # The lock names the public source of the CPU torch (this machine's wheel folder mirrors it).
    text = LOCK.TARGETS["cpu"].lock.read_text(encoding="utf-8")
    assert f"--extra-index-url {LOCK.TORCH_CPU_INDEX}\n" in text
    assert (
        "/opt/wheels" not in text
        and LOCK.TORCH_CPU_INDEX not in LOCK.TARGETS["cuda"].lock.read_text()
    )
    assert not any(name.startswith("nvidia-") for name in cpu)
    assert "vllm" in cuda and "kvpress" in cuda and "llmlingua" in cuda
    assert not cuda["torch"][0].endswith("+cpu")
    assert any(name.startswith("nvidia-cu") for name in cuda)


# ------------------------------------------------------------------------- CPU target == CI


def _project_extras(command: str) -> set[str]:
    """Extras of the project install in a pip command (``-e ".[a,b]"`` / ``"/x[a]"``)."""
    for token in shlex.split(command):
        m = re.fullmatch(r"(?:\.|/tmp/project)\[([\w,]+)\]", token)
        if m:
            return set(m.group(1).split(","))
    return set()


def test_cpu_target_installs_what_ci_installs() -> None:
    ci_lines = [
        line.strip()
        for line in CI_RUN.read_text(encoding="utf-8").splitlines()
        if line.strip().startswith("python -m pip install")
    ]
    ci_extras = [e for line in ci_lines if (e := _project_extras(line))]
    assert len(ci_extras) == 1, ci_lines
    assert any("--upgrade pip" in line for line in ci_lines)

    body = stages(dockerfile_instructions(DOCKERFILE.read_text(encoding="utf-8")))["build-cpu"]
    runs = [rest for word, rest in body if word == "RUN" and "pip-install" in rest]
    image_extras = [e for run in runs if (e := _project_extras(run))]
    assert image_extras == ci_extras
    lock_run = next(run for run in runs if "--require-hashes" in run)
    assert "-r /opt/compressbench/requirements.lock" in lock_run
    assert LOCK.TARGETS["cpu"].extras == tuple(sorted(ci_extras[0]))
    # .ci/run upgrades pip; the image installs the locked pip in the same step as the rest.
    assert "pip" in parse_lock(LOCK.TARGETS["cpu"].lock)


# ------------------------------------------------------------------------- compose


def test_compose_images_come_from_the_images_lock_and_volumes_are_named() -> None:
    compose = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    services = compose["services"]
    assert {"postgres", "mlflow", "vllm"} <= set(services)
    images = load_images_lock(REPO_ROOT / "docker" / "images.lock")
    for name, service in services.items():
        image = service["image"]
        default = re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", image)
        published = images[IMAGES_SCRIPT.SERVICES[name]]
        assert default == published.compose_ref, f"service {name}: {image}"
        # Released: pinned by digest; before the first release, the version tag it will push.
        assert DIGEST.search(default) if published.digest else default.endswith(":0.1.0")
        assert not default.startswith("localhost"), f"service {name}: a machine-local registry"
        for mount in service.get("volumes", []):
            source = mount.split(":", 1)[0] if isinstance(mount, str) else mount["source"]
            assert source in compose["volumes"], f"service {name}: {source} is not a named volume"
    assert services["vllm"]["profiles"] == ["gpu"]
    assert "postgresql" in " ".join(services["mlflow"]["command"])
