"""An executor calling the packaged SmolLM2 through `lasagna.model(...)`, scored by the ready
LLM judge on the same model: one vLLM engine (the run's shared server) serves both, and the
trial's trace holds both LLM spans, nested under EXECUTOR and EVALUATOR."""

from __future__ import annotations

import sys

import pytest
from ray import cloudpickle

import lasagna
from lasagna import Datapoint, evaluate
from lasagna.cli import main
from lasagna.evaluation import LLMJudge, answer_correctness
from lasagna.results import sql
from lasagna.results.report.evaluations import evaluation_group
from lasagna.results.runs import open_run

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/

pytestmark = [pytest.mark.slow, pytest.mark.vllm]


# a module-level client, as a user writes one: it travels to the workers as its spec
LLM = lasagna.model("packaged:SmolLM2-135M-Instruct", max_tokens=24)


def capital_of_country(data: dict) -> str:
    return LLM.chat(f"What is the capital of {data['country']}? Answer in one word.")


PARIS = "Paris is the capital of France."
TOKYO = "Tokyo is the capital of Japan."


def test_vllm_executor_with_llm_judge(ray_local, tmp_path, capsys):
    result = evaluate(
        [
            Datapoint({"country": "France"}, "Paris", {"retrieval_context": [PARIS]}, "france"),
            Datapoint({"country": "Japan"}, "Tokyo", {"retrieval_context": [TOKYO]}, "japan"),
        ],
        capital_of_country,
        {
            "correctness": answer_correctness(cache=str(tmp_path / "calls")),
            "faith": LLMJudge("faithfulness", cache=False),
        },
        group_name="capitals-vllm",
        output=tmp_path,
        resources={"num_cpus": 0.5},
        quiet=True,
    )
    assert result.n_errors == 0, result.errors
    assert all(0.0 <= t["scores"]["correctness"] <= 1.0 for t in result.trials)
    # every judge call went through the model-call cache: a re-score computes none again
    assert len(list((tmp_path / "calls").rglob("*.json"))) >= 2
    spans = sql(
        tmp_path,
        "SELECT s.trace_id, s.span_type, p.span_type AS parent_type, "
        "s.attributes['gen_ai.usage.input_tokens'] AS tokens_in "
        "FROM spans s JOIN spans p ON s.parent_span_id = p.span_id WHERE s.span_type = 'LLM'",
    ).to_pylist()
    for trial in result.trials:
        mine = [s for s in spans if s["trace_id"] == trial["trace_id"]]
        parents = [s["parent_type"] for s in mine]  # the executor's call, each judge's calls
        assert parents.count("EXECUTOR") == 1 and parents.count("EVALUATOR") >= 2
        assert all(int(s["tokens_in"]) > 0 for s in mine)
    tokens = sql(tmp_path, "SELECT min(tokens_in) t FROM evaluation_trials").to_pylist()
    assert tokens[0]["t"] > 0
    # each faithfulness row says on its span whether it was judged; the result's warnings
    # (and the summary's, results show's) count exactly the rows that were not
    faith = sql(
        tmp_path,
        "SELECT attributes['lasagna.span.judge.benchmark'] b, "
        "attributes['lasagna.span.judge.degenerate'] d FROM spans "
        "WHERE span_type = 'EVALUATOR' AND name = 'faith'",
    ).to_pylist()
    assert [f["b"] for f in faith] == ["faithfulness"] * 2
    assert all(f["d"] in ("true", "false") for f in faith)
    degenerate = sum(f["d"] == "true" for f in faith)
    said = [w for w in result.warnings if "faith (faithfulness)" in w and "rows:" in w]
    # each trial of the result says what each judge said of it; the plain number has none
    judged = [t["judgements"] for t in result.trials]
    assert all(sorted(j) == ["correctness", "faith"] for j in judged), judged
    assert sum(j["faith"]["degenerate"] for j in judged) == degenerate
    assert all(j["faith"]["benchmark"] == "faithfulness" and j["faith"]["reason"] for j in judged)
    capsys.readouterr()
    assert main(["results", "show", result.evaluation_id, "--output", str(tmp_path)]) == 0
    shown = capsys.readouterr().out
    if degenerate:
        assert len(said) == 1
        assert said[0].startswith(f"faith (faithfulness): {degenerate} of 2 rows: no claims")
        assert f"⚠ {degenerate}/2 degenerate" in shown and "warning: faith (" in shown
    else:
        assert said == [] and "degenerate" not in shown
    run = open_run(result.evaluation_id, tmp_path)  # the report's table of the group
    group = evaluation_group(0, "capitals-vllm", [run])
    (entry,) = group["evaluations"]
    # the drill-down says, per row, what each judge said of it
    (trial,) = group["drill"]["runs"][0]["trials"]
    notes = [row["fields"].get("faith judge", "") for row in trial["rows"].values()]
    assert sum(n.startswith("not judged (no claims found)") for n in notes) == degenerate
    assert all(notes)  # faithfulness always says why (its reason is lasagna's own words)
    assert entry["warnings"] == result.warnings and entry["marks"]["correctness"] == ""
    assert entry["marks"]["faith"] == (f"⚠ {degenerate}/2 degenerate" if degenerate else "")
