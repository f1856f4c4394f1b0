"""Conversation rows (`turns`) in JSONL, JSON and CSV, with their error messages."""

from __future__ import annotations

import json

import pytest

from lasagna.data import load_benchmark
from lasagna.errors import UserError

SPEC_TURNS = """\
{"turns": [{"role": "user", "content": "My name is Alice."}, {"role": "assistant", "content": "Nice to meet you, Alice!"}, {"role": "user", "content": "What is my name?"}, {"role": "assistant", "content": "Your name is Alice."}], "chatbot_role": "helpful assistant", "scenario": "User introduces themselves and expects the chatbot to remember"}
{"turns": [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi! How can I help you today?"}], "chatbot_role": "friendly customer support agent"}
"""  # noqa: E501

SPEC_CSV = """turns,chatbot_role
"[{""role"": ""user"", ""content"": ""Hello""}, {""role"": ""assistant"", ""content"": ""Hi! How can I help?""}]",support agent
"""  # noqa: E501


def test_jsonl_conversations(tmp_path):
    path = tmp_path / "chats.jsonl"
    path.write_text(SPEC_TURNS, encoding="utf-8")
    bench = load_benchmark(path)
    first = bench.rows[0]
    assert first.question is None and len(first.turns) == 4
    assert first.turns[2].role == "user" and first.turns[2].content == "What is my name?"
    assert first.extra == {
        "chatbot_role": "helpful assistant",
        "scenario": "User introduces themselves and expects the chatbot to remember",
    }
    caps = bench.capabilities
    assert not caps.retrieval and not caps.generation
    assert "conversations" in caps.reasons["retrieval"]


def test_csv_conversations(tmp_path):
    path = tmp_path / "chats.csv"
    path.write_text(SPEC_CSV, encoding="utf-8")
    row = load_benchmark(path).rows[0]
    assert [t.role for t in row.turns] == ["user", "assistant"]
    assert row.extra["chatbot_role"] == "support agent"


def test_json_conversations(tmp_path):
    path = tmp_path / "chats.json"
    path.write_text(
        json.dumps([{"turns": [{"role": "user", "content": "Capital of France?"}]}]),
        encoding="utf-8",
    )
    assert load_benchmark(path).rows[0].turns[0].content == "Capital of France?"


def test_csv_turns_not_json_names_the_line(tmp_path):
    path = tmp_path / "chats.csv"
    path.write_text('turns\n"[{role: user}]"\n', encoding="utf-8")
    with pytest.raises(UserError) as info:
        load_benchmark(path)
    text = info.value.render()
    assert "line 2" in text and "field 'turns'" in text and "not valid JSON" in text
    assert "JSONL" in text  # the fix points to the safer format


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        ([], "non-empty list of turn objects, got an empty list"),
        ("hello", "got a string"),
        ([{"role": "bot", "content": "x"}], "field 'turns[0].role': role is 'bot'"),
        ([{"role": "user", "content": 5}], "field 'turns[0].content': content must be a string"),
        (["hi"], "field 'turns[0]': a turn must be an object"),
        ([{"role": "user", "content": "x", "name": "A"}], "unknown key(s) 'name'"),
    ],
)
def test_bad_turns(tmp_path, turns, message):
    path = tmp_path / "chats.jsonl"
    path.write_text(json.dumps({"turns": turns}) + "\n", encoding="utf-8")
    with pytest.raises(UserError) as info:
        load_benchmark(path)
    assert message in info.value.render() and "line 1" in info.value.render()


def test_conversation_fields_must_be_strings(tmp_path):
    path = tmp_path / "chats.jsonl"
    row = {"turns": [{"role": "user", "content": "x"}], "chatbot_role": ["a"]}
    path.write_text(json.dumps(row), encoding="utf-8")
    with pytest.raises(UserError, match="chatbot_role must be a string"):
        load_benchmark(path)


def test_row_needs_question_or_turns(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"chatbot_role": "agent"}\n', encoding="utf-8")
    with pytest.raises(UserError, match="question is missing"):
        load_benchmark(path)
