"""JSONL, JSON and CSV loading: the spec's examples and every error rule, on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lasagna.data import load_benchmark
from lasagna.errors import UserError

SPEC_JSONL = """\
{"id": "q1", "question": "What does the soda add to soda-lime glass?", "answer": "It lowers the melting point of the silica.", "contexts": ["Soda-lime glass is made by melting silica sand with sodium carbonate and calcium oxide. The soda lowers the melting point of the silica from about 1700 to roughly 1000 degrees Celsius."]}
{"id": "q2", "question": "Who introduced the solidus?", "answers": ["Constantine the Great", "Constantine I"], "context": "The solidus was a gold coin introduced by Constantine the Great in roughly 312 AD."}
{"id": "q3", "question": "What did the solidus cost to mint?", "contexts": ["The solidus was a gold coin introduced by Constantine the Great in roughly 312 AD."], "metadata": {"unanswerable": true}}
"""  # noqa: E501

SPEC_CSV = """\
id,question,answer,contexts
q1,Who introduced the solidus?,Constantine the Great,The solidus was a gold coin introduced by Constantine the Great in roughly 312 AD.
q2,What replaced the debased solidus?,The hyperpyron,The hyperpyron replaced the debased solidus after the monetary reform of Alexios I Komnenos in 1092.|||Debasement of the solidus began in earnest under Nikephoros II.
"""  # noqa: E501


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", newline="")
    return path


def errors_of(path: Path) -> str:
    with pytest.raises(UserError) as info:
        load_benchmark(path)
    return info.value.render()


def test_spec_jsonl_example(tmp_path):
    bench = load_benchmark(write(tmp_path, "my_data.jsonl", SPEC_JSONL))
    q1, q2, q3 = bench.rows
    assert [r.id for r in bench.rows] == ["q1", "q2", "q3"]
    assert q2.answers == ["Constantine the Great", "Constantine I"]
    assert q2.contexts == [
        "The solidus was a gold coin introduced by Constantine the Great in roughly 312 AD."
    ]
    assert q3.unanswerable and not q3.answers and not q1.unanswerable
    # q2 and q3 share one passage: one document, relevant to q2 only (q3 is unanswerable)
    assert len(bench.corpus) == 2
    assert set(bench.qrels) == {"q1", "q2"}
    shared = next(iter(bench.qrels["q2"]))
    assert bench.corpus[shared].text.startswith("The solidus was a gold coin")
    caps = bench.capabilities
    assert caps.retrieval and caps.generation and not caps.closed_book_only
    assert caps.corpus_provenance == "pooled_gold"
    assert bench.name.startswith("local/my_data@") and len(bench.name.split("@")[1]) == 12


def test_spec_csv_example(tmp_path):
    bench = load_benchmark(write(tmp_path, "coins.csv", SPEC_CSV))
    assert [r.id for r in bench.rows] == ["q1", "q2"]
    assert bench.rows[1].contexts == [
        "The hyperpyron replaced the debased solidus after the monetary reform of Alexios I "
        "Komnenos in 1092.",
        "Debasement of the solidus began in earnest under Nikephoros II.",
    ]
    assert bench.rows[1].answers == ["The hyperpyron"]
    assert len(bench.corpus) == 3 and len(bench.qrels["q2"]) == 2
    assert bench.format == "csv" and bench.capabilities.generation


def test_semicolon_and_tab_separated_files_read_like_the_comma_csv(tmp_path):
    """Spreadsheets in many locales save `;`; a .tsv export uses tabs. Commas inside cells
    stay text."""
    comma = load_benchmark(write(tmp_path, "coins.csv", SPEC_CSV))
    for name, sep in (("semi.csv", ";"), ("tabs.tsv", "\t")):
        bench = load_benchmark(write(tmp_path, name, SPEC_CSV.replace(",", sep)))
        assert bench.rows == comma.rows and bench.corpus == comma.corpus
    commas_in_cells = "id;question;answer\nq1;Who, then?;Constantine, the Great\n"
    row = load_benchmark(write(tmp_path, "cells.csv", commas_in_cells)).rows[0]
    assert row.question == "Who, then?" and row.answers == ["Constantine, the Great"]


def test_blank_lines_and_excels_sep_line_before_the_header(tmp_path):
    """Excel's "save as CSV" in a `;` locale may write `sep=;` first; a file may open with
    blank lines. Both are passed over, and line numbers stay the file's."""
    comma = load_benchmark(write(tmp_path, "coins.csv", SPEC_CSV))
    for name, text in (
        ("blank.csv", "\n\n" + SPEC_CSV),
        ("excel.csv", "sep=;\n" + SPEC_CSV.replace(",", ";")),
        ("excel_tab.csv", "SEP=\t\n" + SPEC_CSV.replace(",", "\t")),
    ):
        bench = load_benchmark(write(tmp_path, name, text))
        assert [r.question for r in bench.rows] == [r.question for r in comma.rows], name
        assert [r.answers for r in bench.rows] == [r.answers for r in comma.rows], name
    text = errors_of(write(tmp_path, "typo.csv", "\n\nid,question,anwser\nq1,A?,a\nq2,,b\n"))
    assert "typo.csv:line 3: field 'anwser'" in text


def test_csv_list_cells_as_json_arrays_and_malformed_ones_refused(tmp_path):
    good = 'question,contexts,expected_docs\nA?,"[""p1"", ""p2""]",d1|||d2\nB?,[1] Intro,\n'
    bench = load_benchmark(write(tmp_path, "ok.csv", good))
    assert bench.rows[0].contexts == ["p1", "p2"] and bench.rows[0].expected_docs == ["d1", "d2"]
    assert bench.rows[1].contexts == ["[1] Intro"] and bench.rows[1].expected_docs is None
    text = errors_of(write(tmp_path, "bad.csv", 'question,contexts\nA?,"[""p1"", ""p2"""\n'))
    assert "line 2" in text and "contexts" in text and "not a valid JSON array" in text


def test_csv_several_reference_answers(tmp_path):
    """An answer cell written as a JSON array is the list of answers (it was one literal
    answer, brackets and all); an `answers` column takes a JSON array or |||."""
    one = 'id,question,answer\nq1,Capital?,"[""Paris"", ""City of Paris""]"\nq2,Sum?,four\n'
    bench = load_benchmark(write(tmp_path, "answer.csv", one))
    assert [r.answers for r in bench.rows] == [["Paris", "City of Paris"], ["four"]]
    many = 'id,question,answers\nq1,Capital?,Paris|||City of Paris\nq2,Sum?,"[""four"", ""4""]"\n'
    bench = load_benchmark(write(tmp_path, "answers.csv", many))
    assert [r.answers for r in bench.rows] == [["Paris", "City of Paris"], ["four", "4"]]
    text = errors_of(write(tmp_path, "bad.csv", 'question,answer\nA?,"[""Paris"", "\n'))
    assert "line 2" in text and "answer cell is not a valid JSON array" in text


def test_json_array_and_default_ids(tmp_path):
    rows = [{"question": "A?", "answer": "a"}, {"question": "B?", "answer": ["b", "bee"]}]
    bench = load_benchmark(write(tmp_path, "x.json", json.dumps(rows)))
    assert [r.id for r in bench.rows] == ["row1", "row2"]
    assert bench.capabilities.closed_book_only and not bench.capabilities.retrieval
    assert bench.capabilities.corpus_provenance is None


def test_jsonl_default_id_is_physical_line(tmp_path):
    bench = load_benchmark(write(tmp_path, "x.jsonl", '{"question": "A?"}\n\n{"question": "B?"}\n'))
    assert [r.id for r in bench.rows] == ["row1", "row3"]  # blank line 2 skipped
    assert [r.line for r in bench.rows] == [1, 3]


def test_numeric_ids_become_strings(tmp_path):
    bench = load_benchmark(write(tmp_path, "x.jsonl", '{"id": 7, "question": "A?"}\n'))
    assert bench.rows[0].id == "7"


def test_unknown_field_typo_is_named(tmp_path):
    text = errors_of(write(tmp_path, "x.jsonl", '{"question": "A?", "anwser": "a"}\n'))
    assert "line 1" in text and "unknown field 'anwser'" in text
    assert "did you mean 'answer'" in text and "metadata" in text


def test_all_problems_reported_not_only_first(tmp_path):
    lines = ['{"question": 5}', '{"question": ""}', '{"question": "ok", "answer": 3}']
    text = errors_of(write(tmp_path, "x.jsonl", "\n".join(lines) + "\n"))
    assert "line 1: field 'question': question is a number" in text
    assert "line 2: field 'question': question is empty" in text
    assert "line 3: field 'answer': answer must be a string or a list of strings" in text
    assert "3 problem(s)" in text


def test_problems_are_listed_in_the_files_line_order(tmp_path):
    """A file is checked in passes (JSON parsing, then each row's fields); the problems are
    printed by line, so the first shown are the first in the file."""
    lines = ['{"question": "a?", "answers": ["x"]}', '{"question": ""}', '{"question": "c?"']
    text = errors_of(write(tmp_path, "x.jsonl", "\n".join(lines) + "\n"))
    assert text.index("line 2: field 'question'") < text.index("line 3: not valid JSON"), text
    csv = 'question,answer\n"a?",x\n,y\n"c?","z"'
    text = errors_of(write(tmp_path, "x.csv", csv + ',"extra cell"\n'))
    where = [line.split(": ")[0] for line in text.splitlines()[1:]]
    assert where == sorted(where, key=lambda w: int(w.rsplit("line ", 1)[1].split()[0])), text


def test_missing_question(tmp_path):
    text = errors_of(write(tmp_path, "x.jsonl", '{"answer": "a"}\n'))
    assert "question is missing" in text and "Fix:" in text


def test_both_answer_and_answers(tmp_path):
    row = {"question": "A?", "answer": "a", "answers": ["a"]}
    text = errors_of(write(tmp_path, "x.jsonl", json.dumps(row) + "\n"))
    assert "both 'answer' and 'answers'" in text


def test_both_contexts_and_context(tmp_path):
    row = {"question": "A?", "contexts": ["p"], "context": "p"}
    assert "both 'contexts' and 'context'" in errors_of(write(tmp_path, "x.jsonl", json.dumps(row)))


def test_duplicate_ids_name_both_lines(tmp_path):
    text = errors_of(
        write(tmp_path, "x.jsonl", '{"id": "a", "question": "A?"}\n{"id": "a", "question": "B?"}\n')
    )
    assert "line 2: field 'id': id 'a' is used again (first at line 1)" in text


def test_duplicate_default_and_explicit_id(tmp_path):
    text = errors_of(
        write(tmp_path, "x.jsonl", '{"question": "A?"}\n{"id": "row1", "question": "B?"}\n')
    )
    assert "id 'row1' is used again" in text


def test_unanswerable_with_answer_is_an_error(tmp_path):
    row = {"question": "A?", "answer": "a", "metadata": {"unanswerable": True}}
    text = errors_of(write(tmp_path, "x.jsonl", json.dumps(row)))
    assert "marked unanswerable but has an answer" in text


def test_unanswerable_with_empty_answer_is_fine(tmp_path):
    row = {"question": "A?", "answer": "", "metadata": {"unanswerable": True}}
    bench = load_benchmark(write(tmp_path, "x.jsonl", json.dumps(row)))
    assert bench.rows[0].unanswerable and bench.rows[0].answers == []


def test_expected_docs_length_must_match(tmp_path):
    row = {"question": "A?", "contexts": ["p1", "p2"], "expected_docs": ["d1"]}
    text = errors_of(write(tmp_path, "x.jsonl", json.dumps(row)))
    assert "expected_docs has 1 name(s) but contexts has 2 passage(s)" in text


def test_expected_docs_without_contexts_ask_for_the_corpus(tmp_path):
    """A question file written for a corpus (expected_docs, no contexts) loaded without it."""
    row = {"question": "A?", "expected_docs": ["d1", "d2"]}
    text = errors_of(write(tmp_path, "x.jsonl", json.dumps(row)))
    assert "expected_docs names 2 document(s) of a corpus, and no corpus was given" in text
    assert "--corpus DOCS" in text and "passage(s)" not in text


def test_metadata_must_be_object(tmp_path):
    text = errors_of(write(tmp_path, "x.jsonl", '{"question": "A?", "metadata": [1]}'))
    assert "metadata must be an object" in text


def test_empty_file(tmp_path):
    assert "the file is empty" in errors_of(write(tmp_path, "x.jsonl", b""))
    assert "only blank space" in errors_of(write(tmp_path, "y.jsonl", "\n  \n"))
    assert "header but no rows" in errors_of(write(tmp_path, "z.csv", "question,answer\n"))
    assert "the array is empty" in errors_of(write(tmp_path, "w.json", "[]"))


def test_non_utf8_bytes_name_the_line(tmp_path):
    data = b'{"question": "A?"}\n' + b'{"question": "caf\xe9?"}\n'
    text = errors_of(write(tmp_path, "x.jsonl", data))
    assert "line 2" in text and "0xe9" in text and "not valid UTF-8" in text and "UTF-8" in text


def test_utf16_is_refused_with_fix(tmp_path):
    text = errors_of(write(tmp_path, "x.jsonl", '{"question": "A?"}'.encode("utf-16")))
    assert "UTF-16" in text and "save the file as UTF-8" in text


def test_bom_is_accepted(tmp_path):
    bench = load_benchmark(write(tmp_path, "x.jsonl", b"\xef\xbb\xbf" + b'{"question": "A?"}\n'))
    assert bench.rows[0].question == "A?"
    csv_bench = load_benchmark(write(tmp_path, "x.csv", b"\xef\xbb\xbfquestion\nA?\n"))
    assert csv_bench.rows[0].question == "A?"


def test_crlf_is_accepted(tmp_path):
    bench = load_benchmark(
        write(tmp_path, "x.jsonl", '{"question": "A?"}\r\n{"question": "B?"}\r\n')
    )
    assert [r.question for r in bench.rows] == ["A?", "B?"]
    csv_bench = load_benchmark(write(tmp_path, "x.csv", "id,question,answer\r\nq1,A?,a\r\n"))
    assert csv_bench.rows[0].answers == ["a"] and csv_bench.rows[0].id == "q1"


def test_ten_megabyte_row_loads(tmp_path):
    passage = "glass " * (10 * 1024 * 1024 // 6)
    row = {"question": "A?", "answer": "a", "contexts": [passage]}
    bench = load_benchmark(write(tmp_path, "big.jsonl", json.dumps(row) + "\n"))
    assert len(bench.rows[0].contexts[0]) > 10_000_000 - 10
    csv_bench = load_benchmark(write(tmp_path, "big.csv", f"question,contexts\nA?,{passage}\n"))
    assert len(csv_bench.rows[0].contexts[0]) > 10_000_000 - 10


def test_json_array_in_jsonl_file(tmp_path):
    text = errors_of(write(tmp_path, "x.jsonl", '[\n  {"question": "A?"}\n]\n'))
    assert "the file is a JSON array, not JSONL" in text and "rename it to .json" in text


def test_array_line_in_jsonl(tmp_path):
    text = errors_of(write(tmp_path, "x.jsonl", '{"question": "A?"}\n[1, 2]\n'))
    assert "line 2" in text and "JSON array, not an object" in text


def test_bad_json_line(tmp_path):
    text = errors_of(write(tmp_path, "x.jsonl", '{"question": "A?"\n'))
    assert "line 1" in text and "not valid JSON" in text


def test_a_key_named_twice_in_one_object_is_refused_not_collapsed(tmp_path):
    """Python's json keeps a key's last value: the first question would vanish silently."""
    rows = '{"question": "A?"}\n{"question": "B?", "question": "C?"}\n'
    rows += '{"question": "D?", "metadata": {"src": "x", "src": "y"}}\n'
    text = errors_of(write(tmp_path, "x.jsonl", rows))
    assert "line 2: field 'question': the object names 'question' twice" in text, text
    assert "line 3: field 'metadata.src'" in text and "line 1" not in text
    text = errors_of(
        write(tmp_path, "x.json", '[{"question": "A?", "answer": "a", "answer": "b"}]')
    )
    assert "item 1: field 'answer': the object names 'answer' twice" in text, text
    csv = 'question,metadata\nA?,"{""src"": ""x"", ""src"": ""y""}"\n'
    text = errors_of(write(tmp_path, "x.csv", csv))
    assert "line 2: field 'metadata.src': the object names 'metadata.src' twice" in text, text
    ok = load_benchmark(write(tmp_path, "ok.jsonl", '{"question": "A?", "metadata": {"a": 1}}\n'))
    assert type(ok.rows[0].metadata) is dict and ok.rows[0].metadata == {"a": 1}


def test_jsonl_in_json_file(tmp_path):
    text = errors_of(write(tmp_path, "x.json", '{"question": "A?"}\n{"question": "B?"}\n'))
    assert "rename the file to .jsonl" in text


def test_json_object_top_level(tmp_path):
    text = errors_of(write(tmp_path, "x.json", '{"question": "A?"}'))
    assert "the top level is an object, not an array of rows" in text
    assert "wrap the rows in [ ... ]" in text
    wrapped = '{"version": 2, "data": [{"question": "A?", "answer": "a"}]}'
    text = errors_of(write(tmp_path, "w.json", wrapped))
    assert "the rows seem to be the list under 'data'" in text and "jq '.data'" in text


def test_json_item_numbering(tmp_path):
    text = errors_of(write(tmp_path, "x.json", '[{"question": "A?"}, 5]'))
    assert "item 2" in text and "not an object" in text


def test_csv_unknown_column(tmp_path):
    text = errors_of(write(tmp_path, "x.csv", "question,anwser\nA?,a\n"))
    assert "line 1" in text and "unknown column 'anwser'" in text


def test_csv_metadata_columns(tmp_path):
    text = (
        "id,question,answer,metadata.category,metadata.year,metadata.hard,metadata\n"
        'q1,A?,a,math,2020,true,"{""src"": ""web"", ""year"": 1}"\n'
        "q2,B?,b,geo,,,\n"
    )
    bench = load_benchmark(write(tmp_path, "m.csv", text))
    assert [r.metadata for r in bench.rows] == [
        {"src": "web", "category": "math", "year": 2020, "hard": True},  # the column wins
        {"category": "geo"},  # an empty cell: no such key
    ]
    bad = 'question,answer,metadata\nA?,a,"{not json"\nB?,b,"[1, 2]"\n'
    text = errors_of(write(tmp_path, "bad.csv", bad))
    assert "line 2" in text and "the metadata cell is not valid JSON" in text
    assert "line 3" in text and "metadata must be an object" in text
    text = errors_of(write(tmp_path, "x.csv", "question,category\nA?,math\n"))
    assert "unknown column 'category'" in text and "naming it metadata.category" in text


def test_csv_needs_question_column(tmp_path):
    assert "no 'question' column" in errors_of(write(tmp_path, "x.csv", "answer\na\n"))


def test_csv_empty_question_names_line(tmp_path):
    text = errors_of(write(tmp_path, "x.csv", "id,question\nq1,A?\nq2,\n"))
    assert "line 3" in text and "question is empty" in text


def test_csv_wrong_cell_count(tmp_path):
    text = errors_of(write(tmp_path, "x.csv", "question,answer\nA?,a,extra\n"))
    assert "line 2" in text and "3 cell(s) but the header has 2" in text
    # a quote never closed swallows the rest of the file into one cell: said as such
    text = errors_of(write(tmp_path, "y.csv", 'question,answer\n"open,x\nWho?,y\nWhat?,z\n'))
    assert "line 2" in text and "runs to line 4: a quote opened on line 2 is not closed" in text
    assert "close the quote" in text


def test_csv_quoted_multiline_cell_keeps_line_numbers(tmp_path):
    content = 'id,question,answer\nq1,"A\nlong?",a\nq2,,b\n'
    text = errors_of(write(tmp_path, "x.csv", content))
    assert "line 4" in text and "question is empty" in text


def test_unknown_suffix(tmp_path):
    assert "unknown data format '.txt'" in errors_of(write(tmp_path, "x.txt", "hello"))


def test_missing_path(tmp_path):
    assert "no such file or folder" in errors_of(tmp_path / "nope.jsonl")


def test_split_on_a_file_is_refused(tmp_path):
    with pytest.raises(UserError, match="split applies to BEIR folders only"):
        load_benchmark(write(tmp_path, "x.jsonl", '{"question": "A?"}'), split="test")


def test_error_count_is_capped(tmp_path):
    lines = "".join(f'{{"question": "A?", "extra{i}": 1}}\n' for i in range(80))
    text = errors_of(write(tmp_path, "x.jsonl", lines))
    assert "line 50" in text and "line 51:" not in text and "30 more problem(s)" in text


def test_the_same_problem_on_many_rows_is_said_once(tmp_path):
    """A misspelled column of a Parquet file (or a JSONL field misspelled on every line) is
    one problem on its first row, with how many more rows have it, not one per row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table({"question": ["A?"] * 19, "anwser": ["a"] * 19}), tmp_path / "t.parquet"
    )
    with pytest.raises(UserError) as info:
        load_benchmark(tmp_path / "t.parquet")
    (problem,) = info.value.problems
    assert problem.where == "row 1 and 18 more" and problem.field == "anwser"
    assert info.value.title.endswith(": 1 problem(s)")
    two = errors_of(write(tmp_path, "two.jsonl", '{"question": "A?", "anwser": "a"}\n' * 2))
    assert "line 1:" in two and "line 2:" in two  # two rows: each said


def test_other_tools_field_names_point_at_lasagnas(tmp_path):
    """Ragas' and Hugging Face sets' names are refused with the field to rename them to."""
    from lasagna.data.field_hints import did_you_mean
    from lasagna.data.judge_cases import FIELDS as JUDGE_FIELDS
    from lasagna.data.records import FIELDS

    row = {"query": "A?", "ground_truth": "a", "passages": ["p"], "qid": "1"}
    text = errors_of(write(tmp_path, "hf.jsonl", json.dumps(row)))
    for name, field in (
        ("query", "question"),
        ("ground_truth", "answers"),
        ("passages", "contexts"),
        ("qid", "id"),
    ):
        assert f"field '{name}': unknown field '{name}'. Fix: did you mean '{field}'?" in text
    text = errors_of(write(tmp_path, "rg.csv", "user_input,reference\nA?,a\n"))
    assert "did you mean 'question'?" in text and "did you mean 'answers'?" in text
    # the same names in a judge file point at the judge fields
    assert did_you_mean("query", JUDGE_FIELDS) == "did you mean 'input'? "
    assert did_you_mean("retrieved_contexts", JUDGE_FIELDS) == "did you mean 'retrieval_context'? "
    assert did_you_mean("response", JUDGE_FIELDS) == "did you mean 'actual_output'? "
    assert did_you_mean("Answer", FIELDS) == "did you mean 'answer'? (names are lower case) "
    assert did_you_mean("anwser", FIELDS) == "did you mean 'answer'? "
    assert did_you_mean("popularity", FIELDS) == ""


def test_gzipped_question_and_judge_files_are_the_plain_files(tmp_path):
    """`questions.jsonl.gz`: the rows, name and revision of `questions.jsonl`, so the two
    compare in one leaderboard group."""
    import gzip

    from lasagna.data.judge_cases import load_judge_cases

    plain = load_benchmark(write(tmp_path, "coins.jsonl", SPEC_JSONL))
    (tmp_path / "gz").mkdir()
    packed = write(tmp_path / "gz", "coins.jsonl.gz", gzip.compress(SPEC_JSONL.encode()))
    bench = load_benchmark(packed)
    assert (bench.rows, bench.name, bench.revision) == (plain.rows, plain.name, plain.revision)
    csv_gz = write(tmp_path, "coins.csv.gz", gzip.compress(SPEC_CSV.encode()))
    assert load_benchmark(csv_gz).rows == load_benchmark(write(tmp_path, "c.csv", SPEC_CSV)).rows
    cases = "input,actual_output,retrieval_context\nQ?,A.,ctx\n"
    judge = load_judge_cases(write(tmp_path, "cases.csv.gz", gzip.compress(cases.encode())))
    assert judge.cases[0]["actual_output"] == "A." and judge.name.startswith("local/cases@")
    text = errors_of(write(tmp_path, "bad.jsonl.gz", b"not gzip"))
    assert "not a readable gzip file" in text
    assert "unknown data format '.txt'" in errors_of(write(tmp_path, "x.txt.gz", b""))
