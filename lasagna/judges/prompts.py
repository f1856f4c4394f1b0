"""Versioned, hashed judge prompts and the JSON schemas of their replies.

A prompt's sha256 covers its id, version, texts and reply schema, so any edit changes the
hash recorded with every result (and the trial key): scores from different prompts never
look comparable. Bump `version` when the wording changes on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lasagna.common.digest import json_sha256
from lasagna.models.base import Message
from lasagna.models.json_bounds import bounded_string, max_reply_tokens

# Bounds on reply strings (lasagna.models.json_bounds): a small model that loops cannot run
# past them, and every reply fits its token budget (Prompt.max_tokens), so a constrained
# reply always finishes as valid JSON.
VERDICT_REASON_CHARS = 120  # a reason is a short sentence, not an essay
LIST_ITEM_CHARS = 120  # one claim / statement / question / fact


@dataclass(frozen=True)
class Prompt:
    """One kind of judge call: a system text, a user template and the reply's schema."""

    id: str  # "faithfulness.claims"
    version: str  # "v1"
    system: str
    user: str  # str.format template over the call's fields
    schema: dict[str, Any] = field(hash=False)

    @property
    def max_tokens(self) -> int:
        """The reply budget: the most tokens a reply valid against the schema can take."""
        return max_reply_tokens(self.schema)

    @property
    def sha256(self) -> str:
        return json_sha256(
            [self.id, self.version, self.system, self.user, self.schema, self.max_tokens]
        )

    @property
    def label(self) -> str:
        return f"{self.id}@{self.version}"

    def messages(self, **fields: str) -> list[Message]:
        return [
            Message(role="system", content=self.system),
            Message(role="user", content=self.user.format(**fields)),
        ]


def list_schema(key: str, max_items: int) -> dict[str, Any]:
    """{key: [short strings]}, bounded so a looping small model cannot run away."""
    return {
        "type": "object",
        "properties": {
            key: {
                "type": "array",
                "items": bounded_string(LIST_ITEM_CHARS),
                "maxItems": max_items,
            }
        },
        "required": [key],
        "additionalProperties": False,
    }


def verdict_schema(values: tuple[str, ...], key: str = "verdict") -> dict[str, Any]:
    """{key: one of values, reason: short string}: the verdict first, then why. `key` names
    what the verdict says when "yes" is not the good answer ("attrition": yes = forgot)."""
    return {
        "type": "object",
        "properties": {
            key: {"type": "string", "enum": list(values)},
            "reason": bounded_string(VERDICT_REASON_CHARS),
        },
        "required": [key, "reason"],
        "additionalProperties": False,
    }


def prompt_versions(prompts: tuple[Prompt, ...]) -> dict[str, str]:
    """label -> sha256, as stored in a trial's identity and the manifest."""
    return {p.label: p.sha256 for p in prompts}


def passages_text(passages: list[str]) -> str:
    return "\n".join(f"[{i + 1}] {p}" for i, p in enumerate(passages))


def conversation_text(turns: list[dict[str, str]], upto: int | None = None) -> str:
    """Turns numbered from 1 as 'n. role: content' (up to turn index `upto`, inclusive)."""
    chosen = turns if upto is None else turns[: upto + 1]
    return "\n".join(f"{i + 1}. {t['role']}: {t['content']}" for i, t in enumerate(chosen))
