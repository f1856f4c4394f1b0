"""The SDK's pure parts: datapoints and task ids, score rules, refusals, one trial's spans."""

from __future__ import annotations

import asyncio
import json
import math

import pytest

from lasagna.common import tracing
from lasagna.errors import UserError
from lasagna.evaluation.checks import check_evaluators, check_executor
from lasagna.evaluation.datapoint import Datapoint, Dataset, task_ids
from lasagna.evaluation.scores import ScoreError, averages, score_dimensions
from lasagna.evaluation.trial import TrialSpec, run_trial, run_trial_async


def test_task_ids_explicit_then_position_kept_through_subsets():
    data = [
        Datapoint({"q": 0}, task_id="zero"),
        {"data": {"q": 1}},
        {"data": {"q": 2}, "taskId": "two"},
        Datapoint({"q": 3}),
        Datapoint({"q": 4}),
    ]
    ds = Dataset.of(data)
    assert task_ids(ds) == ["zero", "1", "two", "3", "4"]
    assert task_ids(ds.take(2)) == ["zero", "1"]
    assert task_ids(ds.select([4, 1])) == ["4", "1"]
    shuffled = ds.shuffle(seed=7)
    assert sorted(task_ids(shuffled)) == sorted(task_ids(ds))
    assert [p.data["q"] for p in shuffled] != [0, 1, 2, 3, 4]
    for point, tid in zip(shuffled, task_ids(shuffled), strict=True):
        assert tid in ("zero", "two") or tid == str(point.data["q"])
    assert task_ids(Dataset.of(list(ds.select([3, 0])))) == ["3", "zero"]  # re-wrapped list


def test_from_file_row_ids_and_targets(tmp_path):
    path = tmp_path / "qa.jsonl"
    rows = [
        {"id": "q1", "question": "Capital of France?", "answers": ["Paris"], "metadata": {"c": 1}},
        {"question": "Capital of Japan?", "answers": ["Tokyo", "Tōkyō"]},
        {"id": "q3", "question": "Capital of Peru?", "answers": ["Lima"]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = Dataset.from_file(path)
    assert task_ids(ds) == ["q1", "row2", "q3"]
    assert ds[0].data == "Capital of France?" and ds[0].target == "Paris"
    assert ds[0].metadata == {"c": 1}
    assert ds[1].target == ["Tokyo", "Tōkyō"]
    by_question = dict(zip((p.data for p in ds), task_ids(ds), strict=True))
    subset = ds.shuffle(1).take(2)
    assert task_ids(subset) == [by_question[p.data] for p in subset]
    picked = ds.select([2])
    assert task_ids(picked) == ["q3"]


def test_duplicates_and_bad_datapoints_refused():
    with pytest.raises(UserError, match="task id 'a' is used again"):
        task_ids(Dataset.of([Datapoint(1, task_id="a"), Datapoint(2, task_id="a")]))
    with pytest.raises(UserError, match="task id '1' is used again"):  # explicit vs position
        task_ids(Dataset.of([Datapoint(1, task_id="1"), Datapoint(2)]))
    with pytest.raises(UserError, match="unknown key"):
        Dataset.of([{"data": 1, "targt": 2}])
    with pytest.raises(UserError, match="needs 'data'"):
        Dataset.of([{"target": 2}])
    with pytest.raises(UserError, match="list of Datapoints"):
        Dataset.of("not a list")


def test_a_dataframe_is_a_datapoint_per_row():
    """Not iterated as its column names: its columns are a datapoint dict's keys."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {"data": [{"q": "a"}, {"q": "b"}], "target": ["A", "B"], "task_id": ["x", "y"]}
    )
    ds = Dataset.of(frame)
    assert [p.data for p in ds] == [{"q": "a"}, {"q": "b"}] and task_ids(ds) == ["x", "y"]
    assert [p.target for p in ds] == ["A", "B"]
    with pytest.raises(UserError, match="unknown key.s. 'question'") as info:
        Dataset.of(pd.DataFrame({"question": ["a"], "target": ["A"]}))
    assert "DataFrame's columns" in info.value.render()
    # a row without metadata or task id: pandas' NaN there is "none", not a float to refuse
    gaps = pd.DataFrame(
        {"data": [{"q": "a"}, {"q": "b"}], "metadata": [{"r": 1}, None], "task_id": ["x", None]}
    )
    ds = Dataset.of(gaps)
    assert [p.metadata for p in ds] == [{"r": 1}, None] and task_ids(ds) == ["x", "1"]


def test_score_rules():
    assert score_dimensions("acc", 1) == {"acc": 1.0}
    assert score_dimensions("acc", True) == {"acc": 1.0}
    assert score_dimensions("acc", False) == {"acc": 0.0}
    assert score_dimensions("acc", None) == {"acc": None}
    assert score_dimensions("acc", math.nan) == {"acc": None}
    assert score_dimensions("pr", {"precision": 0.9, "recall": 0.8}) == {
        "precision": 0.9,
        "recall": 0.8,
    }
    for bad in ("1", [1], {"p": "x"}, {}):
        with pytest.raises(ScoreError):
            score_dimensions("acc", bad)
    assert averages([{"a": 1.0, "b": None}, {"a": 0.0, "b": 0.5}]) == {"a": 0.5, "b": 0.5}
    assert math.isnan(averages([{"a": None}])["a"])


def test_signature_refusals():
    check_executor(lambda data: data)

    async def async_exec(data):
        return data

    check_executor(async_exec)

    class Holder:
        def __call__(self, data):
            return data

    check_executor(Holder)
    with pytest.raises(UserError, match="one argument"):
        check_executor(lambda a, b: a)
    with pytest.raises(UserError, match="callable"):
        check_executor("nope")

    class NeedsArgs:
        def __init__(self, model):
            self.model = model

        def __call__(self, data):
            return data

    with pytest.raises(UserError, match="without arguments"):
        check_executor(NeedsArgs)
    with pytest.raises(UserError, match="takes \\(output, target\\)"):
        check_evaluators({"acc": lambda output: 1})
    with pytest.raises(UserError, match="dict name"):
        check_evaluators([1, 2])


def _accuracy(output, target):
    return 1 if target.lower() in output.lower() else 0


def _spans_of(result):
    return tracing.collector().take([result["trace_id"]])


def test_one_trial_span_tree_and_scores():
    spec = TrialSpec(0, "france", 0, {"country": "France"}, "Paris", {"k": "v"})
    result = run_trial(
        spec,
        lambda d: f"It is Paris ({d['country']})",
        {"accuracy": _accuracy, "pr": lambda o, t: {"precision": 0.5, "recall": True}},
        "ev1",
    )
    assert result["scores"] == {"accuracy": 1.0, "precision": 0.5, "recall": 1.0}
    assert result["error"] is None and result["output"] == "It is Paris (France)"
    spans = {s["name"]: s for s in _spans_of(result)}
    root = spans["evaluation"]
    assert root["span_type"] == "EVALUATION" and root["parent_span_id"] is None
    assert spans["executor"]["span_type"] == "EXECUTOR"
    assert spans["executor"]["parent_span_id"] == root["span_id"]
    for name in ("accuracy", "pr"):
        assert spans[name]["span_type"] == "EVALUATOR"
        assert spans[name]["parent_span_id"] == root["span_id"]
    assert spans["accuracy"]["attributes"]["lasagna.span.output"] == "1"
    scored = json.loads(spans["accuracy"]["attributes"]["lasagna.span.input"])
    assert scored == {"output": "It is Paris (France)", "target": "Paris"}
    assert {s["trace_id"] for s in spans.values()} == {result["trace_id"]}


def test_an_executor_call_past_its_timeout_is_a_failed_trial_under_its_span():
    """The call runs in a thread of its own: the datapoint and the executor's span are
    there; past the limit the trial fails and the caller goes on."""
    import threading
    import time

    from opentelemetry import trace

    from lasagna.stages.sdk_executor import run_batch
    from lasagna.stages.sdk_rows import call_with_timeout, current_datapoint

    seen = []

    def executor(data):
        span = trace.get_current_span().get_span_context().span_id
        row = current_datapoint()  # None outside a row (the first, direct call)
        seen.append((row and row.task_id, format(span, "016x")))
        if data == "slow":
            time.sleep(5)
        if data == "own":
            raise TimeoutError("the executor's own")
        return data

    with pytest.raises(TimeoutError, match="the executor's own"):
        call_with_timeout(executor, "own", 1.0)  # raised as the executor raised it
    specs = [TrialSpec(i, t, 0, t, t, None) for i, t in enumerate(["a", "slow", "b"])]
    out = run_batch(executor, {"same": lambda o, t: o == t}, specs, {}, "ev", 1, timeout=0.3)
    assert out["unrun"] is None
    calls = [t for t in threading.enumerate() if t.name == "lasagna-executor-call"]
    assert any(t.is_alive() for t in calls)  # the slow call was left running, not waited for
    rows = out["rows"]
    assert [r["error_type"] for r in rows] == [None, "ExecutorTimeout", None]
    assert (
        "no output within 0.3 s (evaluate(timeout=0.3)); the call was abandoned"
        in (rows[1]["error"])
    )
    assert [t for t, _ in seen[1:]] == ["a", "slow", "b"]
    spans = {s["span_id"]: s for s in out["spans"]}
    for _, span_id in seen[1:]:  # each call ran under its own row's executor span
        assert spans[span_id]["span_type"] == "EXECUTOR"
    exclusive = run_batch(executor, {}, specs, {}, "ev", 1, timeout=0.3, exclusive=True)
    assert [r["task_id"] for r in exclusive["rows"]] == ["a", "slow"]  # no call beside it
    assert [s.task_id for s in exclusive["unrun"]] == ["b"]


@pytest.mark.parametrize("bad", [0, -1, "30", True])
def test_a_bad_timeout_is_refused(bad, tmp_path):
    from lasagna import evaluate

    with pytest.raises(UserError, match="timeout"):
        evaluate([1], lambda d: d, {"s": lambda o, t: 1}, output=tmp_path, timeout=bad)


def test_failures_are_recorded_not_raised():
    spec = TrialSpec(0, "t", 0, "x", "y", None)

    def boom(data):
        raise RuntimeError("executor exploded")

    result = run_trial(spec, boom, {"acc": _accuracy}, "ev")
    assert result["error"].startswith("executor: RuntimeError: executor exploded")
    assert result["error_type"] == "RuntimeError" and result["scores"] == {}
    spans = {s["name"]: s for s in _spans_of(result)}
    assert spans["executor"]["status"] == "ERROR" and "acc" not in spans

    result = run_trial(
        spec, lambda d: "y", {"bad": lambda o, t: "high", "fine": lambda o, t: 1}, "ev"
    )
    assert result["scores"] == {"fine": 1.0}
    assert "evaluator bad: ScoreError" in result["error"]
    spans = {s["name"]: s for s in _spans_of(result)}
    assert spans["bad"]["status"] == "ERROR" and spans["fine"]["status"] == "UNSET"


def test_async_trial_with_sync_and_async_evaluators():
    async def executor(data):
        await asyncio.sleep(0)
        return data * 2

    async def async_eval(output, target):
        return output == target

    spec = TrialSpec(0, "t", 0, 21, 42, None)
    result = asyncio.run(
        run_trial_async(spec, executor, {"a": async_eval, "s": lambda o, t: o / t}, "ev")
    )
    assert result["scores"] == {"a": 1.0, "s": 1.0}
    assert len(_spans_of(result)) == 4


def test_import_lasagna_is_cheap():
    import subprocess
    import sys

    code = (
        "import sys, lasagna; from lasagna import Datapoint; "
        "print(any(m.startswith(('ray', 'opentelemetry')) for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_spans_reach_an_otlp_collector_only_when_the_endpoint_is_set(monkeypatch):
    """A real OTLP/HTTP exchange with a local receiver: the trial's spans, same ids."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    received: list[bytes] = []

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            received.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = run_trial(TrialSpec(0, "t", 0, "x", "x", None), str.upper, {"a": _accuracy}, "e")
        records = _spans_of(result)
        monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
        assert tracing.export_otlp(records) is False and not received
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        assert tracing.export_otlp(records) is True
    finally:
        server.shutdown()
    request = ExportTraceServiceRequest.FromString(received[0])
    spans = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert sorted(s.span_id.hex() for s in spans) == sorted(r["span_id"] for r in records)
    assert {s.trace_id.hex() for s in spans} == {result["trace_id"]}
    types = {
        a.value.string_value for s in spans for a in s.attributes if a.key == "lasagna.span.type"
    }
    assert types == {"EVALUATION", "EXECUTOR", "EVALUATOR"}


def test_llm_judge_builds_its_case_from_the_trial():
    from lasagna.evaluation.judge import JudgeError, LLMJudge
    from lasagna.evaluation.trial import _CURRENT

    judge = LLMJudge("correctness")
    token = _CURRENT.set(TrialSpec(0, "t", 0, {"question": "Capital of France?"}, "Paris", None))
    try:
        assert judge.case("It is Paris.", "Paris") == {
            "input": "Capital of France?",
            "actual_output": "It is Paris.",
            "expected_output": "Paris",
        }
        faithful = LLMJudge("faithfulness")
        with pytest.raises(JudgeError, match="retrieval_context"):
            faithful.case("It is Paris.", "Paris")
        case = faithful.case({"answer": "Paris", "retrieval_context": ["Paris is..."]}, None)
        assert case["retrieval_context"] == ["Paris is..."]
        assert case["actual_output"] == "Paris"
    finally:
        _CURRENT.reset(token)
    with pytest.raises(UserError, match="conversations"):
        LLMJudge("role-adherence")
    with pytest.raises(UserError):
        LLMJudge("no-such-judge")


def test_openai_sdk_calls_inside_the_executor_become_llm_spans():
    """The SDK's real HTTP path against a local endpoint that answers like the API."""
    from fake_openai import chat_completion, serve

    openai = pytest.importorskip("openai", reason="the openai SDK is not installed")
    from lasagna.models.instrument import instrument_models

    server = serve(lambda asked: (200, chat_completion("Paris", 11, 2), {}))
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="k")
    instrument_models()

    def executor(data):
        response = client.chat.completions.create(
            model="tiny", messages=[{"role": "user", "content": f"Capital of {data}?"}]
        )
        return response.choices[0].message.content

    try:
        client.chat.completions.create(model="tiny", messages=[])  # outside a trial: no span
        result = run_trial(TrialSpec(0, "t", 0, "France", "Paris", None), executor, {}, "e")
    finally:
        server.shutdown()
    assert result["output"] == "Paris"
    spans = {s["span_type"]: s for s in _spans_of(result)}
    llm = spans["LLM"]
    assert llm["parent_span_id"] == spans["EXECUTOR"]["span_id"]
    assert llm["attributes"]["gen_ai.request.model"] == "tiny"
    assert llm["attributes"]["gen_ai.usage.input_tokens"] == 11
    assert llm["attributes"]["lasagna.span.output"] == "Paris"
    assert not tracing.collector().take_all()  # the call outside the trial made none


class _Scripted:
    """A chat model with fixed replies (the real engines run in the vLLM tests)."""

    constrained_decoding = True

    def __init__(self, reply=None):
        self.batches = []
        self.reply = reply

    def generate(self, requests):
        from lasagna.models.base import Completion

        self.batches.append(len(requests))
        texts = [self.reply or r.messages[-1]["content"] for r in requests]
        return [Completion(t, prompt_tokens=40, completion_tokens=9) for t in texts]


def test_shared_model_server_batches_concurrent_calls_and_answers_each_its_own():
    import threading

    from lasagna.models.base import ChatRequest
    from lasagna.models.spec import ModelSpec
    from lasagna.stages.model_server import ModelServer

    server = ModelServer(ModelSpec())  # loads nothing until called
    server.shared, server.model = True, _Scripted()
    out = {}

    def call(i):
        out[i] = server.generate([ChatRequest([{"role": "user", "content": f"q{i}"}])])

    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(server.model.batches) == 4 and len(server.model.batches) <= 2
    assert {i: (done[0].text, waited) for i, (done, waited) in out.items()} == {
        i: (f"q{i}", 0.0) for i in range(4)
    }


def test_llm_judge_and_model_client_calls_are_llm_spans_under_their_caller():
    """The judge's call goes where `lasagna.model` clients' calls go (the run's server in
    evaluate(); here a scripted model), as an LLM span under the caller's span."""
    import lasagna
    from lasagna.evaluation.judge import LLMJudge
    from lasagna.evaluation.trial import _CURRENT
    from lasagna.models.client import route_calls

    engine = _Scripted(json.dumps({"score": 10, "reason": "matches"}))
    route_calls(lambda spec: engine)
    token = _CURRENT.set(TrialSpec(0, "t", 0, {"question": "Capital of France?"}, "Paris", None))
    try:
        with tracing.tracer().start_as_current_span("caller") as span:
            parent = format(span.get_span_context().span_id, "016x")
            assert LLMJudge("correctness", cache=False)("Paris", "Paris") == 1.0
            assert lasagna.model("packaged:SmolLM2-135M-Instruct").chat("hi") == engine.reply
    finally:
        route_calls(None)
        _CURRENT.reset(token)
    llm = [s for s in tracing.collector().take_all() if s["span_type"] == "LLM"]
    assert len(llm) == 2 and {s["parent_span_id"] for s in llm} == {parent}
    assert all(s["attributes"]["gen_ai.usage.input_tokens"] == 40 for s in llm)
    assert engine.batches == [1, 1]


def test_unpicklable_executor_refused_with_the_fix():
    import threading

    from lasagna.evaluation.checks import check_picklable

    lock = threading.RLock()

    def executor(data):
        with lock:
            return data

    with pytest.raises(UserError, match="cannot be sent to Ray workers") as err:
        check_picklable(executor, {}, [1])
    assert "field 'executor'" in err.value.render() and "__init__" in err.value.render()
    with pytest.raises(UserError, match="field 'data'"):
        check_picklable(str.upper, {}, [lock])
    check_picklable(str.upper, {"a": _accuracy}, [{"x": [1, 2]}])


def test_sdk_tables_exist_and_are_typed_with_no_evaluation_runs(tmp_path):
    from lasagna.results import sql

    query = "SELECT trace_id FROM spans WHERE attributes['lasagna.span.output'] = '0'"
    assert sql(tmp_path, query).num_rows == 0
    for table in ("evaluations", "evaluation_trials", "evaluation_datapoints"):
        assert sql(tmp_path, f"SELECT * FROM {table}").num_rows == 0
    assert sql(tmp_path, "SELECT scores['x'] FROM evaluation_trials").num_rows == 0


class _Echo:  # a class executor: its actors hold what they load
    def __call__(self, data):
        return data


def test_a_call_ray_could_never_place_is_refused_before_ray_starts(tmp_path, monkeypatch):
    """`num_gpus` with no GPU, or actors asking more CPUs than there are, would leave the
    rows waiting forever: refused at once with each pool and the fix, nothing written."""
    import ray

    from lasagna import evaluate

    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # the in-process Ray's case
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # no GPU, whatever this machine has
    data = [{"data": i} for i in range(3)]
    same = {"same": lambda output, target: output == target}
    with pytest.raises(UserError, match="Ray would wait forever") as err:
        evaluate(data, _Echo, same, resources={"num_gpus": 1}, output=tmp_path, quiet=True)
    text = err.value.render()
    assert "executor actors (resources=): 1 x 1 CPU, 1 GPU" in text
    assert "the cluster has" in text and "no GPU" in text
    assert "take num_gpus out of evaluate()'s resources=" in text
    with pytest.raises(UserError, match="fewer actors") as err:
        evaluate(data, _Echo, same, actors=4, resources={"num_cpus": 4096}, output=tmp_path)
    assert "executor actors (resources=): 4 x 4096 CPU" in err.value.render()
    for bad in ({"gpus": 1}, {"num_cpus": -1}, {"num_gpus": 1.5}, [1]):
        with pytest.raises(UserError, match="field 'resources"):
            evaluate(data, _Echo, same, resources=bad, output=tmp_path)
    assert not any(tmp_path.iterdir())  # refused before the run folder or its status


def test_a_datapoint_lacking_what_a_judge_reads_is_refused_before_ray_starts(tmp_path, monkeypatch):
    """A judge told to read the target (g-eval fields, correctness) would score an empty
    `Expected output:`: refused with the task ids, before any model loads or Ray starts.
    What the output can still bring (retrieval_context in a dict) is not refused."""
    from lasagna import evaluate
    from lasagna.evaluation import api
    from lasagna.evaluation.judge import LLMJudge, g_eval

    monkeypatch.setattr(api, "_run", lambda *a, **k: pytest.fail("the run started"))
    judge = g_eval("Does it match?", fields=["input", "actual_output", "expected_output"])
    data = [{"data": "Capital of France?", "target": "Paris"}, {"data": "Capital of Peru?"}]
    with pytest.raises(UserError, match="expected_output") as err:
        evaluate(data, str.upper, {"ge": judge}, output=tmp_path, quiet=True)
    text = err.value.render()
    assert "field 'evaluators['ge']'" in text and "1 of 2 datapoint(s) lack: task id(s) 1" in text
    assert "give every datapoint a target (or leave it out of fields)" in text
    nothing = [{"data": "", "target": "x", "task_id": "blank"}]
    with pytest.raises(UserError, match=r"reads input .*task id\(s\) blank"):
        evaluate(nothing, str.upper, {"c": LLMJudge("correctness")}, output=tmp_path)
    assert not any(tmp_path.iterdir())
    points = Dataset.of([{"data": "Q?", "target": "A"}]).points
    assert LLMJudge("faithfulness").missing_up_front(list(points), ["0"]) == {}
    assert judge.missing_up_front(list(points), ["0"]) == {}


def test_a_conversation_judge_as_an_evaluator_names_every_single_turn_judge() -> None:
    """The fix listed six judges by hand and left out the contextual ones the SDK takes."""
    from lasagna.evaluation import LLMJudge

    with pytest.raises(UserError) as err:
        LLMJudge("role-adherence")
    fix = err.value.problems[0].fix
    assert "contextual-precision" in fix and "g-eval" in fix and "role-adherence" not in fix


def test_llm_judge_that_judged_nothing_is_flagged_on_its_spans_and_trial():
    """Faithfulness over no extracted claims scores 1.0 by its empty-case rule: each
    EVALUATOR span says the row was not judged (and why), and the trial's flags (what the
    summary, `results show` and the report print) say so for that score dimension only."""
    from types import SimpleNamespace

    from lasagna.evaluation.judge import LLMJudge
    from lasagna.models.client import route_calls
    from lasagna.stages.sdk_scores import judge_warnings
    from lasagna.tracks.sdk import SdkTrack

    engine = _Scripted(json.dumps({"claims": []}))
    route_calls(lambda spec: engine)
    judge = LLMJudge("faithfulness", cache=False)
    spans = []
    try:
        for i in range(3):
            spec = TrialSpec(i, f"t{i}", 0, "Capital?", "Paris", {"retrieval_context": ["P."]})
            result = run_trial(spec, lambda d: "Paris is the capital.", {"faith": judge}, "e")
            assert result["scores"] == {"faith": 1.0} and result["error"] is None
            spans += _spans_of(result)
    finally:
        route_calls(None)
    (evaluator, *_) = [s for s in spans if s["span_type"] == "EVALUATOR"]
    said = {k.rsplit(".", 1)[1]: v for k, v in evaluator["attributes"].items() if ".judge." in k}
    assert said["benchmark"] == "faithfulness" and said["metric"] == "faithfulness_score"
    assert said["degenerate"] is True and said["degenerate_reason"] == "no claims found"
    assert said["reason"] == "the output makes no factual claim"
    assert json.loads(said["details"])["claims_count"] == 0
    flags = judge_warnings(spans)
    assert [(w["kind"], w["judge"], w["metrics"], w.get("rows")) for w in flags] == [
        ("degenerate", "faith (faithfulness)", ["faith"], 3),
        ("identical", "faith (faithfulness)", ["faith"], 3),
    ]
    # restored from a checkpoint part (JSON), the spans give the same flags
    assert judge_warnings(json.loads(json.dumps(spans))) == flags
    trial = SimpleNamespace(
        system="bot",
        extra={"dimensions": ["faith", "words"], "judge_warnings": flags},
        metrics={"faith": 1.0, "words": 4.0},
        counts={"rows": 3, "errors": 0},
    )
    heads, rows = SdkTrack().summary_table([trial])
    assert rows[0][heads.index("faith")] == "1.0000 ⚠ 3/3 degenerate"
    assert rows[0][heads.index("words")] == "4.0000"
    notes = SdkTrack().summary_notes([trial])
    assert notes[0].startswith("bot: faith (faithfulness): 3 of 3 rows: no claims found")


def test_judge_flags_count_only_judged_rows_of_each_judge():
    from lasagna.stages.sdk_scores import judge_warnings

    def span(name, degenerate, score="1.0", status="OK"):
        attrs = {"lasagna.span.judge.benchmark": "faithfulness", "lasagna.span.output": score}
        attrs["lasagna.span.judge.degenerate"] = degenerate
        if degenerate:
            attrs["lasagna.span.judge.degenerate_reason"] = "no claims found"
        return {"span_type": "EVALUATOR", "name": name, "status": status, "attributes": attrs}

    spans = [
        span("faithfulness", True),
        span("faithfulness", False, "0.5"),
        span("faithfulness", False, "0.25"),
        span("faithfulness", True, None, "ERROR"),  # failed: not a judged row
        {"span_type": "EVALUATOR", "name": "words", "status": "OK", "attributes": {}},
    ]
    (flag,) = judge_warnings(spans)
    assert flag["judge"] == "faithfulness" and (flag["rows"], flag["of"]) == (1, 3)
    assert flag["most"] is False and flag["metrics"] == ["faithfulness"]
    assert judge_warnings(spans[1:3] + spans[4:]) == []
