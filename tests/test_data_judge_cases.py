"""Judge test-case files: the spec's own examples, list columns, strict columns, all errors."""

from __future__ import annotations

import csv
import io
import json

import pytest

from lasagna.data.judge_cases import load_judge_cases, looks_like_judge_file
from lasagna.errors import UserError
from lasagna.judges.params import JudgeParams
from lasagna.judges.registry import BENCHMARKS, support_reason

SPEC_CSV = (
    "input,actual_output,retrieval_context\n"
    '"What is the boiling point of water?","Water boils at 100°C at sea level.",'
    '"Water boils at 100 degrees Celsius (212°F) at standard atmospheric pressure."\n'
    '"Who invented the telephone?","Alexander Graham Bell invented the telephone in 1876.",'
    '"Alexander Graham Bell is credited with inventing the first practical telephone, '
    'patented in 1876."\n'
)
SPEC_CSV_TURNS = (
    "turns,chatbot_role\n"
    '"[{""role"": ""user"", ""content"": ""Hello""}, {""role"": ""assistant"", '
    '""content"": ""Hi! How can I help?""}]",support agent\n'
)
SPEC_JSONL = "\n".join(
    json.dumps(r)
    for r in [
        {
            "turns": [
                {"role": "user", "content": "How do I reset my password?"},
                {"role": "assistant", "content": "Click 'Forgot password' on the login page."},
            ]
        },
        {
            "turns": [
                {"role": "user", "content": "My account is locked."},
                {"role": "assistant", "content": "I can help. Can you give your email?"},
            ]
        },
    ]
)
SPEC_JSON = json.dumps(
    [
        {
            "turns": [
                {"role": "user", "content": "What is the capital of France?"},
                {"role": "assistant", "content": "The capital of France is Paris."},
            ]
        }
    ]
)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def supported(cases, params=None):
    params = params or JudgeParams()
    return {b for b in BENCHMARKS if support_reason(b, cases.cases, params) is None}


def test_spec_minimal_faithfulness_csv(tmp_path):
    path = write(tmp_path, "faith.csv", SPEC_CSV)
    assert looks_like_judge_file(path)
    cases = load_judge_cases(path)
    assert cases.name.startswith("local/faith@") and cases.format == "csv"
    first = cases.cases[0]
    assert first["id"] == "row2" and first["retrieval_context"][0].startswith("Water boils")
    assert supported(cases) == {
        "faithfulness",
        "relevancy",
        "summarization",
        "contextual-relevancy",
        "g-eval",
    }
    why = support_reason("hallucination", cases.cases, JudgeParams())
    assert "no 'context' column" in why


def test_semicolon_separated_judge_file(tmp_path):
    rows = list(csv.reader(io.StringIO(SPEC_CSV)))
    out = io.StringIO()
    csv.writer(out, delimiter=";").writerows(rows)
    path = write(tmp_path, "faith.csv", out.getvalue())
    assert looks_like_judge_file(path)
    comma = write(tmp_path, "comma.csv", SPEC_CSV)
    assert load_judge_cases(path).cases == load_judge_cases(comma).cases


def test_csv_list_cell_as_json_array_and_turns_string(tmp_path):
    text = 'input,actual_output,context\nq,a,"[""p1"", ""p2""]"\nq2,a2,[not json\n'
    cases = load_judge_cases(write(tmp_path, "h.csv", text))
    assert cases.cases[0]["context"] == ["p1", "p2"]
    assert cases.cases[1]["context"] == ["[not json"]  # plain text that starts with [
    conv = load_judge_cases(write(tmp_path, "t.csv", SPEC_CSV_TURNS))
    assert conv.cases[0]["turns"][1]["content"] == "Hi! How can I help?"
    assert conv.cases[0]["chatbot_role"] == "support agent"
    assert "role-adherence" in supported(conv)


def test_csv_metadata_key_columns(tmp_path):
    text = 'input,actual_output,context,metadata.human,metadata\nq,a,c,yes,"{""k"": 1}"\n'
    (case,) = load_judge_cases(write(tmp_path, "m.csv", text)).cases
    assert case["metadata"] == {"k": 1, "human": "yes"}
    with pytest.raises(UserError, match="a metadata.human column"):
        load_judge_cases(write(tmp_path, "u.csv", "input,actual_output,human\nq,a,yes\n"))


def test_csv_malformed_json_array_list_cell_is_refused_like_turns(tmp_path):
    text = (
        "input,actual_output,retrieval_context,turns\n"
        'q,a,"[""p1"", ""p2""",\n'  # the array is never closed
        'q2,a2,"[1] Intro: a passage, not JSON",\n'
        'q3,a3,p,"[{""role"": ""user"""\n'
    )
    with pytest.raises(UserError) as err:
        load_judge_cases(write(tmp_path, "bad.csv", text))
    problems = {p.field: p for p in err.value.problems}
    assert set(problems) == {"retrieval_context", "turns"}  # row 3 is plain text
    cell = problems["retrieval_context"]
    assert cell.where == "line 2" and cell.file.endswith("bad.csv")
    assert "not a valid JSON array" in cell.message and "at character" in cell.message
    assert '"[""p1"", ""p2""]"' in cell.fix
    assert problems["turns"].where == "line 4"


def test_spec_multi_turn_jsonl_and_json(tmp_path):
    cases = load_judge_cases(write(tmp_path, "conv.jsonl", SPEC_JSONL))
    assert len(cases.cases) == 2 and cases.multi_turn
    assert supported(cases) == {"conversation-completeness", "knowledge-retention"}
    why = support_reason("role-adherence", cases.cases, JudgeParams())
    assert "chatbot_role" in why and "--param chatbot_role" in why
    assert "role-adherence" in supported(cases, JudgeParams(chatbot_role="agent"))
    arr = load_judge_cases(write(tmp_path, "conv.json", SPEC_JSON))
    assert arr.cases[0]["turns"][0]["content"] == "What is the capital of France?"


def test_unknown_columns_suggest_and_every_error_is_reported(tmp_path):
    text = "input,actual_ouput,retreival_context\nq,a,c\n"
    with pytest.raises(UserError) as err:
        load_judge_cases(write(tmp_path, "bad.csv", text))
    out = err.value.render()
    assert "did you mean 'actual_output'" in out and "did you mean 'retrieval_context'" in out
    assert "bad.csv:line 1" in out
    rows = [
        {"input": "q", "actual_output": 3},
        {"turns": "hello"},
        {"input": "q", "actual_output": "a", "context": ["ok", 5]},
        {"id": "x", "input": "q", "actual_output": "a"},
        {"id": "x", "input": "q", "actual_output": "a", "extra": 1},
    ]
    path = write(tmp_path, "bad.jsonl", "\n".join(json.dumps(r) for r in rows))
    with pytest.raises(UserError) as err:
        load_judge_cases(path)
    problems = err.value.problems
    where = {(p.where, p.field) for p in problems}
    assert ("line 1", "actual_output") in where and ("line 2", "turns") in where
    assert ("line 3", "context") in where and ("line 5", "id") in where
    assert ("line 5", "extra") in where
    assert all(p.fix for p in problems)


def test_label_columns_allowed_only_when_asked(tmp_path):
    text = "input,actual_output,context,human\nq,a,c,yes\n"
    path = write(tmp_path, "lab.csv", text)
    with pytest.raises(UserError):
        load_judge_cases(path)
    cases = load_judge_cases(path, label_columns=("human",))
    assert cases.cases[0]["labels"] == {"human": "yes"}


def test_cli_validate_data_shows_judge_support(tmp_path, capsys):
    from lasagna.cli import main

    path = write(tmp_path, "conv.jsonl", SPEC_JSONL)
    assert main(["benchmark", "validate-data", str(path)]) == 0
    out = capsys.readouterr().out
    assert "conversation-completeness" in out and "role-adherence" in out
    assert "chatbot_role" in out
    bad = write(tmp_path, "bad.csv", "input,actual_ouput\nq,a\n")
    assert main(["benchmark", "validate-data", str(bad)]) == 2


def test_a_bad_field_is_said_once_without_follow_on_errors(tmp_path):
    """A row whose turns (or input) are given but wrong gets those problems alone, not "the
    row has neither input/actual_output nor turns" besides; a missing role says missing; a
    list of numbers says what it holds."""
    rows = [
        {"id": "a", "turns": [{"role": "bot", "content": "hi"}, {"content": "x"}]},
        {"id": "b", "input": 5, "actual_output": ["A"], "retrieval_context": [1]},
    ]
    path = write(tmp_path, "bad.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(UserError) as err:
        load_judge_cases(path)
    said = {(p.where, p.field): p.message for p in err.value.problems}
    assert set(said) == {
        ("line 1", "turns[0].role"),
        ("line 1", "turns[1].role"),
        ("line 2", "input"),
        ("line 2", "actual_output"),
        ("line 2", "retrieval_context"),
    }
    assert said[("line 1", "turns[1].role")].startswith("role is missing;")
    assert said[("line 2", "retrieval_context")].endswith("got a list holding a number")


def test_a_missing_column_is_the_field_named(tmp_path):
    from lasagna.judges.registry import refusals

    rows = [{"id": "a", "input": "q", "retrieval_context": ["c"]}]
    cases = load_judge_cases(write(tmp_path, "c.jsonl", json.dumps(rows[0]) + "\n")).cases
    (problem,) = refusals(["faithfulness"], cases, JudgeParams(), "c.jsonl")
    assert problem.field == "actual_output"


def test_a_judge_file_read_as_questions_is_one_problem(tmp_path):
    """A judge file under `retrievers:` (or any question reader): one line saying what the
    file is and how to judge it, not a problem per column and row."""
    from lasagna.data import load_benchmark

    rows = [{"id": f"r{i}", "input": "q", "actual_output": "a", "context": ["c"]} for i in "ab"]
    path = write(tmp_path, "cases.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(UserError) as err:
        load_benchmark(path)
    (problem,) = err.value.problems
    assert "holds judge test cases" in problem.message and "--judge" in problem.fix
