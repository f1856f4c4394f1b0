"""evaluate() end to end on the session's Ray: the spec's example, executors of every kind,
failures, the stored tables and the spec's SQL query, and a worker killed mid-run."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from ray import cloudpickle

from lasagna import Datapoint, evaluate
from lasagna.results import sql

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/

pytestmark = pytest.mark.slow

CAPITALS = {"France": "Paris", "Japan": "Tokyo"}


def capital_of_country(data: dict) -> str:
    return f"The capital is {CAPITALS[data['country']]}."


def accuracy(output: str, target: str) -> int:
    return 1 if target.lower() in output.lower() else 0


def test_spec_example_runs_as_written(ray_local, tmp_path, capsys):
    result = evaluate(
        data=[
            Datapoint(data={"country": "France"}, target="Paris", task_id="france"),
            Datapoint(data={"country": "Japan"}, target="Tokyo", task_id="japan"),
        ],
        executor=capital_of_country,
        evaluators={"accuracy": accuracy},
        group_name="capitals",
        trials=3,
        output=tmp_path,
    )
    assert result.averages == {"accuracy": 1.0} and result.n_trials == 6
    assert sorted((t["task_id"], t["trial_index"]) for t in result.trials) == [
        (tid, k) for tid in ("france", "japan") for k in range(3)
    ]
    assert "accuracy" in capsys.readouterr().out
    ev = sql(tmp_path, "SELECT * FROM evaluations").to_pylist()
    assert len(ev) == 1 and ev[0]["group_name"] == "capitals" and ev[0]["n_trials"] == 6
    assert ev[0]["evaluation_id"] == result.evaluation_id
    n = sql(tmp_path, "SELECT count(*) n FROM evaluation_datapoints").to_pylist()[0]["n"]
    assert n == 6
    types = sql(tmp_path, "SELECT span_type, count(*) n FROM spans GROUP BY 1 ORDER BY 1")
    assert types.to_pylist() == [
        {"span_type": "EVALUATION", "n": 6},
        {"span_type": "EVALUATOR", "n": 6},
        {"span_type": "EXECUTOR", "n": 6},
    ]


def always_paris(data: dict) -> str:
    return "Paris"


def test_spec_sql_query_finds_exactly_the_zero_accuracy_traces(ray_local, tmp_path):
    result = evaluate(
        [
            Datapoint({"country": "France"}, "Paris", task_id="france"),
            Datapoint({"country": "Japan"}, "Tokyo", task_id="japan"),
        ],
        always_paris,
        {"accuracy": accuracy},
        group_name="capitals",
        trials=3,
        output=tmp_path,
        quiet=True,
    )
    query = f"""
        SELECT trace_id, input, output
        FROM spans
        WHERE span_type = 'EXECUTOR'
          AND evaluation_id = '{result.evaluation_id}'
          AND trace_id IN (
            SELECT trace_id FROM spans
            WHERE span_type = 'EVALUATOR'
              AND name = 'accuracy'
              AND attributes['lasagna.span.output'] = '0'
          )
    """
    rows = sql(tmp_path, query).to_pylist()
    zero = {t["trace_id"] for t in result.trials if t["scores"]["accuracy"] == 0}
    assert len(zero) == 3 and {r["trace_id"] for r in rows} == zero
    assert all(r["output"] == "Paris" and "Japan" in r["input"] for r in rows)
    stored = sql(
        tmp_path, "SELECT trace_id FROM evaluation_trials WHERE scores['accuracy'] = 0"
    ).column("trace_id")
    assert set(stored.to_pylist()) == zero


async def slow_echo(data):
    await asyncio.sleep(0.05)
    return data


class Echo:
    """A callable-class executor: built once per actor."""

    def __init__(self):
        self.pid = os.getpid()
        self.calls = 0

    def __call__(self, data):
        self.calls += 1
        return {"data": data, "pid": self.pid, "calls": self.calls}


def test_async_and_class_executors_dict_scores_and_failures(ray_local, tmp_path):
    data = [Datapoint(i, target=i) for i in range(12)]
    result = evaluate(
        data,
        slow_echo,
        {"pr": lambda o, t: {"precision": o == t, "recall": 0.5}, "none": lambda o, t: None},
        output=tmp_path,
        concurrency=4,
        quiet=True,
        resources={"num_cpus": 0.25},
    )
    assert result.averages["precision"] == 1.0 and result.averages["recall"] == 0.5
    assert all(t["scores"]["none"] is None for t in result.trials) and result.n_errors == 0
    assert [t["task_id"] for t in result.trials] == [str(i) for i in range(12)]

    def picky(output, target):
        if output["data"] == 3:
            raise ValueError("three is not scored")
        return output["data"] == target

    result = evaluate(
        data,
        Echo,
        {"exact": picky},
        output=tmp_path,
        quiet=True,
        resources={"num_cpus": 0.25},
        trials=2,
    )
    assert result.n_trials == 24 and result.n_errors == 2
    failed = {(t["task_id"], t["error_type"]) for t in result.errors}
    assert failed == {("3", "ValueError")}
    outputs = [t["output"] for t in result.trials]
    assert len({o.split('"pid": ')[1].split(",")[0] for o in outputs}) == 1  # one actor
    calls = sorted(int(o.rsplit('"calls": ', 1)[1].rstrip("}")) for o in outputs)
    assert calls == list(range(1, 25))  # one instance served every trial


def test_refused_before_anything_runs(tmp_path):
    with pytest.raises(Exception, match="no datapoint"):
        evaluate([], capital_of_country, {"accuracy": accuracy}, output=tmp_path)
    with pytest.raises(Exception, match="used again"):
        evaluate(
            [Datapoint(1, task_id="a"), Datapoint(2, task_id="a")],
            capital_of_country,
            {"accuracy": accuracy},
            output=tmp_path,
        )
    assert not any(Path(tmp_path).iterdir())


def test_a_call_the_running_ray_cannot_place_is_refused_not_left_waiting(ray_local, tmp_path):
    """On a Ray that is up already (a cluster, or the caller's), the engine checks the call's
    pools against its resources: a 3-CPU task on this 2-CPU Ray would wait forever."""
    from lasagna.errors import UserError

    with pytest.raises(UserError, match="Ray would wait forever") as err:
        evaluate(
            [Datapoint({"country": "France"}, "Paris")],
            capital_of_country,
            {"accuracy": accuracy},
            resources={"num_cpus": 3},
            output=tmp_path,
            quiet=True,
        )
    assert "executor tasks (resources=): 1 x 3 CPU" in err.value.render()


class AsksForAModel:
    """A class executor whose model is known only when it runs (`lasagna.model()`)."""

    def __call__(self, data):
        import lasagna

        spec = {"backend": "transformers", "max_tokens": 4}
        return lasagna.model("packaged:SmolLM2-135M-Instruct", **spec).chat(str(data))


def test_an_engine_that_can_never_start_beside_the_executor_ends_the_evaluation(
    ray_local, tmp_path
):
    """Two 1-CPU executor actors hold this 2-CPU Ray; the model they ask for needs an engine
    of 0.5 CPU that can never start: the watchdog says what holds what and ends it."""
    from lasagna.engine.watchdog import TrialStalled

    with pytest.raises(TrialStalled) as err:
        evaluate(
            [Datapoint(i, i) for i in range(4)],
            AsksForAModel,
            {"same": lambda output, target: output == target},
            actors=2,
            resources={"num_cpus": 1},
            output=tmp_path,
            quiet=True,
            stall_timeout=2,
        )
    reason = err.value.reason
    assert "waits for ModelServer {CPU: 0.5}" in reason
    assert "held by 2 ExecutorActor {CPU: 1}" in reason
    assert "evaluate()'s executor less (resources={'num_cpus': 0.5})" in reason
    import ray

    deadline = time.monotonic() + 60  # its actors and the engine's are ended (Ray frees
    while ray.available_resources().get("CPU", 0.0) < 2.0:  # their CPUs a moment later)
        assert time.monotonic() < deadline, ray.available_resources()
        time.sleep(0.2)


class AsksForAFolderThatIsNoModel:
    """An executor whose model folder exists (so `lasagna.model()` accepts it) but holds no
    model: its load fails on the run's shared server."""

    def __init__(self, folder: str):
        self.folder = folder

    def __call__(self, data):
        import lasagna

        return lasagna.model(self.folder, backend="transformers", max_tokens=4).chat(str(data))


def test_a_model_that_cannot_load_fails_its_trials_with_the_reason(ray_local, tmp_path):
    """Each trial records the load's reason in one line (not Ray's wrapper with the remote
    traceback), and the model is tried once, not once per trial."""
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    executor = AsksForAFolderThatIsNoModel(str(folder))
    servers_before = model_servers_ever()
    result = evaluate(
        [Datapoint(i, i) for i in range(6)],
        lambda data: executor(data),
        {"same": lambda output, target: output == target},
        output=tmp_path / "out",
        quiet=True,
    )
    assert result.n_errors == 6
    for trial in result.errors:
        assert trial["error_type"] == "ModelLoadError", trial
        assert trial["error"].startswith("executor: ModelLoadError: model '"), trial["error"]
        assert "\n" not in trial["error"] and "RayTaskError" not in trial["error"]
    assert model_servers_ever() == servers_before + 1


def model_servers_ever() -> int:
    """ModelServer actors this Ray has created, live or dead (its control store's table)."""
    from ray._private import state

    return sum(a.get("ActorClassName") == "ModelServer" for a in state.actors().values())


def make_killer(marker: str):
    def executor(data):
        time.sleep(0.01)
        if data == 7 and not os.path.exists(marker):
            Path(marker).write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return data

    return executor


def test_sigkilled_worker_mid_run_loses_and_duplicates_nothing(ray_local, tmp_path):
    marker = str(tmp_path / "killed")
    data = [Datapoint(i, target=i) for i in range(40)]
    result = evaluate(
        data,
        make_killer(marker),
        {"same": lambda o, t: o == t},
        output=tmp_path / "out",
        concurrency=2,
        quiet=True,
        resources={"num_cpus": 0.25},
    )
    assert os.path.exists(marker)  # a worker really died mid-batch
    keys = [(t["task_id"], t["trial_index"]) for t in result.trials]
    assert len(keys) == len(set(keys)) == 40
    assert result.n_errors == 0 and result.averages == {"same": 1.0}
    n = sql(tmp_path / "out", "SELECT count(DISTINCT trace_id) n FROM spans").to_pylist()
    assert n[0]["n"] == 40


def test_file_subsets_keep_task_ids_through_evaluate(ray_local, tmp_path):
    import json

    from lasagna.evaluation import Dataset

    path = tmp_path / "caps.jsonl"
    rows = [{"question": f"q{i}", "answers": [f"a{i}"]} for i in range(6)]
    rows[2]["id"] = "special"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    subset = Dataset.from_file(path).shuffle(seed=3).take(4)
    result = evaluate(
        subset, str.upper, {"len": lambda o, t: len(o)}, output=tmp_path / "o", quiet=True
    )
    expected = {"special" if p.data == "q2" else f"row{int(p.data[1:]) + 1}" for p in subset}
    assert {t["task_id"] for t in result.trials} == expected
    for t in result.trials:
        assert t["output"] == t["data"].upper()


class KillOnce:
    """A class executor whose actor SIGKILLs itself once, mid-batch."""

    marker = ""

    def __init__(self):
        self.pid = os.getpid()

    def __call__(self, data):
        if data == 5 and not os.path.exists(self.marker):
            Path(self.marker).write_text(str(self.pid))
            os.kill(self.pid, signal.SIGKILL)
        return self.pid


def test_sigkilled_actor_is_restarted_and_its_batch_rerun(ray_local, tmp_path):
    marker = str(tmp_path / "killed")
    executor = type("KillOnceHere", (KillOnce,), {"marker": marker})
    result = evaluate(
        [Datapoint(i, target=i) for i in range(12)],
        executor,
        {"ok": lambda o, t: True},
        output=tmp_path / "out",
        quiet=True,
        resources={"num_cpus": 0.25},
    )
    killed = int(Path(marker).read_text())
    keys = [(t["task_id"], t["trial_index"]) for t in result.trials]
    assert len(keys) == len(set(keys)) == 12 and result.n_errors == 0
    assert int(result.trials[5]["output"]) != killed  # scored by the restarted actor


CLIENT = None  # set by the test: a global API client, as in the spec's executor


def capital_by_api(data: dict) -> str:
    response = CLIENT.chat.completions.create(
        model="tiny", messages=[{"role": "user", "content": f"Capital of {data['country']}?"}]
    )
    return response.choices[0].message.content or ""


def test_spec_executor_with_a_global_openai_client_runs_on_workers(ray_local, tmp_path):
    """The spec's executor shape (a module-level client) on Ray workers, against a local
    endpoint that answers like the API; its calls are LLM spans under the EXECUTOR."""
    from fake_openai import chat_completion, serve

    openai = pytest.importorskip("openai", reason="the openai SDK is not installed")
    global CLIENT

    def answer(asked):
        country = asked["messages"][0]["content"].removeprefix("Capital of ").rstrip("?")
        return 200, chat_completion(CAPITALS[country], 7, 1), {}

    server = serve(answer)
    CLIENT = openai.OpenAI(base_url=f"http://127.0.0.1:{server.server_port}/v1", api_key="k")
    try:
        result = evaluate(
            [
                Datapoint({"country": "France"}, "Paris", task_id="france"),
                Datapoint({"country": "Japan"}, "Tokyo", task_id="japan"),
            ],
            capital_by_api,
            {"accuracy": accuracy},
            trials=2,
            output=tmp_path,
            quiet=True,
            resources={"num_cpus": 0.25},
        )
    finally:
        server.shutdown()
        CLIENT = None
    assert result.n_errors == 0 and result.averages == {"accuracy": 1.0}
    rows = sql(
        tmp_path,
        "SELECT p.span_type parent, s.attributes['gen_ai.usage.input_tokens'] t "
        "FROM spans s JOIN spans p ON s.parent_span_id = p.span_id WHERE s.span_type = 'LLM'",
    ).to_pylist()
    assert rows == [{"parent": "EXECUTOR", "t": "7"}] * 4
    tokens = sql(tmp_path, "SELECT sum(tokens_in) t FROM evaluation_trials").to_pylist()
    assert tokens == [{"t": 28}]


def _hangs_on_two(data: int) -> int:
    if data == 2:
        time.sleep(120)
    if data == 3:
        raise TimeoutError("the executor's own timeout")  # not evaluate()'s: reported as is
    return data


async def _hangs_on_two_async(data: int) -> int:
    if data == 2:
        await asyncio.sleep(120)
    return data


class HangsOnTwo:
    """Serves one call at a time: after its hung call, the rest run on a fresh instance."""

    def __init__(self):
        self.pid, self.made = os.getpid(), time.monotonic()

    def __call__(self, data: int) -> tuple[int, float]:
        if data == 2:
            time.sleep(120)
        return data, self.made


def _first(output, target) -> float:
    return float((output[0] if isinstance(output, tuple) else output) == target)


@pytest.mark.parametrize("executor", [_hangs_on_two, _hangs_on_two_async, HangsOnTwo])
def test_a_call_past_its_timeout_fails_its_trial_and_the_rest_run(ray_local, tmp_path, executor):
    """A hung executor call (an API without a timeout) hung evaluate() for ever."""
    result = evaluate(
        data=[Datapoint(data=i, target=i, task_id=f"t{i}") for i in range(6)],
        executor=executor,
        evaluators={"same": _first},
        output=tmp_path,
        timeout=1.5,
        concurrency=1,
        quiet=True,
    )
    errors = {t["task_id"]: t["error"] for t in result.trials if t["error"]}
    ended = "cancelled" if executor is _hangs_on_two_async else "abandoned"
    assert errors.pop("t2") == (
        f"executor: ExecutorTimeout: no output within 1.5 s (evaluate(timeout=1.5)); the call "
        f"was {ended}"
    )
    if executor is _hangs_on_two:
        assert errors == {"t3": "executor: TimeoutError: the executor's own timeout"}
    else:
        assert errors == {}
    assert sorted(t["task_id"] for t in result.trials) == [f"t{i}" for i in range(6)]
    if executor is HangsOnTwo:  # rows after the hung call ran on a new instance
        made = {t["task_id"]: eval(t["output"])[1] for t in result.trials if t["output"]}
        assert made["t0"] == made["t1"] and made["t3"] == made["t5"] != made["t0"]
