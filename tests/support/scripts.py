"""Import a file of scripts/ as a module (the scripts are not a package)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from support.paths import REPO_ROOT


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as the module ``compressbench_<name>`` (loaded once)."""
    module_name = f"compressbench_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, REPO_ROOT / f"scripts/{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module
