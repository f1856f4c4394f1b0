"""Soak at CI size: scripts/bench_soak.py runs one sweep of small BM25 trials, kills it
(SIGKILL) at seeded random moments and resumes until done, then runs it uninterrupted in one
driver process. The killed sweep runs in driver processes of 3 trials
(`--trials-per-driver`), so its rows are compared with one driver's; the first kill hits one
driver process alone (as the OOM killer does: the command says which trials and `--resume`,
exit 1), the second the whole process group. A killed driver leaves no run folder and no
process of its Ray; each `--resume` says what it restored; the final run holds every trial
exactly once, equal to the uninterrupted run, with no temporary debris. The full size (200
trials, RSS after 10 and 200) is the script's default. This is the suite's
driver-killed-mid-sweep test too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_faults import finished_checkpoints, temp_leftovers

pytestmark = [pytest.mark.slow, pytest.mark.soak]

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_soak.py"
TRIALS = 6
PER_DRIVER = 3  # the killed sweep runs in driver processes: kills land in them too


def test_soak_kills_and_resumes_until_every_trial_exists_once(tmp_path):
    report_file = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--trials", str(TRIALS), "--kills", "2", "--seed", "1"]
        + ["--trials-per-driver", str(PER_DRIVER)]
        + ["--workdir", str(tmp_path / "w"), "--json", str(report_file)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(report_file.read_text())
    assert report["kills"] >= 1 and report["rounds"] == report["kills"] + 1
    # the first kill hit one driver process alone: the command ended by itself with exit 1
    assert report["killed"][0] == "part" and report["exit_codes"][0] == 1, report
    assert sum(report["new_checkpoints_per_round"]) == TRIALS  # no trial ran twice
    assert all(report["new_checkpoints_per_round"]), "every kill comes after a new checkpoint"
    assert report["run_folders_after_kills"] == 0, "a killed driver must not leave a run folder"
    assert report["survivors_per_round"] == [0] * (report["rounds"] + 1), "stray processes"
    assert report["exactly_once"] and report["same_keys"] and report["rows_equal"]
    soak = tmp_path / "w" / "soak"
    assert len(finished_checkpoints(soak)) == TRIALS  # one checkpoint per trial, no more
    assert not temp_leftovers(soak)
    runs = [p for p in soak.iterdir() if p.is_dir() and not p.name.startswith(".")]
    manifest = json.loads((sorted(runs)[-1] / "manifest.json").read_text())
    assert len(manifest["trials"]) == TRIALS
    assert report["restored"] == len(manifest["restored_trials"])
    # every round after a kill said what it restored: the checkpoints of the rounds before
    logs = sorted((tmp_path / "w").glob("soak-*.log"), key=lambda p: int(p.stem.split("-")[1]))
    done = 0
    for log, new in zip(logs, report["new_checkpoints_per_round"], strict=True):
        said = " ".join(log.read_text().split())
        if done:
            assert f"restored {done} finished trial(s) of {TRIALS}" in said, said[-2000:]
        if log == logs[0]:  # its driver process was killed: the message says what to do
            assert "ended without a report (exit code -9: killed" in said, said[-2000:]
            assert "run the same command with --resume" in said and "Traceback" not in said
        if new and TRIALS - done > PER_DRIVER:  # it ran, with more than one driver takes
            parts = -(-(TRIALS - done) // PER_DRIVER)
            assert f"{TRIALS - done} trials run in {parts} driver processes" in said, said[-2000:]
        done += new
