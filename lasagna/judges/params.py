"""The JobSpec `parameters` of a judge run: known keys only, typed, with documented defaults.

`threshold` decides pass/fail (for hallucination: detected when the score exceeds it);
`chatbot_role` is the persona for role-adherence when the file has no chatbot_role column.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, fields
from typing import Any

from lasagna.errors import Problem

DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class JudgeParams:
    threshold: float = DEFAULT_THRESHOLD
    chatbot_role: str | None = None
    # faithfulness / summarization alignment: does a claim the context neither supports nor
    # contradicts ("not enough information") lower the score? DeepEval: no (false).
    penalize_unverified: bool = False
    assessment_questions: int = 5  # summarization coverage: yes/no questions from the source
    max_claims: int = 8  # claims / statements / intentions / facts extracted per row at most

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


_KINDS = {f.name: f.type for f in fields(JudgeParams)}


def parse_params(raw: dict[str, Any], where: str = "--param") -> tuple[JudgeParams, list[Problem]]:
    """Strings from the command line or values from YAML -> JudgeParams, every problem listed."""
    problems: list[Problem] = []
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in _KINDS:
            close = difflib.get_close_matches(key, list(_KINDS), n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            problems.append(
                Problem(
                    f"unknown judge parameter '{key}'",
                    where=where,
                    field=key,
                    fix=f"{hint}known parameters: {', '.join(_KINDS)}",
                )
            )
            continue
        try:
            values[key] = _convert(key, value)
        except ValueError as err:
            problems.append(Problem(str(err), where=where, field=key, fix=_FIXES[key]))
    if problems:
        return JudgeParams(), problems
    return JudgeParams(**values), []


_FIXES = {
    "threshold": "give a number between 0 and 1, e.g. threshold=0.7",
    "chatbot_role": 'give the persona as text, e.g. chatbot_role="support agent"',
    "penalize_unverified": "write true or false",
    "assessment_questions": "give a whole number from 1 to 10",
    "max_claims": "give a whole number from 1 to 8 (the reply schema holds 8 at most)",
}


def _convert(key: str, value: Any) -> Any:
    if key == "chatbot_role":
        if not isinstance(value, str) or not value.strip():
            raise ValueError("chatbot_role must be non-empty text")
        return value.strip()
    if key == "penalize_unverified":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "yes", "1"):
            return True
        if text in ("false", "no", "0"):
            return False
        raise ValueError(f"penalize_unverified must be true or false, got {value!r}")
    if key == "threshold":
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"threshold must be a number, got {value!r}") from None
        if isinstance(value, bool) or not 0.0 <= number <= 1.0:
            raise ValueError(f"threshold must be between 0 and 1, got {value!r}")
        return number
    limit = 10 if key == "assessment_questions" else 8
    try:
        whole = int(str(value))
    except ValueError:
        raise ValueError(f"{key} must be a whole number, got {value!r}") from None
    if isinstance(value, bool) or not 1 <= whole <= limit:
        raise ValueError(f"{key} must be between 1 and {limit}, got {value!r}")
    return whole
