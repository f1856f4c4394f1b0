"""The name and rate of a trial's progress line (lasagna.engine.trials, stages.progress)."""

from __future__ import annotations

import pytest

from lasagna.engine.trials import stage_label
from lasagna.stages.progress import heartbeat_line, per_second


@pytest.mark.parametrize(
    ("timing", "judged", "label"),
    [
        ("search_and_score", False, "search+score"),
        ("generate_and_score", False, "generate+score"),
        # a judged generation trial's rows arrive only once judged: say so
        ("generate_and_score", True, "generate+judge+score"),
        ("judge", True, "judge"),
    ],
)
def test_a_judged_generation_trial_says_it_judges(timing: str, judged: bool, label: str) -> None:
    assert stage_label(timing, judged) == label


@pytest.mark.parametrize(
    ("done", "secs", "shown"),
    [(26, 4.8, "5.4/s"), (4, 158.4, "0.025/s"), (4, 48.0, "0.083/s"), (0, 30.0, "0.0/s")],
)
def test_a_slow_rate_is_not_shown_as_nothing(done: int, secs: float, shown: str) -> None:
    assert per_second(done, secs) == shown
    if done:
        assert shown in heartbeat_line("generate+score", done, 20, "rows", secs)
