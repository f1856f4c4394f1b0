"""The example plugin's judge and track run like built-in ones: each from the command line
and from a sweep, on Ray, and leaderboard, compare, SQL and the report read their results
with no change outside the plugin's package (tests/plugins)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "tests" / "plugins"
TRACK_SWEEP = """\
benchmarks:
  - {{path: {sample}}}  # as the command line names it: one comparability group
retrievers:
  - {{kind: bm25, name: bm25, top_k: 10}}
extractors:
  - {{kind: overlap, name: overlap-40, max_words: 40}}
resources:
  extract: {{num_cpus: 0.25, actors: 1, batch_size: 8}}
"""
JUDGE_SWEEP = """\
benchmarks:
  - {path: cases.jsonl}
judges:
  - {benchmark: answer-length}
  - {benchmark: answer-length, name: strict, parameters: {threshold: 0.9}}
"""
CASES = [
    {"id": "short", "input": "Capital of France?", "actual_output": "Paris."},
    {"id": "fine", "input": "Capital of France?", "actual_output": "It is Paris, in France."},
    {"id": "yes", "input": "Is it?", "actual_output": "yes"},
]


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> dict[str, dict]:
    work = tmp_path_factory.mktemp("plugin_runs")
    sample = ROOT / "lasagna" / "sample" / "sample.jsonl"
    (work / "track.yaml").write_text(TRACK_SWEEP.format(sample=sample))
    (work / "judges.yaml").write_text(JUDGE_SWEEP)
    (work / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env |= {
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(EXAMPLE), str(ROOT / "tests")]),
        "LASAGNA_CONFIGS": str(EXAMPLE / "configs"),
        "LASAGNA_CACHE": str(work / "cache"),
        "COLUMNS": "200",
    }
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "plugin_session.py"), str(work)],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    done = json.loads((work / "session.json").read_text())
    names = [
        "cli_track",
        "cli_judge",
        "sweep_track",
        "sweep_judges",
        "compare_runs",
        "leaderboard",
        "compare",
        "sql",
        "report",
    ]
    return {"work": {"path": work}} | dict(zip(names, done, strict=True))


def test_the_plugin_track_and_judge_run_from_the_cli_and_from_sweeps(session):
    for name in ("cli_track", "cli_judge", "sweep_track", "sweep_judges"):
        ran = session[name]
        assert ran["code"] == 0, (name, ran["stderr"][-2000:])
        assert "wrote run" in ran["stderr"] + ran["stdout"]
    track = session["cli_track"]["stdout"]
    assert "local/sample@8e7c0fba4acb · extractive · pooled gold" in track  # the group title
    assert "overlap-10" in track
    judge = session["cli_judge"]["stdout"]
    assert "answer-length" in judge and "0.5556" in judge  # (1/3 + 1 + 1/3) / 3
    assert "judged@10" in session["sweep_track"]["stdout"]  # the plugin metric, on bm25


def test_leaderboard_compare_sql_and_report_read_the_plugin_results(session):
    board = session["leaderboard"]
    assert board["code"] == 0, board["stderr"]
    text = " ".join(board["stdout"].split())
    assert "extractive" in text and "extract_f1" in text and "answer_length_score" in text
    assert "strict" in text
    # the judges' sweep run (latest) within itself; the track's command-line run vs its sweep
    for name, metric in (("compare", "answer_length_score"), ("compare_runs", "extract_f1")):
        assert session[name]["code"] == 0, session[name]["stderr"]
        assert metric in session[name]["stdout"]
    sql = session["sql"]
    assert sql["code"] == 0, sql["stderr"]
    assert "overlap-40" in sql["stdout"] and "answer-length" in sql["stdout"]
    report = session["report"]
    assert report["code"] == 0, report["stderr"]
    html = (session["work"]["path"] / "report.html").read_text()
    assert "extract_f1" in html and "answer_length_score" in html
