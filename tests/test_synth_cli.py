"""`lasagna benchmark synthesize` and the Python API without a model: dry run, refusals,
the spec's import path, the atomic writer, and a written file validating and filtering."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from synth_docs import make_docs

from lasagna.cli import main
from lasagna.data import load_benchmark
from lasagna.data.select import select_rows
from lasagna.errors import UserError
from lasagna.synth.mix import QUESTION_TYPES


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    return make_docs(tmp_path_factory.mktemp("docs"))


def _listing(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def test_dry_run_prints_plan_and_estimate_loads_nothing_writes_nothing(docs, capsys, tmp_path):
    before = _listing(docs)
    out_file = tmp_path / "out.jsonl"
    code = main(
        ["benchmark", "synthesize", str(docs), "--n", "10", "--seed", "42", "--dry-run"]
        + ["--out", str(out_file)]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    out = " ".join(out.split())  # lines wrap where the folder's path is long
    assert "5 read, 1 skipped (unsupported), 3 unreadable" in out
    assert "skipped slides.pptx: unsupported file type '.pptx'" in out
    assert "unreadable broken.pdf: corrupt or unreadable PDF" in out
    assert "unreadable locked.pdf: encrypted PDF" in out
    assert "Passages: 10" in out
    assert "LLM calls: 20" in out and "Token estimate: ~" in out and "/ 4" in out
    assert "nothing written" in out
    assert not out_file.exists() and _listing(docs) == before


def test_dry_run_imports_no_model_library(docs):
    code = (
        "import sys; from lasagna.cli import main; "
        f"assert main(['benchmark', 'synthesize', {str(docs)!r}, '--dry-run']) == 0; "
        "loaded = [m for m in ('vllm', 'ray', 'torch', 'transformers') if m in sys.modules]; "
        "assert not loaded, loaded"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_cli_refusals_exit_2_before_any_model(docs, capsys, tmp_path, monkeypatch):
    for var in ("MODEL_NAME", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    out_file = tmp_path / "out.jsonl"
    assert main(["benchmark", "synthesize", str(docs), "--out", str(out_file)]) == 2
    err = capsys.readouterr().err
    assert "OPENAI_API_KEY" in err and "ANTHROPIC_API_KEY" in err and "MODEL_NAME" in err
    assert "--model packaged:SmolLM2-135M-Instruct" in err
    assert main(["benchmark", "synthesize", str(docs), "--mix", "factoid=2", "--dry-run"]) == 2
    assert "sum to 2, not 1" in capsys.readouterr().err
    out_file.write_text("keep me\n")
    args = ["benchmark", "synthesize", str(docs), "--out", str(out_file)]
    assert main([*args, "--model", "packaged:SmolLM2-135M-Instruct"]) == 2
    assert "pass --force" in capsys.readouterr().err and out_file.read_text() == "keep me\n"
    assert main(["benchmark", "synthesize", str(docs)]) == 2
    assert "--out is required" in capsys.readouterr().err
    monkeypatch.setenv("LASAGNA_CACHE", str(out_file / "cache"))  # under a file
    fresh = tmp_path / "fresh.jsonl"
    args = ["benchmark", "synthesize", str(docs), "--out", str(fresh)]
    assert main([*args, "--model", "packaged:SmolLM2-135M-Instruct"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"LASAGNA_CACHE={out_file / 'cache'} cannot hold the cache" in err, err
    assert "Fix: set LASAGNA_CACHE" in err and not fresh.exists()
    assert main(["models", "prepare"]) == 2  # the same refusal, not a traceback
    assert "cannot hold the cache" in capsys.readouterr().err
    monkeypatch.delenv("LASAGNA_CACHE")
    # every problem at once (the folder's was said only after the model's was fixed), a
    # file named as the folder, and an --out a dry run would leave to fail at the end
    assert main(["benchmark", "synthesize", str(tmp_path / "nope"), "--out", str(fresh)]) == 2
    err = capsys.readouterr().err
    assert "no model chosen" in err and "nope: no such folder" in err
    assert main(["benchmark", "synthesize", str(out_file), "--dry-run"]) == 2
    assert "out.jsonl: not a folder" in capsys.readouterr().err
    blocked = ["--out", str(out_file / "q.jsonl"), "--dry-run"]
    assert main(["benchmark", "synthesize", str(docs), *blocked]) == 2
    assert "the output file cannot be written: not a directory" in capsys.readouterr().err


def test_python_api_at_the_spec_import_path(docs, monkeypatch):
    from lasagna.knowledge_evaluation_sdk.synthesize import synthesize, write_jsonl

    monkeypatch.delenv("MODEL_NAME", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(UserError, match="variables read"):
        synthesize(str(docs), n=5, mix="factoid=0.6,multihop=0.3,unanswerable=0.1", seed=42)
    assert callable(write_jsonl)


def _row(i: int, qtype: str) -> dict:
    return {
        "id": f"synth-{i:04d}",
        "question": f"Question number {i}?",
        "answer": "" if qtype == "unanswerable" else f"answer {i}",
        "contexts": [f"Passage text {i} about glass.", f"Second passage {i}."][
            : 2 if qtype == "multihop" else 1
        ],
        "metadata": {
            "question_type": qtype,
            "source_doc_ids": ["a.md"],
            "prompt_id": f"{qtype}-v1",
            "prompt_sha256": "0" * 64,
            "model": "m",
            "seed": 1,
            "synthetic": True,
            "unanswerable": qtype == "unanswerable",
        },
    }


def test_written_file_is_atomic_validates_and_filters_by_type(tmp_path):
    from lasagna.synth.output import write_jsonl

    rows = [_row(1, "factoid"), _row(2, "multihop"), _row(3, "unanswerable"), _row(4, "multihop")]
    path = tmp_path / "bench.jsonl"
    write_jsonl(rows, path)
    assert [json.loads(line) for line in path.read_text().splitlines()] == rows
    assert [p.name for p in tmp_path.iterdir()] == ["bench.jsonl"]  # no temporary left
    with pytest.raises(UserError, match="overwrite=True"):
        write_jsonl(rows[:1], path)
    bench = load_benchmark(path)
    assert len(bench.rows) == 4
    multihop = select_rows(bench, filters={"question_type": "multihop"})
    assert [r.id for r in multihop.rows] == ["synth-0002", "synth-0004"]
    write_jsonl(rows[:1], path, overwrite=True)
    assert len(path.read_text().splitlines()) == 1

    class Boom(Exception):
        pass

    def failing():
        yield rows[0]
        raise Boom

    with pytest.raises(Boom):
        write_jsonl(failing(), tmp_path / "half.jsonl")
    with pytest.raises(UserError, match="no row to write: every question was dropped"):
        write_jsonl([], tmp_path / "empty.jsonl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench.jsonl"]


def test_a_written_file_is_accepted_by_a_rag_sweep(tmp_path, capsys):
    """Data, tracks, models and placement are checked as `run` does, before any model loads
    (the RAG run itself: tests/test_engine_generation.py)."""
    from lasagna.synth.output import write_jsonl

    path = write_jsonl([_row(i, t) for i, t in enumerate(QUESTION_TYPES, 1)], tmp_path / "s.jsonl")
    code = main(["benchmark", "plan", str(path), "--profile", "rag", "--output", str(tmp_path)])
    assert code == 0, capsys.readouterr().err
    assert "rag" in capsys.readouterr().out
