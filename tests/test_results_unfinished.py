"""`results list` names the runs that wrote no run folder (lasagna.results.status)."""

from __future__ import annotations

import time

from lasagna.results.status import RunStatus, unfinished_lines


def _stopped(output, run_id: str, command: str, state: str, done: int) -> None:
    status = RunStatus(output, run_id, "sweep", 4, command=command).start()
    for i in range(done):
        status.trial_finished(f"key{i}", 1.0)
    status.finish(None, state, "interrupted (^C)")
    time.sleep(0.01)  # the next run starts later (newest first)


def test_an_interrupted_run_is_listed_with_its_resume_command(tmp_path) -> None:
    _stopped(tmp_path, "20261208-010000-aaaaaa", "lasagna benchmark run s.yaml", "interrupted", 2)
    running = RunStatus(tmp_path, "20261208-020000-bbbbbb", "sweep", 3, command="lasagna x")
    running.start().trial_finished("k", 1.0)
    assert unfinished_lines(tmp_path) == [
        "running: 20261208-020000-bbbbbb (lasagna x), 1 of 3 trial(s) done; watch it: lasagna view",
        "interrupted: 20261208-010000-aaaaaa (lasagna benchmark run s.yaml), 2 of 4 trial(s) "
        "checkpointed; to go on: lasagna benchmark run s.yaml --resume",
    ]


def test_a_run_gone_on_with_is_not_listed(tmp_path) -> None:
    _stopped(tmp_path, "20261208-010000-aaaaaa", "lasagna benchmark run s.yaml", "interrupted", 2)
    resumed = RunStatus(tmp_path, "20261208-020000-bbbbbb", "sweep", 4,
                        command="lasagna benchmark run s.yaml --resume")  # fmt: skip
    resumed.start().finish("20261208-020000-bbbbbb")
    assert unfinished_lines(tmp_path) == []
    assert unfinished_lines(tmp_path / "nothing") == []
