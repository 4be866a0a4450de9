"""Import a file of scripts/ or benchmarks/ as a module (neither folder is a package)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from support.paths import REPO_ROOT


def load_script(name: str, folder: str = "scripts") -> ModuleType:
    """``<folder>/<name>.py`` as the module ``compressbench_<name>`` (loaded once)."""
    module_name = f"compressbench_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, REPO_ROOT / folder / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module
