"""The parts that keep a run honest, each alone and without Ray: the heartbeat off a
terminal, the workers' model-loading lines kept off the terminal, the cause under Ray
Data's wrapper, and the stall watchdog's decisions on a given cluster state."""

from __future__ import annotations

import io
import threading
import time

import pytest
from rich.console import Console

from lasagna.engine import run_log
from lasagna.engine.cluster_view import ClusterView, counted
from lasagna.engine.failures import failure_reason
from lasagna.engine.watchdog import StallWatchdog, TrialStalled
from lasagna.engine.worker_logs import is_noise, split_batch
from lasagna.stages.busy import computing
from lasagna.stages.progress import HEARTBEAT_ENV, StageProgress


def test_a_long_stage_off_a_terminal_prints_a_heartbeat(monkeypatch) -> None:
    monkeypatch.setenv(HEARTBEAT_ENV, "0.2")
    out = io.StringIO()
    with StageProgress("encode corpus", 100, Console(file=out, width=100), "passages") as bar:
        bar.advance(10)
        time.sleep(0.9)
    lines = out.getvalue().splitlines()
    beats = [ln for ln in lines if "after" in ln]
    assert len(beats) >= 3, lines
    assert "10/100 passages after" in beats[0] and "/s, about" in beats[0] and "left" in beats[0]
    assert "100 passages in" in lines[-1] or "10/100 passages in" in lines[-1]


def test_no_heartbeat_on_a_terminal_or_when_hidden(monkeypatch) -> None:
    monkeypatch.setenv(HEARTBEAT_ENV, "0.1")
    for terminal, show in ((True, True), (False, False)):
        out = io.StringIO()
        console = Console(file=out, width=100, force_terminal=terminal)
        with StageProgress("x", 5, console, show=show):
            time.sleep(0.35)
        assert " after " not in out.getvalue()


VLLM_INFO = "INFO 12-04 19:55:01 [core.py:61] Initializing a V1 LLM engine (v0.32.0) with config"
BAR = "Loading weights: 100%|██████████| 272/272 [00:00<00:00, 1520.11it/s]"
HF_BAR = "model.safetensors:  45%|████▌     | 9.1M/20.2M [00:01<00:01, 8.1MB/s]"


@pytest.mark.parametrize(
    "line", [VLLM_INFO, f"(EngineCore_DP0 pid=8) {VLLM_INFO}", BAR, HF_BAR, "Converting GGUF"]
)
def test_model_loading_lines_are_noise(line: str) -> None:
    assert is_noise(line)


@pytest.mark.parametrize(
    "line",
    [
        "WARNING 12-04 19:55:01 [cpu.py:10] Pin memory is not supported",
        "ERROR 12-04 19:55:01 [core.py:61] engine died",
        "my executor says hi",
        "ValueError: 50% of rows | failed",
    ],
)
def test_warnings_errors_and_a_users_prints_are_kept(line: str) -> None:
    assert not is_noise(line)


def test_noise_goes_to_the_run_log_and_the_rest_through(tmp_path, monkeypatch) -> None:
    from lasagna.engine.worker_logs import _wrap

    monkeypatch.setenv(run_log.ENV, str(tmp_path / "run.log"))
    shown: list[dict] = []
    batch = {"lines": [VLLM_INFO, "a real warning", BAR], "pid": 7, "actor_name": "ModelServer"}
    _wrap(shown.append)(batch)
    _wrap(shown.append)({"lines": [BAR], "pid": 7})
    assert [b["lines"] for b in shown] == [["a real warning"]]
    logged = (tmp_path / "run.log").read_text()
    assert f"(ModelServer pid=7) {VLLM_INFO}" in logged and logged.count("Loading weights") == 2
    assert split_batch({"lines": ["x"]}) == ({"lines": ["x"]}, [])


REMOTE = """ray::MapBatches(JudgeStage)() (pid=123, ip=127.0.0.1)
Traceback (most recent call last):
  File "/x/judge.py", line 9, in judge
    raise ValueError("case 'b' has no answer to score")
ValueError: case 'b' has no answer to score

The above exception was the direct cause of the following exception:

ray::MapBatches(JudgeStage)() (pid=123, ip=127.0.0.1)
ray.exceptions.UserCodeException: UDF failed to process a data block."""


class UserCodeException(Exception):  # Ray Data's wrapper, by name
    pass


class RayTaskError(Exception):
    def __init__(self, text: str, cause: BaseException):
        super().__init__(text)
        self.cause = cause


def test_the_reason_is_the_workers_error_not_ray_datas_wrapper() -> None:
    err = RayTaskError(REMOTE, UserCodeException("UDF failed to process a data block."))
    assert failure_reason(err) == "ValueError: case 'b' has no answer to score"


def test_a_stalled_trial_says_the_watchdogs_line() -> None:
    assert failure_reason(TrialStalled("stalled: trial 1/1 x: no progress")) == (
        "stalled: trial 1/1 x: no progress"
    )


def held_view() -> ClusterView:
    """Two engines hold both CPUs; a judge actor asking half a CPU waits."""
    return ClusterView(
        capacity=[{"CPU": 2.0, "memory": 1e9}],
        held=[{"CPU": 2.0}],
        demand=[({"CPU": 0.5}, 1), ({"CPU": 0.1}, 3)],
        waiting=[("MapWorker(MapBatches(JudgeStage))", {"CPU": 0.5})],
        holders=[("ModelServer", {"CPU": 1.0}), ("ModelServer", {"CPU": 1.0})],
    )


def run_dog(view: ClusterView, quiet_periods: int = 10, wait_s: float = 3.0) -> list[str]:
    said: list[str] = []
    dog = StallWatchdog("trial 1/2 rag on sample", 0.2, said.append, quiet_periods, lambda: view)
    with pytest.raises(TrialStalled) as caught, dog:  # the main thread: woken by a signal
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            time.sleep(0.05)
    said.append(caught.value.reason)
    return said


def test_a_demand_that_cannot_fit_ends_the_trial_after_a_second_period() -> None:
    said = run_dog(held_view())
    first = said[0]
    assert first.startswith("stall: trial 1/2 rag on sample: no progress for")
    assert "MapWorker(MapBatches(JudgeStage)) {CPU: 0.5}" in first
    assert "1x{CPU: 0.5}, 3x{CPU: 0.1}" in first and "held by 2 ModelServer {CPU: 1}" in first
    assert "capacity {CPU: 2}, free {CPU: 0}" in first and "cannot fit" in first
    assert len(said) == 3 and "ending the trial" in said[1]
    assert said[2].startswith("stalled: ") and "fix: lower num_cpus" in said[2]


def test_a_demand_that_fits_is_only_reported_until_many_quiet_periods() -> None:
    view = held_view()
    view.held = [{"CPU": 1.0}]  # one engine: the judge's half CPU fits
    said = run_dog(view, quiet_periods=4)
    reports = [s for s in said if "it fits (a model may be loading)" in s]
    assert len(reports) == 3 and "ending the trial" in said[3], said
    assert "--stall-timeout" in said[-1]


def test_progress_keeps_the_watchdog_quiet() -> None:
    said: list[str] = []
    dog = StallWatchdog("t", 0.3, said.append, 2, held_view)
    with dog:
        for _ in range(15):
            dog.heard("judge+score", 1, 10, "rows", 0.1, False)
            time.sleep(0.05)
    assert said == [] and dog.last_stage == "judge+score"


def test_an_actor_that_computes_is_progress_one_that_waits_is_not() -> None:
    """A quiet stage whose model actor burns CPU (a long batch, a model loading) is never
    reported or ended; one whose actors use no CPU (a hung call) is, as before."""
    view = held_view()
    view.held = [{"CPU": 1.0}]  # the demand fits: only quiet periods could end it
    used = {"cpu:01000000:a1": 0.0}

    def working() -> dict[str, float]:
        used["cpu:01000000:a1"] += 1.0  # a core's worth between two reads
        return dict(used)

    said: list[str] = []
    dog = StallWatchdog("t", 0.1, said.append, 2, lambda: view, actors_cpu=working)
    with dog:
        time.sleep(1.5)  # 15 periods: long past the 2 quiet periods that end a trial
    assert said == [] and dog.reason is None
    said = []
    idle = StallWatchdog("t", 0.2, said.append, 2, lambda: view, actors_cpu=lambda: dict(used))
    with pytest.raises(TrialStalled), idle:
        time.sleep(3.0)
    assert "ending the trial" in said[-1]


def test_computing_needs_a_share_of_a_core_over_the_period() -> None:
    before = {"a": 10.0, "b": 3.0}
    now = {"a": 10.2, "b": 8.0, "c": 6.0}  # c started meanwhile: all it used counts
    assert computing(before, now, 10.0) == ["b", "c"]  # a: 0.02 of a core
    assert computing(before, now, 30.0) == []  # over 30 s, 5 s is a sixth of a core
    assert computing(now, now, 5.0) == [] and computing({}, {}, 0.0) == []


def test_a_trial_in_another_thread_is_ended_too() -> None:
    said: list[str] = []
    ended: list[BaseException] = []

    def trial() -> None:
        dog = StallWatchdog("t", 0.2, said.append, 10, held_view)
        try:
            with dog:
                for _ in range(100):
                    time.sleep(0.05)
        except TrialStalled as err:
            ended.append(err)

    thread = threading.Thread(target=trial)
    thread.start()
    thread.join(timeout=10)
    assert ended and not thread.is_alive()


def test_counted_groups_the_same_actors() -> None:
    items = [("A", {"CPU": 1.0}), ("A", {"CPU": 1.0}), ("B", {"GPU": 1.0, "memory": 5.0})]
    assert counted(items) == "2 A {CPU: 1}, B {GPU: 1}"


def test_the_resume_command_is_the_command_as_typed_with_resume() -> None:
    from lasagna.cli.benchmark import resume_command

    argv = ["benchmark", "run", "my sweep.yaml", "--output", "out", "--stall-timeout", "2"]
    assert resume_command(argv) == (
        "lasagna benchmark run 'my sweep.yaml' --output out --stall-timeout 2 --resume"
    )
    assert resume_command([*argv, "--resume"]).count("--resume") == 1


def test_the_runs_log_is_copied_into_the_run_folder(tmp_path, monkeypatch) -> None:
    from lasagna.results.run_writer import new_run_id, write_run

    run_id = new_run_id()
    with run_log.run_log(tmp_path, run_id) as path:
        run_log.write_traceback("trial 1/1 x failed", ValueError("boom"))
        files = run_log.run_files(tmp_path, run_id)
    assert path == tmp_path / ".logs" / f"{run_id}.log" and run_log.current() is None
    folder = write_run(tmp_path, run_id, {"log": run_log.IN_RUN}, [], files=files)
    run_log.discard(tmp_path, run_id)
    text = (tmp_path / run_id / "run.log").read_text()
    assert "trial 1/1 x failed" in text and "ValueError: boom" in text
    assert folder.endswith(run_id) and not (tmp_path / ".logs").exists()


def test_a_stalled_trial_that_stops_the_command_is_one_line_and_exit_1(monkeypatch, capsys):
    """Commands that stop at the first failure (calibrate) show a stall as its reason."""
    import argparse

    from lasagna import cli
    from lasagna.engine.watchdog import TrialStalled

    def stalled(args):
        raise TrialStalled("stalled: trial 1/1 waits for {CPU: 4}")

    parser = argparse.ArgumentParser()
    parser.set_defaults(handler=stalled)
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    assert cli.main([]) == 1
    err = capsys.readouterr().err
    assert "error: stalled: trial 1/1 waits for {CPU: 4}" in err and "Traceback" not in err


def test_a_loop_that_checks_for_a_stop_takes_it_and_no_thread_is_woken() -> None:
    """evaluate()'s rows wait on Ray in bounded waits and check lasagna.stages.stop between
    them: the watchdog's request ends the loop there, no signal interrupts Ray's code (the
    signal's TrialStalled would escape this `raises`)."""
    from lasagna.stages import stop

    said: list[str] = []
    dog = StallWatchdog("t", 0.2, said.append, 10, held_view)
    with pytest.raises(stop.StopRequested) as caught, dog:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            time.sleep(0.05)
            stop.check()
    assert caught.value.reason.startswith("stalled: t: no progress")
    assert dog.reason == caught.value.reason
    stop.check()  # the request ended with its watchdog


def test_a_wake_up_still_on_its_way_when_the_trial_ends_is_taken_not_delivered() -> None:
    """Under load the watchdog's SIGUSR2 can reach the main thread only after the trial
    ended and the previous (default) handler is back, and the default ends the process:
    that killed a test process. The handler is put back only after a pending wake-up is
    taken."""
    import signal

    from lasagna.engine.watchdog import WAKE

    dog = StallWatchdog("t", 60, lambda _: None, 10, held_view)
    main = threading.main_thread().ident or 0
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {WAKE})  # it stays on its way
    try:
        with dog:
            signal.pthread_kill(main, WAKE)  # sent as the trial ends
        assert WAKE not in signal.sigpending(), "the default handler would end the process"
    finally:
        signal.sigtimedwait({WAKE}, 0)  # this test's own clean-up, whatever happened
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
    assert signal.getsignal(WAKE) == signal.SIG_DFL  # the previous handler is back
