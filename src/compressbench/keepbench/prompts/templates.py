"""Versioned prompt sets: loading, checking and rendering ``{{VAR}}`` templates.

A prompt set is one folder of ``.txt`` templates: a packaged version (``compress/v1``,
``judge/v1``) or any folder with the same file names (``prompt_dir``: e.g. the official
Appendix E text). Loading checks that every file of the kind exists and holds the placeholders
its caller fills (:data:`REQUIRED`), so a broken replacement fails before any model call.
Rendering fills every ``{{VAR}}`` in one pass (a value that itself contains ``{{X}}`` stays as
it is) and refuses a placeholder it has no value for. Written here rather than with Jinja
because Jinja would also interpret ``{% %}``/``{# #}`` and whitespace rules in an official
text pasted in verbatim; the paper's syntax is only ``{{VAR}}``.

Every record names the set by ``prompt_version`` (the packaged version, or ``custom:<folder
name>``) and ``prompt_sha256`` (over the file names and bytes), and caches key on the rendered
prompt itself, so editing a template never reuses an old answer.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compressbench.errors import InputError

PACKAGE_DIR = Path(__file__).resolve().parent
PLACEHOLDER = re.compile(r"\{\{([A-Z][A-Z0-9_]*)\}\}")

# kind -> file stem -> placeholders the file must contain (it may contain no others but those
# the caller supplies; see ALLOWED).
REQUIRED: dict[str, dict[str, tuple[str, ...]]] = {
    "compress": {
        "system_parallel": (),
        "system_conditional": (),
        "system_imbalanced": (),
        "demonstrations": ("EXAMPLES",),
        "demonstration": ("INDEX", "REQUEST", "COMPRESSION"),
        "user": ("QUESTION", "CONTEXT", "K"),
    },
    "judge": {
        "system": (),
        "entailment": ("COMPRESSED_CONTEXT", "PROPOSITION"),
        "parallel": ("COMPRESSED_CONTEXT", "PROPOSITION", "CONSTRAINTS_JSON"),
        "condition": ("COMPRESSED_CONTEXT", "CONDITION", "GENERAL_PROPOSITION"),
        "science": ("QUESTION", "COMPRESSED_CONTEXT", "PERSPECTIVE"),
        "policy": ("QUESTION", "COMPRESSED_CONTEXT", "PERSPECTIVE", "JURISDICTION"),
    },
}
# Optional placeholders a template may use on top of its required ones.
ALLOWED: dict[str, dict[str, tuple[str, ...]]] = {
    "judge": {
        "entailment": ("QUESTION",),
        "parallel": ("QUESTION",),
        "condition": ("QUESTION", "CONDITION_KEY", "DISAMBIGUATION"),
        "science": ("JURISDICTION",),
    },
}
DEFAULT_VERSION = "v1"


def placeholders(text: str) -> set[str]:
    """The ``{{VAR}}`` names in ``text``."""
    return set(PLACEHOLDER.findall(text))


def fill(text: str, values: dict[str, Any], *, where: str = "template") -> str:
    """``text`` with every ``{{VAR}}`` replaced by ``str(values[VAR])``, in one pass."""
    missing = sorted(placeholders(text) - set(values))
    if missing:
        raise InputError(f"no value for placeholder(s) {', '.join(missing)}", file=where)
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), text)


@dataclass(frozen=True)
class PromptSet:
    """The templates of one kind (``compress`` / ``judge``) at one version."""

    kind: str
    version: str
    root: Path
    texts: dict[str, str] = field(repr=False)

    def text(self, name: str) -> str:
        return self.texts[name]

    def render(self, name: str, **values: Any) -> str:
        """Template ``name`` filled with ``values`` (extra values are ignored)."""
        return fill(self.texts[name], values, where=str(self.root / f"{name}.txt"))

    @property
    def sha256(self) -> str:
        """sha256 over ``name\\0bytes\\0`` of every template, in name order."""
        digest = hashlib.sha256()
        for name in sorted(self.texts):
            digest.update(name.encode() + b"\0" + self.texts[name].encode() + b"\0")
        return digest.hexdigest()

    def record(self) -> dict[str, str]:
        """What identifies the prompts in a record (and in MLflow)."""
        return {
            "prompt_kind": self.kind,
            "prompt_version": self.version,
            "prompt_sha256": self.sha256,
        }


def packaged_versions(kind: str) -> list[str]:
    """The packaged versions of ``kind`` (folder names under ``prompts/<kind>/``)."""
    base = PACKAGE_DIR / kind
    return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def load_prompts(
    kind: str, version: str = DEFAULT_VERSION, prompt_dir: str | Path | None = None
) -> PromptSet:
    """The prompt set ``kind`` at packaged ``version``, or the one in ``prompt_dir``."""
    if kind not in REQUIRED:
        raise InputError(f"unknown prompt kind {kind!r}; allowed: {', '.join(REQUIRED)}")
    if prompt_dir is not None:
        root = Path(prompt_dir)
        label = f"custom:{root.name}"
        if not root.is_dir():
            raise InputError("prompt folder does not exist", file=str(root))
    else:
        known = packaged_versions(kind)
        if version not in known:
            raise InputError(
                f"unknown {kind} prompt version {version!r}; allowed: {', '.join(known)}",
                field="prompt_version",
            )
        root, label = PACKAGE_DIR / kind / version, version
    texts: dict[str, str] = {}
    for name, required in REQUIRED[kind].items():
        path = root / f"{name}.txt"
        if not path.is_file():
            raise InputError(f"missing template {name}.txt", file=str(root))
        text = path.read_text(encoding="utf-8")
        found = placeholders(text)
        missing = sorted(set(required) - found)
        if missing:
            raise InputError(f"template lacks {{{{{missing[0]}}}}}", file=str(path))
        extra = sorted(found - set(required) - set(ALLOWED.get(kind, {}).get(name, ())))
        if extra:
            raise InputError(f"unknown placeholder {{{{{extra[0]}}}}}", file=str(path))
        texts[name] = text.rstrip("\n")
    return PromptSet(kind, label, root, texts)
