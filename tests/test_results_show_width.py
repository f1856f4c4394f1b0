"""`lasagna results show` fits 100 columns whatever the terminal: judged generation runs
(long system names, judge scores next to EM/F1) pick their columns from the catalog and say
what they left out; group titles say where the documents came from once."""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pytest
from rich.console import Console
from test_results_store import BENCH

from lasagna.results import TrialResult, write_run
from lasagna.results.leaderboard import group_title
from lasagna.results.show import render_run
from lasagna.results.store import open_run

JUDGED = "rag-smollm2+faithfulness:SmolLM2-135M-Instruct+relevancy:SmolLM2-135M-Instruct"
GENERATION = ("em", "f1", "has_ans_f1", "no_ans_em", "faithfulness_score", "relevancy_score")
JUDGE = ("faithfulness_score", "pass_rate", "claims_count", "judgments_per_s")


def _trial(key: str, track: str, system: str, metrics: tuple[str, ...], bench: dict):
    cols = {m: pa.array([0.25, 0.75], pa.float64()) for m in metrics}
    return TrialResult(
        key=key,
        comparability_key=f"{track}-{key}",
        track=track,  # type: ignore[arg-type]
        system=system,
        config={"kind": track, "name": system},
        benchmark=bench,
        metrics={m: 0.5 for m in metrics},
        rows=pa.table({"id": ["q1", "q2"], **cols}),
    )


@pytest.fixture
def judged_run(tmp_path: Path):
    cases = BENCH | {"name": "local/cases@cccccccccccc", "corpus_provenance": None}
    write_run(
        tmp_path,
        "A",
        {},
        [
            _trial("g" * 20, "generation", JUDGED, GENERATION, BENCH),
            _trial("j" * 20, "judge", "faithfulness:SmolLM2-135M-Instruct", JUDGE, cases),
        ],
    )
    return open_run("A", tmp_path)


def test_judged_run_fits_100_columns_on_a_wide_terminal(judged_run) -> None:
    out = io.StringIO()
    render_run(judged_run, Console(file=out, width=200))
    text = out.getvalue()
    lines = text.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 100
    assert "…" not in text
    gen = text[: text.index("local/cases")]
    header = next(line for line in gen.splitlines() if line.strip().startswith("system"))
    assert header.split()[1:] == ["rows", "em", "f1", "faithfulness_score", "seconds", "trial"]
    assert "not shown: relevancy_score, has_ans_f1, no_ans_em" in gen
    assert JUDGED in "".join(line.split()[0] for line in gen.splitlines() if line.strip())
    judge = text[text.index("local/cases") :]
    assert "faithfulness_score" in judge and "not shown" not in judge  # its one main metric


def test_group_title_says_the_corpus_once() -> None:
    assert group_title(BENCH | {"corpus_provenance": "corpus"}, "retrieval").endswith(
        "retrieval · full corpus"
    )
    assert group_title(BENCH, "retrieval").endswith("retrieval · pooled gold")
    assert group_title(BENCH | {"corpus_provenance": None}, "judge").endswith("· judge")


def test_progression_never_splits_a_number() -> None:
    """Score columns used to fold, so `0.0843` printed as `0.08` over `43`: numbers stay
    whole, and the columns that do not fit are named under the table."""
    import re

    from lasagna.results.groups import Progression, render_progression

    dims = ["accuracy", "f1", "exact_match", "word_count", "faithfulness", "latency_s", "cost"]
    rows = [
        {
            "evaluation_id": f"20260101-00000{i}-abcdef12",
            "name": f"capitals-prompt-variant-{i}",
            "created_at": f"2026-01-01T00:00:0{i}+00:00",
            "n_trials": 300,
            "n_errors": 0,
            "averages": {d: 0.0843 + i for d in dims},
        }
        for i in range(3)
    ]
    for width in (80, 200):
        out = io.StringIO()
        render_progression(Progression("capitals", dims, rows), Console(file=out, width=width))
        text = out.getvalue()
        assert max(len(line.rstrip()) for line in text.splitlines()) <= 100
        table = text.split("not shown")[0]
        numbers = re.findall(r"[\d.]+", " ".join(line for line in table.splitlines()[3:]))
        assert all(re.fullmatch(r"\d+|\d\.\d{4}|[\d-]+|\d\d:\d\d:\d\d", n) for n in numbers)
        header = next(line for line in table.splitlines() if line.startswith(" evaluation"))
        shown = [h for h in header.split() if h in dims]
        assert shown and shown == dims[: len(shown)]
        if len(shown) < len(dims):
            assert "not shown (no room): " + ", ".join(dims[len(shown) :]) in text
            said = " ".join(text.split())  # the query for them all reads this group's rows
            assert "FROM evaluations WHERE group_name = 'capitals'" in said, said
