"""Question synthesis, pure parts: extractor, chunker, partner/neighbour rules, mix, plan,
model choice and key errors, reply parsing and the dropped-row accounting."""

from __future__ import annotations

import dataclasses
import json

import pytest
from rich.console import Console
from synth_docs import make_docs

from lasagna.data.chunk import (
    Passage,
    chunk_words,
    multihop_partner,
    unanswerable_neighbours,
)
from lasagna.data.extract import extract_folder
from lasagna.errors import UserError
from lasagna.models.base import Completion
from lasagna.synth.generate import parse_reply, run_plan
from lasagna.synth.mix import allocate, parse_mix
from lasagna.synth.model_choice import VARIABLES_READ, choose_model
from lasagna.synth.plan import build_plan
from lasagna.synth.prompts import ALL_PROMPTS, FACTOID, VERIFY_ANSWER, prompt_id
from lasagna.synth.report import render_summary


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    return make_docs(tmp_path_factory.mktemp("docs"))


# ------------------------------------------------------------------ extractor
def test_extractor_reads_every_format_and_reports_the_rest(docs):
    ex = extract_folder(docs)
    ids = [d.doc_id for d in ex.documents]
    assert ids == [
        "float.txt",
        "glass.md",
        "history/hyperpyron.docx",
        "history/solidus.pdf",
        "kiln.html",
    ]
    text = {d.doc_id: d.text for d in ex.documents}
    assert "Constantine the Great" in text["history/solidus.pdf"]
    assert "Alexios I" in text["history/hyperpyron.docx"]
    html = text["kiln.html"]
    assert "glass kiln" in html
    for dropped in ("SCRIPTTEXT", "NAVHOME", "color: red", "FOOTERTEXT"):
        assert dropped not in html
    assert [(s.doc_id, s.reason) for s in ex.skipped] == [
        ("slides.pptx", "unsupported file type '.pptx'")
    ]
    failed = {f.doc_id: f.reason for f in ex.failed}
    assert set(failed) == {"broken.pdf", "empty.txt", "locked.pdf"}
    assert failed["broken.pdf"].startswith("corrupt or unreadable PDF")
    assert failed["locked.pdf"].startswith("encrypted PDF")
    assert failed["empty.txt"] == "empty file"


def test_extractor_names_a_non_utf8_text_file(tmp_path):
    (tmp_path / "latin.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))
    (tmp_path / "bad.docx").write_bytes(b"not a zip")
    failed = {f.doc_id: f.reason for f in extract_folder(tmp_path).failed}
    assert failed["latin.txt"].startswith("not UTF-8 text: byte 0xe9 at offset 3")
    assert failed["bad.docx"].startswith("not a readable DOCX")


# ------------------------------------------------------------------ chunker
def _text(n: int) -> str:
    return "\n".join(f"w{i}," for i in range(n))  # line breaks are spaces; punctuation stays


@pytest.mark.parametrize(
    ("n", "sizes"),
    [(0, []), (30, [30]), (200, [200]), (249, [249]), (250, [200, 50]), (440, [200, 240])],
)
def test_chunker_200_words_and_the_short_tail(n, sizes):
    passages = chunk_words(_text(n))
    assert [len(p.split()) for p in passages] == sizes
    if n:
        assert passages[0].split()[0] == "w0," and passages[-1].split()[-1] == f"w{n - 1},"
    assert chunk_words(_text(n)) == passages  # deterministic


def _p(doc: str, i: int, text: str) -> Passage:
    return Passage(f"{doc}#{i}", doc, i, text)


def test_multihop_partner_is_the_most_word_sharing_passage_of_another_document():
    passages = [
        _p("a", 0, "gold coin solidus constantine mint"),
        _p("a", 1, "gold coin solidus constantine mint empire"),  # same document: not eligible
        _p("b", 0, "gold coin river"),  # shares 2
        _p("c", 0, "gold coin solidus weight"),  # shares 3: the partner
        _p("d", 0, "the of and a"),  # stopwords only: shares nothing
    ]
    assert multihop_partner(passages, 0) == 3
    assert multihop_partner(passages, 4) is None
    tie = [_p("a", 0, "gold coin"), _p("b", 0, "gold"), _p("c", 0, "coin")]
    assert multihop_partner(tie, 0) == 1  # ties go to the earlier passage
    assert multihop_partner([_p("a", 0, "x y"), _p("a", 1, "x y")], 0) is None


def test_unanswerable_check_reads_the_three_most_word_sharing_passages():
    passages = [
        _p("a", 0, "glass silica soda lime kiln"),
        _p("a", 1, "glass silica soda lime"),  # 4: same document counts here
        _p("b", 0, "glass silica"),  # 2
        _p("c", 0, "glass silica soda"),  # 3
        _p("d", 0, "glass"),  # 1
        _p("e", 0, "coins"),  # 0
    ]
    assert unanswerable_neighbours(passages, 0) == [1, 3, 2]
    assert unanswerable_neighbours(passages, 5) == []


# ------------------------------------------------------------------ mix
def test_mix_parsing_and_allocation():
    assert parse_mix("factoid=0.6,multihop=0.3,unanswerable=0.1") == {
        "factoid": 0.6,
        "multihop": 0.3,
        "unanswerable": 0.1,
    }
    assert parse_mix("factoid=1") == {"factoid": 1.0, "multihop": 0.0, "unanswerable": 0.0}
    assert allocate(10, parse_mix("factoid=0.6,multihop=0.3,unanswerable=0.1")) == {
        "factoid": 6,
        "multihop": 3,
        "unanswerable": 1,
    }
    counts = allocate(7, parse_mix("factoid=0.34,multihop=0.33,unanswerable=0.33"))
    assert counts == {"factoid": 3, "multihop": 2, "unanswerable": 2}
    assert sum(allocate(200, parse_mix("factoid=0.5,unanswerable=0.5")).values()) == 200


@pytest.mark.parametrize(
    ("mix", "says"),
    [
        ("factoid=0.6,multihop=0.3", "sum to 0.9, not 1"),
        ("factiod=1", "unknown question type 'factiod'"),
        ("factoid=1.2,multihop=-0.2", "negative"),
        ("factoid=abc", "is not a number"),
        ("factoid", "is not NAME=SHARE"),
        ("factoid=0.5,factoid=0.5", "given twice"),
        ("", "empty"),
    ],
)
def test_bad_mix_is_a_clear_error(mix, says):
    with pytest.raises(UserError) as err:
        parse_mix(mix)
    assert says in err.value.render() and "--mix" in err.value.render()


def test_bad_mix_reports_every_problem_at_once():
    with pytest.raises(UserError) as err:
        parse_mix("factiod=0.5,multihop=x")
    assert len(err.value.problems) == 2


# ------------------------------------------------------------------ plan
def test_plan_is_deterministic_and_follows_the_rules(docs):
    a = build_plan(docs, 10, "factoid=0.5,multihop=0.3,unanswerable=0.2", seed=42)
    b = build_plan(docs, 10, "factoid=0.5,multihop=0.3,unanswerable=0.2", seed=42)
    assert a.questions == b.questions
    assert [a.generation_request(q) for q in a.questions] == [
        b.generation_request(q) for q in b.questions
    ]
    assert [a.asked(t) for t in ("factoid", "multihop", "unanswerable")] == [5, 3, 2]
    for q in a.questions:
        if q.qtype == "multihop":
            first, second = q.sources
            assert a.passages[first].doc_id != a.passages[second].doc_id
            assert second == multihop_partner(a.passages, first)
        if q.qtype == "unanswerable":
            assert q.neighbours == tuple(unanswerable_neighbours(a.passages, q.sources[0]))
            assert len(q.neighbours) == 3
    c = build_plan(docs, 10, "factoid=0.5,multihop=0.3,unanswerable=0.2", seed=7)
    assert [q.sources for q in c.questions] != [q.sources for q in a.questions]


def test_plan_asks_at_most_one_question_per_passage_and_type(docs):
    plan = build_plan(docs, 50, "factoid=1", seed=0)
    assert plan.asked("factoid") == len(plan.passages) == 10
    assert "asking 10" in plan.notes[0]
    prompt_tokens, output_tokens = plan.estimate_tokens()
    assert prompt_tokens > 10 * 200 and output_tokens == 10 * (
        FACTOID.max_tokens + VERIFY_ANSWER.max_tokens
    )


def test_plan_refuses_a_missing_folder_and_a_folder_without_text(tmp_path):
    with pytest.raises(UserError, match="no such folder"):
        build_plan(tmp_path / "nope", 5, "factoid=1", 0)
    (tmp_path / "a.pptx").write_bytes(b"x")
    with pytest.raises(UserError, match="no readable document"):
        build_plan(tmp_path, 5, "factoid=1", 0)


def test_prompts_are_versioned_and_hashed():
    ids = [prompt_id(p) for p in ALL_PROMPTS]
    assert len(set(ids)) == len(ids) and all(i.endswith("-v1") for i in ids)
    assert len({p.sha256 for p in ALL_PROMPTS}) == len(ALL_PROMPTS)
    assert FACTOID.sha256 == FACTOID.sha256 and len(FACTOID.sha256) == 64
    req = FACTOID.request({"passage": "P"})
    assert req.temperature == 0.0 and req.json_schema == FACTOID.schema


# ------------------------------------------------------------------ models and keys
def test_no_model_and_no_key_lists_every_variable_read_and_the_keyless_option():
    with pytest.raises(UserError) as err:
        choose_model(None, environ={})
    text = err.value.render()
    for var in VARIABLES_READ:
        assert var in text
    assert "--model packaged:SmolLM2-135M-Instruct" in text


def test_api_model_needs_its_key_and_local_models_need_none():
    with pytest.raises(UserError) as err:
        choose_model("claude-sonnet-4-5", environ={})
    assert "ANTHROPIC_API_KEY" in err.value.render() and "packaged:" in err.value.render()
    with pytest.raises(UserError, match="no model is chosen"):
        choose_model(None, environ={"OPENAI_API_KEY": "k"})
    spec = choose_model(None, environ={"MODEL_NAME": "gpt-4o-mini", "OPENAI_API_KEY": "k"})
    assert (spec.backend, spec.model, spec.temperature) == ("openai", "gpt-4o-mini", 0.0)
    assert choose_model("openai:my-served-model", environ={"OPENAI_API_KEY": "k"}).backend == (
        "openai"
    )
    local = choose_model("packaged:SmolLM2-135M-Instruct", environ={})
    assert local.backend == "vllm" and local.temperature == 0.0
    assert choose_model("HuggingFaceTB/SmolLM2-360M-Instruct", environ={}).backend == "vllm"


# ------------------------------------------------------------------ replies and accounting
def _c(value, finish: str = "stop") -> Completion:
    text = value if isinstance(value, str) else json.dumps(value)
    return Completion(text=text, finish_reason=finish)


def test_parse_reply_never_raises():
    schema = VERIFY_ANSWER.schema
    assert parse_reply(_c({"answer": "1889"}), schema) == ({"answer": "1889"}, None)
    # the reasons are short and the same for replies that failed alike (counts group them)
    bad = "unparseable output: reply is not valid JSON"
    assert parse_reply(_c('{"ans": 1 2}'), schema)[1] == bad
    assert parse_reply(_c('{"ans', "length"), schema)[1].endswith("cut off at max_tokens")
    wrong = "unparseable output: reply does not match its schema"
    assert parse_reply(_c({"answer": 3}), schema)[1] == wrong
    assert parse_reply(_c({"x": 1}), schema)[1] == wrong
    assert parse_reply(_c("[1]"), schema)[1] == "unparseable output: no JSON object in the reply"
    failed = Completion(text="", error="ValueError: prompt too long")
    assert parse_reply(failed, schema)[1] == "model error: ValueError: prompt too long"


def test_dropped_rows_are_counted_with_their_reasons(docs):
    plan = build_plan(docs, 8, "factoid=0.5,multihop=0.25,unanswerable=0.25", seed=1)
    kinds = [q.qtype for q in plan.questions]
    assert kinds == ["factoid"] * 4 + ["multihop"] * 2 + ["unanswerable"] * 2
    written = [  # each grounded in its planned passages (printed by build_plan's plan)
        _c({"question": "When was the monetary reform of Alexios I?", "answer": "1092"}),
        _c('{"question": "What', "length"),  # cut off
        _c({"question": "What lowers the melting point of silica?", "answer": "The soda"}),
        _c({"question": "    Who?    ", "answer": "x"}),  # too short (the schema's 10 with spaces)
        _c({"question": "What lowers the melting point of silica?", "answer": "soda"}),  # dup
        _c({"question": "Which coin did the hyperpyron replace?", "answer": "the solidus"}),
        _c({"question": "What did the float glass plant cost to build?"}),
        _c({"question": "How heavy was the solidus coin?"}),
    ]
    calls: list[list] = []

    def complete(requests, label):
        calls.append(requests)
        if len(calls) == 1:
            return written
        return [
            _c({"answer": "1453"}),  # factoid 1: F1 0 -> not supported
            _c({"answer": "soda"}),  # factoid 3: F1 0.67 with "The soda" -> kept
            _c({"answer": "the soda"}),  # multihop 1: agrees, but a duplicate of factoid 3
            _c({"answer": "The solidus coin"}),  # multihop 2: F1 0.8 -> kept
            _c({"answer": "Unanswerable."}),  # unanswerable 1: abstains -> kept
            _c({"answer": "4.5 grams"}),  # unanswerable 2: answered -> dropped
        ]

    result = run_plan(plan, complete, "scripted")
    assert len(calls[0]) == 8 and len(calls[1]) == 6 and result.calls == 14
    assert result.counts() == {
        "factoid": {"asked": 4, "kept": 1, "dropped": 3},
        "multihop": {"asked": 2, "kept": 1, "dropped": 1},
        "unanswerable": {"asked": 2, "kept": 1, "dropped": 1},
    }
    assert result.drop_reasons() == {
        ("factoid", "unparseable output: cut off at max_tokens"): 1,
        ("factoid", "empty or too short question"): 1,
        ("factoid", "not supported: the check's answer from the passages differs (F1 < 0.5)"): 1,
        ("multihop", "duplicate question"): 1,
        ("unanswerable", "answered from its passage or its 3 word-sharing neighbours"): 1,
    }
    rows = {r["metadata"]["question_type"]: r for r in result}
    assert [r["id"] for r in result] == ["synth-0003", "synth-0006", "synth-0007"]
    meta = rows["multihop"]["metadata"]
    assert list(meta) == [
        "question_type",
        "source_doc_ids",
        "prompt_id",
        "prompt_sha256",
        "model",
        "seed",
        "synthetic",
        "unanswerable",
    ]
    assert len(rows["multihop"]["contexts"]) == 2 and len(meta["source_doc_ids"]) == 2
    assert meta["prompt_id"] == "multihop-v1" and meta["seed"] == 1 and meta["synthetic"]
    un = rows["unanswerable"]
    assert un["answer"] == "" and un["metadata"]["unanswerable"] is True
    assert len(un["contexts"]) == 1
    # the unanswerable check read the passage and its three word-sharing neighbours
    check = calls[1][4].messages[-1]["content"]
    assert check.count("Passage ") == 4


def test_a_question_about_nothing_or_an_answer_not_from_its_passages_is_dropped(docs):
    """The packaged 135M model's kept rows included "What is the answer to the question?"
    and answers in its own words; both are dropped at writing, before a check is asked."""
    plan = build_plan(docs, 8, "factoid=0.5,multihop=0.25,unanswerable=0.25", seed=1)
    written = [
        _c({"question": "What is the answer to the question?", "answer": "The answer"}),
        _c({"question": "What are window panes made of?", "answer": "a silver denarius"}),
        _c({"question": "What lowers the melting point of silica?", "answer": "The soda"}),
        _c(
            {
                "question": "What is made by pouring molten glass on tin?",
                "answer": "float in Venice",
            }
        ),
        _c({"question": "What is the answer to the question?", "answer": "yes"}),  # multihop
        _c({"question": "Which coin did the hyperpyron replace?", "answer": "solidus, gold"}),
        _c({"question": "Tell me what the question asks?"}),  # unanswerable, about nothing
        _c({"question": "How heavy was the solidus coin?"}),
    ]
    calls: list[list] = []

    def complete(requests, label):
        calls.append(requests)
        return written if len(calls) == 1 else [_c({"answer": "x"})] * len(requests)

    result = run_plan(plan, complete, "scripted")
    assert len(calls[1]) == 4  # drafts 3, 4, 6 and 8 are checked; the rest never
    assert result.drop_reasons()[("factoid", "question names nothing in its passages")] == 1
    assert result.drop_reasons()[("multihop", "question names nothing in its passages")] == 1
    assert result.drop_reasons()[("unanswerable", "question names nothing in its passages")] == 1
    assert (
        result.drop_reasons()[
            ("factoid", "answer not from its passages (under half its words are theirs)")
        ]
        == 1
    )  # "a silver denarius": neither "silver" nor "denarius" is in its passage
    checked = [r.messages[-1]["content"] for r in calls[1]]
    # "float in Venice": half its words ("float") are the passage's, so it is checked
    assert "What is made by pouring molten glass on tin?" in checked[1]


def test_answers_that_repeat_the_question_and_the_summary_of_a_cached_run(docs):
    """An answer whose words are all the question's tells nothing (the 135M model copied a
    passage's sentence into both); a run answered from the model-call cache gives no
    kept-per-minute rate (it read "1594.6 kept per minute")."""
    plan = build_plan(docs, 4, "factoid=1", seed=1)
    copy = "Debasement of the solidus had begun in earnest under Nikephoros II"
    written = [
        _c({"question": copy, "answer": "the solidus, under Nikephoros II"}),
        _c({"question": "What lowers the melting point of silica?", "answer": "The soda"}),
        _c({"question": "What lowers the melting point of silica sand?", "answer": "silica"}),
        _c({"question": "What is float glass poured onto?", "answer": "molten tin"}),
    ]
    written = [dataclasses.replace(c, cached=True) for c in written]

    def complete(requests, label):
        if label == "writing questions":
            return written
        return [Completion(text=json.dumps({"answer": "molten tin"}), cached=True)] * len(requests)

    result = run_plan(plan, complete, "scripted")
    reasons = result.drop_reasons()
    assert reasons[("factoid", "answer repeats the question")] == 2
    assert result.calls == 6 and result.cached_calls == 6
    console = Console(record=True, width=120)
    render_summary(result, console)
    line = next(x for x in console.export_text().splitlines() if "LLM calls" in x)
    assert line.startswith("6 LLM calls (6 from the model-call cache) in ")
    assert "per minute" not in line


def test_every_import_of_the_synth_package_resolves():
    """Imports inside functions (the Ray actor's, the runner's) run only with a model; a
    refactor that moves a name must fail here, not in the slow run."""
    import ast
    import importlib
    import importlib.util
    from pathlib import Path

    import lasagna.synth

    for path in Path(lasagna.synth.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lasagna"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    sub = (
                        importlib.util.find_spec(f"{node.module}.{alias.name}")
                        if hasattr(module, "__path__")
                        else None
                    )
                    assert hasattr(module, alias.name) or sub, (path.name, node.module, alias.name)
