"""`results show RUN --by KEY` and `results compare RUN --by KEY`: a run's scores per slice
of the questions' metadata, each figure checked against a computation done here (means over
the slice's questions, SciPy's paired t-test, an exact permutation test, Holm's procedure
over every slice's pairs)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pytest
from rich.console import Console
from scipy import stats
from test_results_store import make_trial
from test_results_within import exact_permutation_p, holm_rejects

from lasagna.cli import main
from lasagna.data.model import Row
from lasagna.data.select import NONE, values_of
from lasagna.data.select import metadata_value as lookup
from lasagna.data.slicing import SliceKey, slices
from lasagna.engine.trials import with_metadata
from lasagna.errors import UserError
from lasagna.results import write_run
from lasagna.results.slice_table import render_slices, slice_groups
from lasagna.results.slices import metadata_column, question_values
from lasagna.results.store import open_run
from lasagna.results.within import compare_within

A = [0.9, 0.8, 1.0, 0.7, 0.9, 0.6, 1.0, 0.8, 0.9, 0.7, 1.0]
B = [0.5, 0.7, 0.6, 0.4, 0.8, 0.3, 0.5, 0.6, 0.4, 0.7, 0.5]
C = [0.5, 0.6, 0.7, 0.4, 0.8, 0.4, 1.0, 1.0, 1.0, 1.0, 1.0]
# q0-q6 bridge, q7-q10 comparison; tags: a list (a question in two slices, or in none)
META = [
    {"type": "bridge", "level": "easy", "src": {"site": "wiki"}, "tags": ["x", "y"]}
    if i < 3
    else {"type": "bridge", "level": "hard", "tags": []}
    if i < 7
    else {"type": "comparison", "level": 2, "tags": ["y"]}
    for i in range(11)
]
BRIDGE, COMPARISON = list(range(7)), list(range(7, 11))


def _with_meta(trial):
    trial.rows = trial.rows.append_column(
        "metadata", pa.array([json.dumps(m) for m in META], pa.string())
    )
    return trial


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    trials = [
        _with_meta(make_trial("kb" * 8, B, system="bm25", config={"kind": "bm25"})),
        _with_meta(make_trial("ka" * 8, A, system="dense", config={"kind": "dense"})),
        _with_meta(make_trial("kc" * 8, C, system="hybrid", config={"kind": "hybrid"})),
    ]
    write_run(tmp_path, "R1", {"created_at": "2026-01-01T00:00:00+00:00"}, trials)
    old = [make_trial("kd" * 8, A, system="dense", config={"kind": "dense"})]
    write_run(tmp_path, "OLD", {"created_at": "2026-01-01T00:00:00+00:00"}, old)
    return tmp_path


def _mean(values: list[float], index: list[int]) -> float:
    return sum(values[i] for i in index) / len(index)


def test_metadata_values_and_slices() -> None:
    assert lookup({"src": {"site": "wiki"}}, "src.site") == "wiki"
    assert lookup({"src.site": "literal", "src": {"site": "wiki"}}, "src.site") == "literal"
    assert lookup({"src": "wiki"}, "src.site") is None and lookup({}, "type") is None
    assert values_of(None) == [NONE] and values_of([]) == [NONE]
    assert values_of(["x", "y", "x"]) == ["x", "y"]
    assert values_of(True) == ["true"] and values_of(2) == ["2"] and values_of(0.5) == ["0.5"]
    got = slices({"q1": "a", "q2": None, "q3": "b", "q4": "b", "q5": ["a", "b"]}, SliceKey("k"))
    assert list(got) == ["b", "a", NONE]  # the largest first, (none) last
    assert got["b"] == {"q3", "q4", "q5"}


def test_the_engine_keeps_each_rows_metadata() -> None:
    rows = [Row("r1", "q?", metadata={"type": "bridge"}), Row("r2", "q?")]
    bench = type("Benchmark", (), {"rows": rows})
    table = with_metadata(pa.table({"id": ["r2", "r1"], "x": [1, 2]}), bench)
    assert table["metadata"].to_pylist() == ["{}", '{"type": "bridge"}']
    cases = [{"id": "c1", "metadata": {"k": 1}}, {"id": "c2"}]  # judge test cases are dicts
    assert metadata_column(["c1", "c2"], cases) == ['{"k": 1}', "{}"]
    kept = pa.table({"id": ["r1"], "metadata": ["mine"]})  # a track's own column is kept
    assert with_metadata(kept, bench)["metadata"].to_pylist() == ["mine"]


def test_show_by_means_over_each_slice(run_dir: Path) -> None:
    run = open_run("R1", run_dir)
    (group,) = slice_groups(run, "type")
    assert group.systems == ["dense", "hybrid", "bm25"]  # best first on every question
    lines = {ln.value: ln for ln in group.lines}
    assert list(lines) == ["all", "bridge", "comparison"]
    assert lines["all"].questions == 11 and lines["bridge"].questions == 7
    for k, values in enumerate((A, C, B)):
        assert lines["all"].means[k] == pytest.approx(sum(values) / 11)
        assert lines["bridge"].means[k] == pytest.approx(_mean(values, BRIDGE))
        assert lines["comparison"].means[k] == pytest.approx(_mean(values, COMPARISON))
    tags = {ln.value: ln for ln in slice_groups(run, "tags")[0].lines}
    assert list(tags) == ["all", "y", "x", NONE]  # a list: a question in each of its items
    assert tags["y"].means[0] == pytest.approx(_mean(A, [0, 1, 2, *COMPARISON]))
    assert tags[NONE].questions == 4
    site = {ln.value: ln.questions for ln in slice_groups(run, "src.site")[0].lines}
    assert site == {"all": 11, "wiki": 3, NONE: 8}
    level = [ln.value for ln in slice_groups(run, "level")[0].lines]
    assert level == ["all", "2", "hard", "easy"]  # a number is a value; ties by name


def test_a_slice_without_a_scored_question_comes_last(tmp_path: Path) -> None:
    """Unanswerable questions in a retrieval run have no score: their slice, however large,
    goes under the slices that were scored."""
    nan = float("nan")
    values = [nan] * 7 + A[7:]  # the 7 bridge questions unscored
    trial = _with_meta(make_trial("ke" * 8, values, system="bm25", config={"kind": "bm25"}))
    write_run(tmp_path, "R", {"created_at": "2026-01-01T00:00:00+00:00"}, [trial])
    (group,) = slice_groups(open_run("R", tmp_path), "type")
    assert [(ln.value, ln.questions) for ln in group.lines] == [
        ("all", 4),
        ("comparison", 4),
        ("bridge", 0),
    ]


def test_compare_by_tests_within_each_slice_and_corrects_them_together(run_dir: Path) -> None:
    within = compare_within(open_run("R1", run_dir), by="type")
    assert [(g.value, g.questions) for g in within.groups] == [("bridge", 7), ("comparison", 4)]
    scores = {"dense": A, "bm25": B, "hybrid": C}
    raw = []
    for g, index in zip(within.groups, (BRIDGE, COMPARISON), strict=True):
        # on comparison questions hybrid (1.0 each) is the best, dense second
        want = ["dense", "hybrid", "bm25"] if g.value == "bridge" else ["hybrid", "dense", "bm25"]
        assert [s.label for s in g.systems] == want
        for p in g.pairs:
            a = [scores[p.a][i] for i in index]
            b = [scores[p.b][i] for i in index]
            assert p.n == len(index)
            assert p.diff == pytest.approx(sum(b) / len(b) - sum(a) / len(a))
            if len(set(y - x for x, y in zip(a, b, strict=True))) > 1:
                assert p.p_ttest == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-9)
            assert p.p_permutation == pytest.approx(exact_permutation_p(a, b))
            raw.append(p)
        assert g.family == 6
    # Holm over the 6 tests of both slices, as defined
    rejected = holm_rejects([p.p_permutation for p in raw], 0.05)
    assert {i for i, p in enumerate(raw) if p.significant} == rejected
    base = compare_within(open_run("R1", run_dir), by="type", baseline="bm25")
    assert all(p.a == "bm25" for g in base.groups for p in g.pairs)
    assert base.groups[0].family == 4


def test_cli_show_and_compare_by(run_dir: Path, capsys) -> None:
    out = ["--output", str(run_dir)]
    assert main(["results", "show", "R1", "--by", "type", *out]) == 0
    text = capsys.readouterr().out
    assert "ndcg@10 by type" in text and "comparison" in text
    assert "0.8429" in text  # dense on bridge
    assert main(["results", "show", "R1", "--by", "type", "--format", "json", *out]) == 0
    records = json.loads(capsys.readouterr().out)
    dense = {r["slice"]: r for r in records if r["system"] == "dense"}
    assert dense["bridge"]["mean"] == pytest.approx(_mean(A, BRIDGE))
    assert dense["bridge"]["questions"] == 7 and dense["all"]["by"] == "type"
    assert main(["results", "compare", "R1", "--by", "type", *out]) == 0
    text = capsys.readouterr().out
    assert "type=bridge (7 questions)" in text and "over 6 comparison(s)" in text
    assert main(["results", "compare", "R1", "--by", "type", "--format", "json", *out]) == 0
    records = json.loads(capsys.readouterr().out)
    assert {(r["by"], r["slice"], r["slice_questions"]) for r in records} == {
        ("type", "bridge", 7),
        ("type", "comparison", 4),
    }


def test_by_refusals_name_the_fix(run_dir: Path, capsys) -> None:
    out = ["--output", str(run_dir)]
    assert main(["results", "show", "R1", "--by", "typo", *out]) == 2
    err = capsys.readouterr().err
    assert "metadata key 'typo'" in err and "type, level, tags, src" in err
    assert main(["results", "compare", "R1", "--by", "typo", *out]) == 2
    assert "metadata key 'typo'" in capsys.readouterr().err
    assert main(["results", "show", "OLD", "--by", "type", *out]) == 2
    assert "written before lasagna kept each row's metadata" in capsys.readouterr().err
    assert main(["results", "compare", "OLD", "R1", "--by", "type", *out]) == 2
    assert "written before lasagna kept each row's metadata" in capsys.readouterr().err
    assert main(["results", "show", "R1", "--metric", "ndcg@10", *out]) == 2
    assert "--metric and --format go with --by" in capsys.readouterr().err
    assert main(["results", "show", "R1", "--format", "csv", *out]) == 2
    with pytest.raises(UserError, match="has the metric"):
        slice_groups(open_run("R1", run_dir), "type", ["f1"])
    assert question_values(open_run("R1", run_dir), open_run("R1", run_dir).trials, "type")


def test_report_by_slice(run_dir: Path, tmp_path: Path, capsys) -> None:
    from lasagna.results.report import build_report, pick_runs
    from lasagna.results.report.page import render_page

    data = build_report(pick_runs(["R1"], run_dir), by=["type", "nope"])
    (group,) = data["groups"]
    by_type, nope = group["slices"]
    assert by_type["systems"] == ["dense", "hybrid", "bm25"] and by_type["metric"] == "ndcg@10"
    lines = {ln["value"]: ln for ln in by_type["lines"]}
    assert lines["comparison"]["means"][0] == pytest.approx(_mean(A, COMPARISON))
    assert lines["comparison"]["best"] == 1 and lines["bridge"]["best"] == 0  # hybrid, dense
    assert "no question has metadata key 'nope'" in nope["note"]
    assert any("'nope'" in n for n in data["notes"])
    html = render_page(data)
    assert 'data-by="type"' in html and '<td class="num best">1.0000</td>' in html
    out = tmp_path / "page.html"
    args = ["report", "R1", "--by", "type", "--output", str(run_dir), "--out", str(out)]
    assert main(args) == 0 and 'data-slice="comparison"' in out.read_text()
    # a key no group has is a typo: refused as `results show --by` refuses it
    assert main([*args[:3], "nope", *args[4:-1], str(tmp_path / "x.html")]) == 2
    assert "metadata key 'nope'. Fix: use one of: type" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()


def test_an_evaluate_run_by_slice_reads_every_score_dimension(tmp_path: Path) -> None:
    scores = [{"acc": 1.0, "words": 3.0}, {"acc": 0.0, "words": 5.0}, {"words": 4.0}, None]
    meta = [{"kind": "a"}, {"kind": "a"}, {"kind": "b"}, {"kind": "b"}]
    trial = make_trial("ke" * 8, [0.0] * 4, system="f", config={"kind": "executor"})
    trial.track, trial.metrics = "sdk", {"acc": 0.5, "words": 4.0}
    trial.rows = pa.table(
        {
            "id": [f"t{i}#0" for i in range(4)],
            "metadata": [json.dumps(m) for m in meta],
            "evaluator_scores": pa.array(
                [list(s.items()) if s else None for s in scores],
                pa.map_(pa.string(), pa.float64()),
            ),
        }
    )
    write_run(tmp_path, "E1", {"created_at": "2026-01-01T00:00:00+00:00"}, [trial])
    acc, words = slice_groups(open_run("E1", tmp_path), "kind")
    assert (acc.metric, words.metric) == ("acc", "words")
    assert {ln.value: (ln.questions, ln.means[0]) for ln in acc.lines} == {
        "all": (2, 0.5),
        "a": (2, 0.5),
        "b": (0, pytest.approx(float("nan"), nan_ok=True)),
    }
    assert {ln.value: ln.means[0] for ln in words.lines} == {"all": 4.0, "a": 4.0, "b": 4.0}
    shown = io.StringIO()
    render_slices([acc, words], Console(file=shown, width=200))
    said = " ".join(shown.getvalue().split())  # an evaluate() run's unit is the trial
    assert "the mean of the per-trial scores over its trials (n: those with a score)" in said


def test_the_view_slices_a_page_by_its_query(run_dir: Path) -> None:
    from starlette.testclient import TestClient

    from lasagna.results.view import create_app

    client = TestClient(create_app(run_dir))
    page = client.get("/run/R1?by=type&by=level")
    assert page.status_code == 200
    assert 'data-by="type"' in page.text and 'data-by="level"' in page.text
    assert 'data-slice="comparison"' in page.text
    assert "data-by=" not in client.get("/run/R1").text
    group = client.get("/group/group-1?by=type")
    assert group.status_code == 200 and 'data-by="type"' in group.text
    assert 'data-by="type"' in client.get("/?by=type").text


def test_the_drill_down_shows_the_stored_metadata_once_per_question(run_dir: Path) -> None:
    from lasagna.results.report import build_report, pick_runs

    (group,) = build_report(pick_runs(["R1"], run_dir))["groups"]
    drill = group["drill"]  # the data file (toy.jsonl) is gone: the rows' column is read
    assert drill["questions"]["q7"]["metadata"] == {
        "type": "comparison",
        "level": "2",
        "tags": '["y"]',
    }
    for trial in drill["runs"][0]["trials"]:
        assert not any(
            "metadata" in r.get("json", {}) or "metadata" in r.get("fields", {})
            for r in trial["rows"].values()
        )


def test_two_runs_compared_within_each_slice(run_dir: Path, capsys) -> None:
    from lasagna.results.compare import compare

    later = [  # dense improves on comparison questions only, bm25 on every question
        _with_meta(
            make_trial("la" * 8, A[:7] + [1.0] * 4, system="dense", config={"kind": "dense"})
        ),
        _with_meta(
            make_trial("lb" * 8, [v + 0.1 for v in B], system="bm25", config={"kind": "bm25"})
        ),
    ]
    write_run(run_dir, "R2", {"created_at": "2026-01-03T00:00:00+00:00"}, later)
    got = compare("R1", "R2", run_dir, by="type")
    lines = {(x.system_a, x.slice): x for x in got.lines}
    assert set(lines) == {(s, v) for s in ("dense", "bm25") for v in ("bridge", "comparison")}
    dense = lines[("dense", "comparison")]
    b_new = [1.0] * 4
    assert dense.n == 4 and dense.diff == pytest.approx(1.0 - _mean(A, COMPARISON))
    assert dense.p_permutation == pytest.approx(
        exact_permutation_p([A[i] for i in COMPARISON], b_new)
    )
    assert lines[("dense", "bridge")].diff == pytest.approx(0.0)
    raw = [x.p_permutation for x in got.lines]
    rejected = holm_rejects([p if p is not None else 1.0 for p in raw], 0.05)
    assert {i for i, x in enumerate(got.lines) if x.significant} == rejected  # one family
    out = ["--output", str(run_dir)]
    assert main(["results", "compare", "R1", "R2", "--by", "type", "--format", "json", *out]) == 0
    records = json.loads(capsys.readouterr().out)
    assert {(r["system_a"], r["slice"], r["slice_questions"]) for r in records} >= {
        ("dense", "comparison", 4)
    }
    assert main(["results", "compare", "R1", "R2", "--by", "type", *out]) == 0
    text = capsys.readouterr().out
    assert "every slice's tests together" in text
    header = next(line.split() for line in text.splitlines() if line.startswith("system"))
    assert header[:3] == ["system", "type", "metric"], text
    assert sum(line.split()[:2] == ["dense", "comparison"] for line in text.splitlines()) == 1
    assert main(["results", "compare", "R1", "R2", "--by", "nope", *out]) == 2


def test_a_trial_written_before_rows_kept_metadata_reads_its_data_file(tmp_path: Path) -> None:
    from lasagna.data import load_benchmark
    from lasagna.sample import sample_path

    bench = load_benchmark(sample_path())
    ids = [r.id for r in bench.rows]
    block = {"name": bench.name, "revision": bench.revision, "source": str(sample_path())}
    values = [float(i % 2) for i in range(len(ids))]
    old = make_trial("ko" * 8, values, ids=ids, benchmark=block)  # rows without metadata
    write_run(tmp_path, "OLD", {"created_at": "2026-01-01T00:00:00+00:00"}, [old])
    (group,) = slice_groups(open_run("OLD", tmp_path), "topic")
    lines = {ln.value: ln for ln in group.lines}
    coins = [i for i, r in enumerate(bench.rows) if r.metadata.get("topic") == "coins"]
    assert lines["coins"].questions == len(coins) == 9
    assert lines["coins"].means[0] == pytest.approx(_mean(values, coins))
    moved = make_trial("kp" * 8, values, ids=ids, benchmark=block | {"revision": "f" * 64})
    write_run(tmp_path, "MOVED", {"created_at": "2026-01-02T00:00:00+00:00"}, [moved])
    with pytest.raises(UserError, match="changed since the run"):
        slice_groups(open_run("MOVED", tmp_path), "topic")


def test_evaluation_result_by_slice() -> None:
    from lasagna.evaluation import EvaluationResult

    trials = [
        {"metadata": '{"region": "europe"}', "scores": {"acc": 1.0, "len": 2.0}},
        {"metadata": '{"region": "europe"}', "scores": {"acc": 0.0, "len": float("nan")}},
        {"metadata": '{"region": "asia"}', "scores": {"acc": 1.0}},
        {"metadata": "{}", "scores": None},  # the executor failed: no score
    ]
    result = EvaluationResult("e", "e", None, {"acc": 2 / 3, "len": 2.0}, 4, 1, "r", trials)
    assert result.by("region") == {
        "europe": {"n": 2, "acc": 0.5, "len": 2.0},  # NaN: no score, as in the averages
        "asia": {"n": 1, "acc": 1.0},
        NONE: {"n": 0},  # n: the trials with a score, as `results show --by` counts
    }


def test_a_key_refused_among_only_keys_holding_objects_gets_a_working_example(
    tmp_path: Path, capsys
) -> None:
    """BEIR SciFact's metadata: evidence keyed by document id (a list of objects), no plain
    key; past 20 such keys they are counted, with one --by that works."""

    def evidence(i: int) -> dict:
        return {str(1000 + i + j): [{"sentences": [j], "label": "SUPPORT"}] for j in range(3)}

    trial = make_trial("ke" * 8, A, system="bm25", config={"kind": "bm25"})
    meta = [json.dumps(evidence(3 * i)) for i in range(len(A))]  # 33 distinct keys
    trial.rows = trial.rows.append_column("metadata", pa.array(meta, pa.string()))
    nested = [{"src": {"site": "wiki", "pages": [1]}, **evidence(3 * i)} for i in range(len(A))]
    other = make_trial("kf" * 8, A, system="bm25", config={"kind": "bm25"})
    other.rows = other.rows.append_column(
        "metadata", pa.array([json.dumps(m) for m in nested], pa.string())
    )
    write_run(tmp_path, "SF", {"created_at": "2026-01-01T00:00:00+00:00"}, [trial])
    write_run(tmp_path, "SRC", {"created_at": "2026-01-01T00:00:00+00:00"}, [other])
    out = ["--output", str(tmp_path)]
    assert main(["results", "show", "SF", "--by", "nope", *out]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "Fix: use one of the 33 keys holding objects, e.g. --by 1000" in err
    assert "one of: or" not in err
    assert main(["results", "show", "SF", "--by", "1000", *out]) == 0  # the example works
    assert main(["results", "show", "SRC", "--by", "nope", *out]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "use one of the 34 keys holding objects, e.g. --by src.site" in err
    assert main(["results", "show", "SRC", "--by", "src.site", *out]) == 0
