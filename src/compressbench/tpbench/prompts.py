"""Reader prompts of TPBench, verbatim (spec §3.8), the template hash and the task id (§6).

Each probe type's question and answer schema are members of its
:class:`~compressbench.tpbench.probe_types.spec.ProbeType`.

The user prompt is ``"Context:\\n" + CONTEXT`` (:func:`prompt_context`) joined by
:func:`~compressbench.readers.base.render_user` to ``QUESTION + "\\n\\nRequired JSON
schema:\\n" + SCHEMA + "\\nReply with only the JSON object."`` (:func:`prompt_question`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compressbench.readers.base import ChatRequest, render_user
from compressbench.tpbench.probe_types import get_probe_type

SYSTEM_PROMPT = (
    "You are reading a conversation that may be partial or compressed. Answer ONLY using the "
    "provided context. Reply with a single JSON object and no other text. Do not add markdown "
    "fences."
)

CONTEXT_PLACEHOLDER = "{context}"


def question(probe_type: str, slot_human: str = "") -> str:
    """The question text of a probe type with the slot substituted."""
    template = get_probe_type(probe_type, pipeline=True).question
    return template.replace("{slot_human}", slot_human)


def prompt_context(context: str) -> str:
    """The context part of the user prompt: ``"Context:\\n" + context``."""
    return "Context:\n" + context


def prompt_question(probe_type: str, slot_human: str = "") -> str:
    """The question part of the user prompt: the question, the answer schema, the reply rule."""
    return (
        question(probe_type, slot_human)
        + "\n\nRequired JSON schema:\n"
        + get_probe_type(probe_type, pipeline=True).answer_schema
        + "\nReply with only the JSON object."
    )


def user_prompt(probe_type: str, context: str, slot_human: str = "") -> str:
    """The full user prompt for a rendered context (spec §3.8): its context and question parts
    joined by :func:`~compressbench.readers.base.render_user`."""
    return render_user(prompt_context(context), prompt_question(probe_type, slot_human))


def split_user(user: str, context: str | None) -> tuple[str, str | None]:
    """``(context part, question part)`` of a stored user prompt built around the rendered
    ``context`` (a contexts row's ``prompt_user`` and ``compressed_text_used``); a prompt not
    built that way (or with no context given) is all context: ``(user, None)``."""
    head = None if context is None else render_user(prompt_context(context), "")
    if context is not None and head is not None and user.startswith(head):
        return prompt_context(context), user[len(head) :]
    return user, None


def template_sha16(probe_type: str, slot_human: str = "") -> str:
    """Hash of one prompt-template instance: our definition (the artifact's is unpublished).

    First 16 hex digits of ``sha256(SYSTEM_PROMPT + "\\n\\n" + user_prompt(probe_type,
    "{context}", slot_human))`` - i.e. the system prompt and the user template with the slot
    substituted and the context left as the literal placeholder ``{context}``. It therefore differs
    per probe type and slot, not per dialogue or method (as in the artifact, §3.7).
    """
    text = SYSTEM_PROMPT + "\n\n" + user_prompt(probe_type, CONTEXT_PLACEHOLDER, slot_human)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def prompt_sha16(system: str, user: str) -> str:
    """``sha256(system + "\\n\\n" + user)``, first 16 hex digits."""
    return hashlib.sha256((system + "\n\n" + user).encode("utf-8")).hexdigest()[:16]


def task_id(
    probe_id: str,
    method: str,
    probe_type: str,
    ratio: float,
    template_hash: str,
    system: str,
    user: str,
) -> str:
    """Reader resume key (spec §6): first 16 hex of sha1 of
    ``probe_id|method|probe_type|ratio|template_sha16|prompt_sha16``; ``ratio`` as ``repr(float)``.
    """
    key = "|".join(
        (
            probe_id,
            method,
            probe_type,
            repr(float(ratio)),
            template_hash,
            prompt_sha16(system, user),
        )
    )
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Prompt:
    """A rendered reader prompt (system, and the user turn's context and question parts) and
    its identifiers."""

    system: str
    context: str
    question: str
    template_sha16: str

    @property
    def user(self) -> str:
        return render_user(self.context, self.question)

    def request(self, id: str, max_new_tokens: int) -> ChatRequest:
        """The reader request of this prompt, its context and question apart."""
        return ChatRequest(id, self.system, self.context, max_new_tokens, question=self.question)


def build_prompt(probe_type: str, context: str, slot_human: str = "") -> Prompt:
    """System + user prompt for a rendered context."""
    return Prompt(
        system=SYSTEM_PROMPT,
        context=prompt_context(context),
        question=prompt_question(probe_type, slot_human),
        template_sha16=template_sha16(probe_type, slot_human),
    )


def context_request(
    id: str,
    system: str,
    user: str,
    context: str | None,
    max_new_tokens: int,
    response_schema: Mapping[str, Any] | None = None,
) -> ChatRequest:
    """The request of a stored prompt (``prompt_system``, ``prompt_user``) built around the
    rendered ``context``, its context and question apart (:func:`split_user`)."""
    head, tail = split_user(user, context)
    return ChatRequest(id, system, head, max_new_tokens, response_schema, question=tail)
