"""The JobSpec `parameters` of a judge run: known keys only, typed, with documented defaults.

`threshold` decides pass/fail (for hallucination: detected when the score exceeds it);
`chatbot_role` is the persona for role-adherence when the file has no chatbot_role column;
`criteria`, `evaluation_steps`, `fields` and `label` are the g-eval judge's (a benchmark reads the
ones its PARAMETERS name; lasagna.judges.registry refuses the others).
"""

from __future__ import annotations

import difflib
import re
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
    criteria: str | None = None  # g-eval: what to judge, in words
    evaluation_steps: tuple[str, ...] | None = None  # g-eval: fixed steps (else written)
    fields: tuple[str, ...] | None = None  # g-eval: the test-case columns the judge reads
    label: str | None = None  # g-eval: the criterion's short name in tables and columns

    def as_dict(self) -> dict[str, Any]:
        """Every parameter, but a benchmark's own ones only when set, so that judges that
        do not read them keep the keys they had before those parameters existed."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in OWN:
            if out[name] is None:
                del out[name]
            elif isinstance(out[name], tuple):
                out[name] = list(out[name])
        return out

    def own_set(self) -> list[str]:
        """The benchmark-specific parameters that are set."""
        return [name for name in OWN if getattr(self, name) is not None]


OWN = ("criteria", "evaluation_steps", "fields", "label")  # read by some benchmarks only
CASE_FIELDS = ("input", "actual_output", "expected_output", "context", "retrieval_context")
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
    "criteria": 'give the criterion as text, e.g. criteria="Is the answer polite?"',
    "evaluation_steps": "give a list of steps in a sweep, or separate them with | on the "
    'command line: evaluation_steps="Check the tone.|Check for blame."',
    "label": "give a short name: letters, digits, - or _, e.g. label=politeness",
    "fields": f"name columns among {', '.join(CASE_FIELDS)}, with actual_output, e.g. "
    "fields=input,actual_output,expected_output",
}
MAX_STEPS = 8
MAX_CRITERIA_CHARS = 2000


def _texts(key: str, value: Any, separator: str) -> tuple[str, ...]:
    """A list (YAML) or one string split at `separator` (the command line) -> texts."""
    if isinstance(value, str):
        items = value.split(separator)
    elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        items = list(value)
    else:
        raise ValueError(f"{key} must be a list of texts, got {value!r}")
    texts = tuple(t.strip() for t in items if t.strip())
    if not texts:
        raise ValueError(f"{key} is empty")
    return texts


def _own(key: str, value: Any) -> Any:
    if key == "criteria":
        if not isinstance(value, str) or not value.strip():
            raise ValueError("criteria must be non-empty text")
        if len(value) > MAX_CRITERIA_CHARS:
            raise ValueError(f"criteria is {len(value)} characters (at most {MAX_CRITERIA_CHARS})")
        return value.strip()
    if key == "label":
        text = str(value).strip().lower()
        if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,31}", text):
            raise ValueError(
                f"label must be a short name (up to 32 letters, digits, - or _), got {value!r}"
            )
        return text.replace("_", "-")
    if key == "evaluation_steps":
        steps = _texts(key, value, "|")
        if len(steps) > MAX_STEPS:
            raise ValueError(f"evaluation_steps has {len(steps)} steps (at most {MAX_STEPS})")
        return steps
    names = _texts(key, value, ",")
    unknown = [n for n in names if n not in CASE_FIELDS]
    if unknown:
        raise ValueError(f"fields names unknown column(s) {', '.join(unknown)}")
    if "actual_output" not in names:
        raise ValueError("fields must include actual_output (the text being judged)")
    return tuple(dict.fromkeys(names))


def _convert(key: str, value: Any) -> Any:
    if key in OWN:
        return _own(key, value)
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
