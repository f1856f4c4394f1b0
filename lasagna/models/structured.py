"""Structured model calls: the one prompt type and the one reply parser.

A `Prompt` is a versioned system text, a user template and the JSON schema of its reply.
Its sha256 covers all of them (and the reply budget), so any edit changes the hash recorded
with every result (a judge trial's key, a synthetic question's metadata): outputs of
different prompts never look alike. Bump `version` when the wording changes on purpose.

Every structured call, a judge's or question synthesis', asks with `Prompt.request` (its
reply budget from the bounded JSON grammar of lasagna.models.json_bounds, temperature 0)
and reads the reply with `read_reply`, one set of rules: the JSON object in the text, valid
against the schema; a constrained reply cut at max_tokens is closed and kept when it can be.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lasagna.common.digest import json_sha256
from lasagna.errors import Problem, UserError
from lasagna.models.base import ChatRequest, Completion, Message
from lasagna.models.json_bounds import max_reply_tokens


@dataclass(frozen=True)
class Prompt:
    """One kind of structured call: a system text, a user template and the reply's schema."""

    id: str  # "faithfulness.claims", "factoid"
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

    def request(
        self,
        fields: dict[str, str],
        *,
        extra: list[Message] | None = None,
        seed: int | None = None,
        logprobs: int | None = None,
    ) -> ChatRequest:
        """The call at temperature 0 with the reply's schema (constrained where the backend
        can) and its budget; `extra`: messages after the prompt (a re-ask)."""
        return ChatRequest(
            messages=self.messages(**fields) + list(extra or []),
            max_tokens=self.max_tokens,
            temperature=0.0,
            seed=seed,
            json_schema=self.schema,
            logprobs=logprobs,
        )


def check_structured_sampling(spec: Any) -> None:
    """Refuse sampling settings a structured call would not use: every call answers at
    temperature 0 without stop strings (`Prompt.request`), so a judge model's `temperature`
    or `stop` would change its key but not one of its verdicts."""
    if spec.temperature > 0:
        raise UserError(
            Problem(
                f"temperature {spec.temperature:g} would not be used: judges answer at "
                "temperature 0 (JSON replies against a schema, the same verdict every run)",
                field="model.temperature",
                fix="remove temperature from the judge's model",
            )
        )
    if spec.stop:
        raise UserError(
            Problem(
                f"stop {list(spec.stop)}: a judge's reply ends where its JSON object ends",
                field="model.stop",
                fix="remove stop from the judge's model",
            )
        )


class ReplyError(ValueError):
    """No usable reply. `kind` is the short reason ("not valid JSON"), the same for every
    reply that failed alike (what counts group by); the message adds the detail."""

    def __init__(self, kind: str, detail: str = ""):
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind


def parse_reply(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    """JSON text -> the object in it, valid against schema; ReplyError saying why not."""
    import jsonschema

    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ReplyError("no JSON object in the reply", repr(text[:80]))
    try:
        value = json.loads(text[start : end + 1])
    except json.JSONDecodeError as err:
        raise ReplyError("reply is not valid JSON", f"{err.msg}: {text[:80]!r}") from None
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as err:
        raise ReplyError("reply does not match its schema", err.message[:120]) from None
    return value


def close_json(text: str) -> str:
    """A JSON prefix cut by max_tokens, closed: the open string, arrays and objects."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    return text + ('"' if in_string else "") + "".join(reversed(stack))


def repair_truncated(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The reply of a constrained decoder cut by max_tokens: a valid JSON prefix. Close it
    (dropping a dangling key or list item) and validate; ValueError if nothing fits."""
    cut = text
    for _ in range(4):
        try:
            return parse_reply(close_json(cut), schema)
        except ValueError:
            at = cut.rfind(",")
            if at < 0:
                break
            cut = cut[:at]
    raise ReplyError("cut off at max_tokens and not repairable", repr(text[:80]))


def read_reply(
    completion: Completion, schema: dict[str, Any], constrained: bool
) -> tuple[dict[str, Any], bool]:
    """(the reply's value, whether it was cut at max_tokens and closed); ReplyError with the
    reason when there is none: the model failed, or the text is not a valid reply.
    `constrained`: the backend decoded with the schema's grammar, so a cut reply is a valid
    prefix worth closing."""
    if not completion.ok:
        raise ReplyError("model error", str(completion.error))
    if completion.finish_reason == "length":
        if constrained:
            return repair_truncated(completion.text, schema), True
        try:
            return parse_reply(completion.text, schema), False
        except ReplyError:
            raise ReplyError("cut off at max_tokens", repr(completion.text[:80])) from None
    return parse_reply(completion.text, schema), False
