"""Reader prompts of TPBench, verbatim (spec §3.8), the template hash and the task id (§6).

Probe types use the paper's names: ``P1`` initial goal, ``P2`` current value, ``P3`` goal plus
late update. (The released artifact calls them ``P1``, ``P3`` and ``P1_LATE``; see
:data:`ARTIFACT_PROBE_TYPES`.)

The user prompt is ``"Context:\\n" + CONTEXT + "\\n\\nQuestion: " + QUESTION +
"\\n\\nRequired JSON schema:\\n" + SCHEMA + "\\nReply with only the JSON object."``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

SYSTEM_PROMPT = (
    "You are reading a conversation that may be partial or compressed. Answer ONLY using the "
    "provided context. Reply with a single JSON object and no other text. Do not add markdown "
    "fences."
)

_VALUE_SCHEMA = (
    '{"value": <string>, "support": <verbatim span from context, <= 30 words>, '
    '"abstain": <true if you cannot tell, else false>}'
)
_JOINT_SCHEMA = (
    '{"value": <string in the format above>, "support": <verbatim span from context, '
    '<= 30 words>, "abstain": <true if you cannot tell, else false>}'
)

QUESTIONS: dict[str, str] = {
    "P1": (
        "What was the user's initial goal at the beginning of this conversation? Reply with one "
        'short noun phrase (e.g. "book a hotel", "find a flight", "reserve a restaurant").'
    ),
    "P2": (
        "After the most recent change visible in the context, what is the user's CURRENT value "
        "for {slot_human}? Reply with one short value."
    ),
    "P3": (
        "In one short reply, state BOTH (a) the user's task in this conversation AND (b) the "
        "final value the user decided on for {slot_human}. Format your answer as: "
        '"<task>; {slot_human}: <final value>".'
    ),
}

SCHEMAS: dict[str, str] = {"P1": _VALUE_SCHEMA, "P2": _VALUE_SCHEMA, "P3": _JOINT_SCHEMA}

# The answer schemas as JSON Schema, for the structured-output variant (``reader.structured``):
# not the published decoding (free text), so a structured run is labelled as such. P3's value
# is constrained to the ``<task>; <slot>: <value>`` shape its question asks for. Its character
# classes leave out the quote, the backslash and line breaks: a grammar built from the pattern
# reads it inside the JSON string, where ``[^;]`` would let the string run on past its quote.
_ANSWER_PROPERTIES = {"support": {"type": "string"}, "abstain": {"type": "boolean"}}
P3_VALUE_PATTERN = r'^[^;"\\\n]+; [^;:"\\\n]+: [^;"\\\n]+$'


def answer_json_schema(probe_type: str) -> dict[str, object]:
    """The JSON Schema of a probe type's answer object (value, support, abstain)."""
    value: dict[str, object] = {"type": "string"}
    if probe_type == "P3":
        value["pattern"] = P3_VALUE_PATTERN
    return {
        "type": "object",
        "properties": {"value": value, **_ANSWER_PROPERTIES},
        "required": ["value", "support", "abstain"],
        "additionalProperties": False,
    }


# Paper name -> the artifact's ``probe_type`` field, and back.
ARTIFACT_PROBE_TYPES: dict[str, str] = {"P1": "P1", "P2": "P3", "P3": "P1_LATE"}
PAPER_PROBE_TYPES: dict[str, str] = {v: k for k, v in ARTIFACT_PROBE_TYPES.items()}

CONTEXT_PLACEHOLDER = "{context}"


def question(probe_type: str, slot_human: str = "") -> str:
    """The question text of a probe type with the slot substituted."""
    try:
        template = QUESTIONS[probe_type]
    except KeyError:
        raise KeyError(
            f"unknown probe type {probe_type!r}; known: {', '.join(QUESTIONS)}"
        ) from None
    return template.replace("{slot_human}", slot_human)


def user_prompt(probe_type: str, context: str, slot_human: str = "") -> str:
    """The full user prompt for a rendered context (spec §3.8)."""
    return (
        "Context:\n"
        + context
        + "\n\nQuestion: "
        + question(probe_type, slot_human)
        + "\n\nRequired JSON schema:\n"
        + SCHEMAS[probe_type]
        + "\nReply with only the JSON object."
    )


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
    """A rendered reader prompt and its identifiers."""

    system: str
    user: str
    template_sha16: str


def build_prompt(probe_type: str, context: str, slot_human: str = "") -> Prompt:
    """System + user prompt for a rendered context."""
    return Prompt(
        system=SYSTEM_PROMPT,
        user=user_prompt(probe_type, context, slot_human),
        template_sha16=template_sha16(probe_type, slot_human),
    )
