"""Bounded JSON replies: schemas whose every valid reply fits a known number of tokens.

A constrained decoder (vLLM with xgrammar) guarantees that a reply follows its schema only
if the reply is allowed to finish. Two things let a small model run into `max_tokens`
first: xgrammar's JSON grammar admits unbounded whitespace between tokens (a model that
emits newlines forever is still "valid"), and a string bound in characters says nothing
about tokens. So:

- strings are bounded by a `pattern` of characters that need no JSON escape
  (`bounded_string`): a string of n characters is at most 4n bytes of UTF-8;
- the grammar sent to vLLM allows at most `WHITESPACE` whitespace characters wherever
  JSON allows whitespace (`json_grammar`);
- `max_reply_tokens(schema)` is then the most bytes a valid reply can have, plus the end
  token. A token is at least one byte, so a reply with that budget always finishes.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

WHITESPACE = 2  # whitespace characters allowed at each place JSON allows them
UTF8_MAX = 4  # bytes of the longest UTF-8 character
# xgrammar 0.2.8 compiles a pattern repeated more than 128 times in a grammar it cannot
# compile with its cache on (as vLLM runs it): "per_rule_fsm_hashes ... is false"
MAX_STRING_CHARS = 128
# any character but the quote, the backslash and control characters: none needs escaping
STRING_CHARS = r'[^"\\\x00-\x1f]'
_BOUNDS = re.compile(r"^\^" + re.escape(STRING_CHARS) + r"\{(\d+),(\d+)\}\$$")


def bounded_string(max_chars: int, min_chars: int = 0) -> dict[str, Any]:
    """A JSON-schema string of min..max characters that need no escape."""
    if not 0 <= min_chars <= max_chars <= MAX_STRING_CHARS:
        raise ValueError(f"string bounds {min_chars}..{max_chars} outside 0..{MAX_STRING_CHARS}")
    return {"type": "string", "pattern": f"^{STRING_CHARS}{{{min_chars},{max_chars}}}$"}


def max_reply_tokens(schema: dict[str, Any]) -> int:
    """An upper bound on the tokens of any reply the grammar of `schema` accepts (its bytes
    with `WHITESPACE` at each gap, plus the end token). ValueError for an unbounded schema."""
    return _max_bytes(schema) + 1


def _max_bytes(s: dict[str, Any]) -> int:
    if "enum" in s:
        return max(len(json.dumps(v).encode()) for v in s["enum"])
    kind = s.get("type")
    if kind == "string":
        return 2 + UTF8_MAX * _string_chars(s)
    if kind == "boolean":
        return len("false")
    if kind == "integer":
        if "minimum" not in s or "maximum" not in s:
            raise ValueError(f"unbounded integer in a reply schema: {s}")
        return max(len(str(s["minimum"])), len(str(s["maximum"])))
    if kind == "array":
        if "maxItems" not in s:
            raise ValueError(f"array without maxItems in a reply schema: {s}")
        return _bracketed([_max_bytes(s["items"])] * s["maxItems"])
    if kind == "object":
        if s.get("additionalProperties") is not False:
            raise ValueError("a reply schema's objects need additionalProperties: false")
        # each member: "key" gap ":" gap value
        return _bracketed(
            [
                len(json.dumps(k)) + 2 * WHITESPACE + 1 + _max_bytes(v)
                for k, v in s["properties"].items()
            ]
        )
    raise ValueError(f"reply schema type {kind!r} has no bound")


def _bracketed(members: list[int]) -> int:
    """Bytes of "[" gap m1 (gap "," gap m2)* gap "]" (an array's items, an object's members)."""
    separators = max(0, len(members) - 1) * (1 + 2 * WHITESPACE)
    return 2 + 2 * WHITESPACE + sum(members) + separators


def _string_chars(s: dict[str, Any]) -> int:
    match = _BOUNDS.match(s.get("pattern", ""))
    if match is None:
        raise ValueError(
            f"reply strings need a bounded_string() pattern (no escapes), not {s}: "
            "a maxLength alone bounds characters, not the escapes and tokens they cost"
        )
    return int(match.group(2))


@lru_cache(maxsize=256)
def _grammar(schema_json: str) -> str:
    import xgrammar

    grammar = xgrammar.Grammar.from_json_schema(
        schema_json, any_whitespace=True, max_whitespace_cnt=WHITESPACE
    )
    return str(grammar)


def json_grammar(schema: dict[str, Any]) -> str:
    """The xgrammar EBNF of `schema` with whitespace bounded to `WHITESPACE` per gap."""
    return _grammar(json.dumps(schema))  # key order kept: properties are written in order
