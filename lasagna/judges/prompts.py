"""The judges' reply schemas and prompt texts; the prompt type itself is
lasagna.models.structured.Prompt (versioned, hashed: an edit changes every judge trial's key).
"""

from __future__ import annotations

from typing import Any

from lasagna.models.json_bounds import bounded_string
from lasagna.models.structured import Prompt

# Bounds on reply strings (lasagna.models.json_bounds): a small model that loops cannot run
# past them, and every reply fits its token budget (Prompt.max_tokens), so a constrained
# reply always finishes as valid JSON.
VERDICT_REASON_CHARS = 120  # a reason is a short sentence, not an essay
LIST_ITEM_CHARS = 120  # one claim / statement / question / fact


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
