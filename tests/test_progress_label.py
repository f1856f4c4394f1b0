"""The name a trial's progress line carries (lasagna.engine.trials.stage_label)."""

from __future__ import annotations

import pytest

from lasagna.engine.trials import stage_label


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
