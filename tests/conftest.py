"""Shared fixtures: where the TPBench release rows (tests/data) and the read-only reference
material (../shared beside the repo) live, a git clone of the repository for the tests that
drive real DVC, a tiny LLMLingua-2 model and a real llama.cpp server (a deterministic reader
is the registered ``mock`` backend: ``support/answer_tables.py``).

The helpers behind them are in ``support/`` (tests/ is on ``sys.path``: pyproject's pytest
``pythonpath``); tests import helpers from there, never from another test module."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from support.hotel_dialogue import HOTEL_TEXTS
from support.paths import RELEASE, REPO_ROOT, SHARED


def _require(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is absent (reference material lives in ../shared beside the repo)")
    return path


@pytest.fixture(scope="session")
def ref_dir() -> Path:
    """../shared/ref: spec, scorer reference cases, released probe rows."""
    return _require(SHARED / "ref")


@pytest.fixture(scope="session")
def release_dir() -> Path:
    """tests/data/tpbench_release: the released probe rows, scorer reference cases and judge
    prompt, kept in the repository (every clone runs the tests that read them)."""
    return RELEASE


@pytest.fixture(scope="session")
def corpora_dir() -> Path:
    """../shared/corpora: real SGD and MultiWOZ 2.2 files (gzipped upstream JSON)."""
    return _require(SHARED / "corpora")


# -- a git clone of the repository (the tests that drive real DVC) ---------------------------


def _git(cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()
        raise RuntimeError(f"git {' '.join(args)} in {cwd}: {err}")
    return proc.stdout


def clone_worktree(dest: Path) -> Path:
    """``git clone`` the repository into ``dest``, then bring over what is on disk and not
    committed: the diff of tracked files against the cloned commit (binary-safe; edits,
    deletions, renames) and every untracked file git does not ignore. The clone so holds the
    code under test with git's own view of it (``.gitignore``, ``.dvcignore``, committed locks),
    as a user's clone plus a developer's uncommitted work."""
    head = _git(REPO_ROOT, "rev-parse", "HEAD").decode().strip()
    _git(REPO_ROOT, "clone", "-q", "--no-checkout", str(REPO_ROOT), str(dest))
    # on a branch at the commit the diff below is taken against; an identity to commit with
    _git(dest, "checkout", "-q", "-B", "main", head)
    _git(dest, "config", "user.name", "compressbench tests")
    _git(dest, "config", "user.email", "tests@compressbench.invalid")
    diff = _git(
        REPO_ROOT,
        *("-c", "core.quotepath=off", "diff", "--binary", "--no-color", "--no-ext-diff"),
        *("--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", head),
    )
    if diff:
        _git(dest, "apply", "--whitespace=nowarn", "-", stdin=diff)
    listed = _git(REPO_ROOT, "ls-files", "--others", "--exclude-standard", "-z")
    for rel in filter(None, listed.decode().split("\0")):
        if rel.endswith("/"):  # a nested repository: not part of this one
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / rel, target, follow_symlinks=False)
    return dest


@pytest.fixture(scope="session")
def clone_repo() -> Callable[[Path], Path]:
    """``clone_repo(dest)`` makes a git clone of the repository at ``dest`` (a folder that does
    not exist yet, e.g. under ``tmp_path``) holding the working tree as it is on disk; see
    :func:`clone_worktree`. Tests that run ``dvc`` run it there, never in a hand-assembled
    folder: DVC reads ``.gitignore`` (it refuses a git-ignored ``dvc.lock``), ``.dvcignore``
    and the committed locks."""
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("the repository is not a git checkout (or git is missing)")
    return clone_worktree


# -- tiny LLMLingua-2 model (the selector tests and the method matrix) -----------------------

# Tokenizer training text: the hotel dialogue of the selector tests plus a few more lines.
SP_SENTENCES = [
    *HOTEL_TEXTS,
    "I would like to book a table for four people tonight.",
    "The restaurant serves Italian food in the centre of town.",
    "Please find me a train to London on Saturday morning.",
    "Thank you, that is all I need today. Goodbye!",
]


@pytest.fixture(scope="session")
def tiny_llmlingua2(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A random-weight XLM-R token classifier + SentencePiece tokenizer, saved in a dir whose
    name has ``xlm-roberta-large`` (llmlingua picks its word rule from the model name)."""
    pytest.importorskip("llmlingua")
    spm = pytest.importorskip("sentencepiece")
    import torch
    from transformers import (
        XLMRobertaConfig,
        XLMRobertaForTokenClassification,
        XLMRobertaTokenizer,
    )

    root = tmp_path_factory.mktemp("llmlingua2")
    prefix = root / "sp"
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(SP_SENTENCES),
        model_prefix=str(prefix),
        vocab_size=160,
        model_type="unigram",
        character_coverage=1.0,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    sp = spm.SentencePieceProcessor(model_file=str(prefix) + ".model")
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    pieces = [
        (sp.id_to_piece(i), sp.get_score(i))
        for i in range(sp.get_piece_size())
        if not (sp.is_control(i) or sp.is_unknown(i))
    ]
    vocab = [(s, 0.0) for s in specials] + pieces + [("<mask>", 0.0)]
    tokenizer = XLMRobertaTokenizer(vocab=vocab)
    model_dir = root / "tiny-xlm-roberta-large-test"
    tokenizer.save_pretrained(model_dir)
    config = XLMRobertaConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=520,
        num_labels=2,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        architectures=["XLMRobertaForTokenClassification"],
    )
    torch.manual_seed(0)
    XLMRobertaForTokenClassification(config).save_pretrained(model_dir)
    return str(model_dir)


# -- a real llama.cpp server ----------------------------------------------------------------


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    """The ``/v1`` base URL of a real ``llama_cpp.server`` on SmolLM2-135M (one per module;
    skipped when llama-cpp-python[server] is not installed)."""
    from support.llama_server import serve_smollm2

    yield from serve_smollm2()
