"""The generation track end to end on Ray with the packaged model on vLLM (CPU, for real)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lasagna.engine.driver import run_plan
from lasagna.errors import UserError
from lasagna.results.schema import check_rows
from lasagna.sample import sample_path
from lasagna.sweep import build_plan, sweep_for_path
from lasagna.systems import ClosedBookGenerator, ModelSpec, RagGenerator

pytestmark = [pytest.mark.slow, pytest.mark.vllm]

SPEC = ModelSpec(max_tokens=16, resources={"batch_size": 8})


def _rows(n: int) -> list[dict]:
    rows = [json.loads(line) for line in sample_path().read_text().splitlines() if line.strip()]
    return rows[:n]


def test_rag_and_closed_book_on_vllm(ray_local, tmp_path):
    rows = [r | {"metadata": {**r.get("metadata", {}), "ok": True}} for r in _rows(5)]
    long_row = {
        "id": "too-long",
        "question": "why? " + "very " * 3000,
        "answer": "x",
        "contexts": ["a passage nobody retrieves"],
        "metadata": {"ok": False},
    }
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in [*rows, long_row]))
    sweep, base = sweep_for_path(data, None, output=str(tmp_path / "out"))
    rag = RagGenerator(passages=2, model=SPEC)
    sweep = sweep.model_copy(update={"generators": [rag, ClosedBookGenerator(model=SPEC)]})
    plan = build_plan(sweep, base)
    outcome = run_plan(plan)

    for trial in outcome.trials:
        table = trial.rows
        assert table.column("id").to_pylist() == [r["id"] for r in rows] + ["too-long"]
        errors = table.column("error").to_pylist()
        assert errors[-1] and all(e is None for e in errors[:-1])  # recorded, not dropped
        assert trial.counts["failed"] == 1 and trial.counts["rows"] == 6
        assert trial.extra["row_errors"]["failed"] == 1  # what the run summary names
        preds = table.column("prediction").to_pylist()[:-1]
        assert all(isinstance(p, str) for p in preds) and any(p.strip() for p in preds)
        assert all(0 <= t <= 16 for t in table.column("completion_tokens").to_pylist()[:-1])
        assert {"em", "f1", "has_ans_f1", "tokens_per_s"} <= set(trial.metrics)
        # one actor: the batch timeline spans at least the engine's busy time
        assert trial.metrics["pipeline_tokens_per_s"] <= trial.metrics["tokens_per_s"] * 1.001
        assert 0.0 <= trial.metrics["f1"] <= 1.0
        assert table.column("em").to_pylist()[-1] is None
        identity = trial.config["model_identity"]
        assert identity["backend"] == "vllm" and identity["files_sha256"]
        assert identity["prompt_sha256"]
        assert check_rows(table) == []  # every column has the result schema's type
    first, second = outcome.trials  # one model, one engine: loaded once, reused by the second
    assert first.timings["engine_load"] > 0 and second.timings["engine_load"] == 0.0
    assert set(second.rows["engine_load_s"].to_pylist()) == {0.0}
    assert first.counts["cache_misses"] == 5 and first.counts["cache_hits"] == 0
    rag_rows = outcome.trials[0].rows
    passages = rag_rows.column("passages").to_pylist()
    assert all(1 <= len(p) <= 2 for p in passages[:-1])  # BM25 omits zero-score documents
    assert passages[-1] == []  # nothing matches the last question
    # what the generator read, judged by each row's own contexts (the pooled-gold qrels)
    gold = [set(r["contexts"]) for r in [*rows, long_row]]
    hits = [float(bool(g & set(p))) for g, p in zip(gold, passages, strict=True)]
    assert rag_rows.column("passage_hit").to_pylist() == hits and hits[-1] == 0.0
    recalls = rag_rows.column("passage_recall").to_pylist()
    assert [len(g & set(p)) / len(g) for g, p in zip(gold, passages, strict=True)] == recalls
    assert outcome.trials[0].metrics["passage_recall"] == pytest.approx(sum(recalls) / 6)
    assert "passage_recall" not in outcome.trials[1].metrics  # closed book reads nothing
    assert outcome.trials[1].rows.column_names.count("passages") == 0  # closed book
    assert outcome.trials[0].comparability_key == outcome.trials[1].comparability_key

    # the same questions again (less the failed row, filtered out; same corpus): every call
    # comes from the model-call cache, the engine never loads, the rows are the same
    ok_only, _ = sweep_for_path(data, None, output=str(tmp_path / "out"), filters={"ok": True})
    again = run_plan(build_plan(ok_only.model_copy(update={"generators": sweep.generators}), base))
    timing = {"latency_s", "batch_rows", "batch_started_at", "engine_load_s", "cached"}
    for before, after in zip(outcome.trials, again.trials, strict=True):
        assert after.counts["cache_hits"] == 5 and after.counts["cache_misses"] == 0
        assert after.timings["engine_load"] == 0.0
        assert after.rows.column("cached").to_pylist() == [True] * 5
        keep = [c for c in before.rows.column_names if c not in timing]
        assert (
            after.rows.select(keep).to_pylist() == before.rows.slice(0, 5).select(keep).to_pylist()
        )
    manifest = json.loads((Path(again.run_path) / "manifest.json").read_text())
    assert manifest["model_call_cache"]["hits"] == 10
    assert manifest["model_call_cache"]["misses"] == 0


def test_closed_book_only_data_refuses_rag_before_any_model(tmp_path):
    data = tmp_path / "answers.jsonl"
    data.write_text(json.dumps({"question": "Capital of France?", "answer": "Paris"}) + "\n")
    sweep, base = sweep_for_path(data, "rag", output=str(tmp_path / "out"))
    with pytest.raises(UserError) as err:
        build_plan(sweep, base)
    assert "closed_book" in err.value.render()
    assert not (tmp_path / "out").exists()


def test_repeats_of_a_sampled_generator_draw_anew(ray_local, tmp_path):
    """temperature > 0 with trials: 2: each repeat samples with its own seed (repeat 0 with
    the model's), so the repeats differ and repeat 1 is not served from repeat 0's cached
    calls; with one seed for every repeat the two were one draw read twice."""
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows(6)))
    sweep, base = sweep_for_path(data, None, output=str(tmp_path / "out"), trials=2)
    sampled = SPEC.model_copy(update={"temperature": 1.0, "max_tokens": 24})
    sweep = sweep.model_copy(update={"generators": [ClosedBookGenerator(model=sampled)]})
    first, second = run_plan(build_plan(sweep, base)).trials
    assert (first.repeat, second.repeat) == (0, 1)
    assert second.counts["cache_hits"] == 0 and second.counts["cache_misses"] == 6
    one, two = (t.rows.column("prediction").to_pylist() for t in (first, second))
    assert one != two, one
    assert first.config["model_identity"]["sampling"]["draw_seeds"] == "per repeat"
