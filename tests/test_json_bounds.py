"""Bounded JSON replies (lasagna.models.json_bounds): every reply the grammar accepts fits
the prompt's token budget, and the bound is exact (the longest accepted reply reaches it)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lasagna.judges.registry import BENCHMARKS
from lasagna.models.json_bounds import (
    WHITESPACE,
    bounded_string,
    json_grammar,
    max_reply_tokens,
)
from lasagna.synth.prompts import ALL_PROMPTS

WIDE = "\U0001f600"  # a 4-byte UTF-8 character: the most bytes one string character costs
GAP = " " * WHITESPACE

xgrammar = pytest.importorskip("xgrammar")  # installed with vLLM (the cpu or gpu extra)


def longest(s: dict[str, Any]) -> str:
    """The longest JSON text the bounded grammar of `s` accepts."""
    if "enum" in s:
        return max((json.dumps(v) for v in s["enum"]), key=lambda t: len(t.encode()))
    kind = s["type"]
    if kind == "string":
        n = int(s["pattern"].rsplit(",", 1)[1].split("}")[0])
        return '"' + WIDE * n + '"'
    if kind == "integer":
        return max((str(s["minimum"]), str(s["maximum"])), key=len)
    if kind == "boolean":
        return "false"
    if kind == "array":
        items = [longest(s["items"])] * s["maxItems"]
        return f"[{GAP}" + f"{GAP},{GAP}".join(items) + f"{GAP}]"
    members = [f"{json.dumps(k)}{GAP}:{GAP}{longest(v)}" for k, v in s["properties"].items()]
    return f"{{{GAP}" + f"{GAP},{GAP}".join(members) + f"{GAP}}}"


def accepts(schema: dict[str, Any], text: str) -> bool:
    grammar = xgrammar.Grammar.from_ebnf(json_grammar(schema))
    return xgrammar.testing._is_grammar_accept_string(grammar, text)


SCHEMAS = {p.label: p.schema for b in BENCHMARKS.values() for p in b.PROMPTS}
SCHEMAS |= {"synth:" + p.label: p.schema for p in ALL_PROMPTS}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_longest_accepted_reply_is_the_budget(name: str) -> None:
    schema = SCHEMAS[name]
    text = longest(schema)
    assert accepts(schema, text), name
    # a token is at least one byte; +1 for the end token
    assert len(text.encode()) + 1 == max_reply_tokens(schema)


def test_grammar_refuses_what_would_outgrow_the_budget() -> None:
    schema = SCHEMAS["faithfulness.claims@v1"]
    assert accepts(schema, '{"claims": ["a", "b"]}')
    assert not accepts(schema, '{"claims":' + " " * (WHITESPACE + 1) + '["a"]}')  # whitespace
    assert not accepts(schema, '{"claims": ["' + "a" * 121 + '"]}')  # a longer string
    assert not accepts(schema, '{"claims": [' + ", ".join(['"a"'] * 9) + "]}")  # more items
    assert not accepts(schema, '{"claims": ["a\\"b"]}')  # escapes would cost uncounted bytes
    assert accepts(schema, '{"claims": ["Zürich é 東京"]}')  # any other character is fine


def test_unbounded_schemas_are_refused() -> None:
    with pytest.raises(ValueError, match="bounded_string"):
        max_reply_tokens({"type": "string", "maxLength": 10})
    with pytest.raises(ValueError, match="maxItems"):
        max_reply_tokens({"type": "array", "items": bounded_string(5)})
    with pytest.raises(ValueError, match="additionalProperties"):
        max_reply_tokens({"type": "object", "properties": {"a": bounded_string(5)}})
    with pytest.raises(ValueError, match="outside"):
        bounded_string(129)  # xgrammar cannot compile it with its cache on
    with pytest.raises(ValueError, match="integer"):
        max_reply_tokens({"type": "integer", "minimum": 1})


def test_every_prompt_grammar_compiles_as_vllm_compiles_it() -> None:
    """vLLM compiles a grammar per request with xgrammar's cache on, where some grammars
    that parse fail (longer string bounds did): compile every prompt's the same way."""
    from transformers import AutoTokenizer

    from lasagna.models.packaged import prepare_packaged_generator

    tokenizer = AutoTokenizer.from_pretrained(str(prepare_packaged_generator()))
    compiler = xgrammar.GrammarCompiler(
        xgrammar.TokenizerInfo.from_huggingface(tokenizer), cache_enabled=True
    )
    for name, schema in SCHEMAS.items():
        assert compiler.compile_grammar(json_grammar(schema)), name
