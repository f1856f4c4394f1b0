"""The report's data layer and page text, on hand-made run folders (no Ray, no browser):
numbers come from the leaderboard and compare functions, failed rows are kept, the page is
self-contained."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pytest
from test_results_store import BENCH, make_trial

from lasagna.cli import main
from lasagna.errors import UserError
from lasagna.results import TrialResult, compare, leaderboard, write_run
from lasagna.results.report import build_report, write_report
from lasagna.results.report.page import render_page, script_json
from lasagna.results.store import load_runs

BM25 = {"kind": "bm25", "k1": 1.2}
DENSE = {"kind": "dense"}


def generation_trial(key: str, created: str) -> TrialResult:
    """A generation trial of three rows, the last of which failed (error, no score)."""
    rows = pa.table(
        {
            "id": ["g1", "g2", "g3"],
            "question": ["capital of France?", "capital of Japan?", "a very long question"],
            "prediction": ["Paris", "Kyoto", ""],
            "error": [None, None, "prompt too long: 9000 tokens > 2048"],
            "answers": [["Paris"], ["Tokyo"], ["x"]],
            "f1": pa.array([1.0, 0.0, None], pa.float64()),
            "judge_reason": ["matches the reference", "wrong city", None],
            "verdicts": ['[{"verdict": "yes", "reason": "Paris"}]', "[not json", None],
        }
    )
    return TrialResult(
        key=key,
        comparability_key="gen-1",
        track="generation",
        system="rag:SmolLM2",
        config={"kind": "rag"},
        benchmark=dict(BENCH) | {"name": "local/qa@cccccccccccc"},
        metrics={"f1": 0.5},
        counts={"rows": 3, "failed": 1},
        started_at=created,
        finished_at=created,
        rows=rows,
    )


@pytest.fixture
def runs_root(tmp_path: Path) -> Path:
    write_run(
        tmp_path,
        "r1",
        {"created_at": "2026-01-01T00:00:00+00:00"},
        [
            make_trial("a-bm25-0", [0.2, 0.4, 0.6, 0.8], config=BM25, repeat=0),
            make_trial("a-bm25-1", [0.3, 0.5, 0.7, 0.9], config=BM25, repeat=1),
            make_trial("a-dense-0", [1.0, 0.5, 0.5, 0.5], system="dense", config=DENSE),
        ],
    )
    write_run(
        tmp_path,
        "r2",
        {"created_at": "2026-01-02T00:00:00+00:00"},
        [
            make_trial("b-bm25-0", [0.2, 0.4, 0.6, 0.1], config=BM25),
            make_trial("b-dense-0", [1.0, 0.5, 0.5, 0.5], system="dense", config=DENSE),
            generation_trial("b-gen-0", "2026-01-02T00:00:00+00:00"),
        ],
    )
    return tmp_path


def _group(data: dict, key: str) -> dict:
    return next(g for g in data["groups"] if g["key"] == key)


def test_leaderboard_and_compare_are_the_results_functions(runs_root: Path) -> None:
    data = build_report(load_runs(runs_root))
    g = _group(data, "group-1")
    board = next(b for b in leaderboard(runs_root) if b.comparability_key == "group-1")
    assert [
        (x["system"], x["mean"], x["low"], x["high"], x["n_trials"])
        for x in g["leaderboard"]["lines"]
    ] == [(line.system, line.mean, line.low, line.high, line.n_trials) for line in board.lines]
    assert g["pooled_gold"] is (BENCH["corpus_provenance"] == "pooled_gold") and g["runs"] == [
        "r2",
        "r1",
    ]
    cmp = g["compare"]
    assert (cmp["run_a"], cmp["run_b"]) == ("r1", "r2")  # the newest two, older as A
    ref = compare("r1", "r2", runs_root)
    assert [
        (x["system_a"], x["metric"], x["p_ttest"], x["p_permutation"]) for x in cmp["lines"]
    ] == [(x.system_a, x.metric, x.p_ttest, x.p_permutation) for x in ref.lines]
    # per question: bm25 averaged its two repeats in r1 (0.25, ..., 0.85); q3 moved most
    rows = cmp["questions"]["rows"]
    assert [(r["id"], r["system"]) for r in rows][:1] == [("q3", "bm25")]
    assert rows[0]["a"] == pytest.approx(0.85) and rows[0]["diff"] == pytest.approx(-0.75)
    assert all(abs(a["diff"]) >= abs(b["diff"]) for a, b in zip(rows, rows[1:], strict=False))
    assert cmp["questions"]["same"] == 4  # dense scored the same on every question


def test_progression_has_a_point_per_run_and_system(runs_root: Path) -> None:
    g = _group(build_report(load_runs(runs_root)), "group-1")
    series = {s["system"]: s["points"] for s in g["progression"]["series"]}
    assert [p["run"] for p in series["bm25"]] == ["r1", "r2"]  # oldest first
    assert series["bm25"][0]["n"] == 2
    assert series["bm25"][0]["values"]["ndcg@10"] == pytest.approx((0.5 + 0.6) / 2)
    fig = g["figures"]["progression"]
    visible = [t for t in fig["data"] if t.get("visible") is not False]
    assert len(visible) == 2 and all(len(t["x"]) == 2 for t in visible)


def test_failed_rows_and_unscored_trials_are_listed(runs_root: Path) -> None:
    data = build_report(load_runs(runs_root))
    g = _group(data, "gen-1")
    assert g["failed"] == [
        {
            "run": "r2",
            "system": "rag",
            "repeat": 0,
            "key": "b-gen-0",
            "rows": 3,
            "failed": 1,
            "scored": True,
            "error": None,
        }
    ]
    trial = g["drill"]["runs"][0]["trials"][0]
    assert trial["rows"]["g3"]["error"].startswith("prompt too long")
    assert trial["rows"]["g1"]["prediction"] == "Paris"
    assert trial["rows"]["g2"]["fields"] == {"judge_reason": "wrong city", "verdicts": "[not json"}
    assert trial["rows"]["g1"]["json"] == {"verdicts": [{"verdict": "yes", "reason": "Paris"}]}
    assert g["drill"]["questions"]["g2"]["question"] == "capital of Japan?"


def test_drilldown_respects_the_page_limit(runs_root: Path) -> None:
    data = build_report(load_runs(runs_root), group="group-1", max_records=6)
    g = data["groups"][0]
    shown = sum(len(t["rows"]) for r in g["drill"]["runs"] for t in r["trials"])
    assert shown == 6
    assert any("page limit" in n for n in g["drill"]["notes"])


def test_group_selection_by_key_prefix_or_name(runs_root: Path) -> None:
    runs = load_runs(runs_root)
    assert [g["key"] for g in build_report(runs, group="gen")["groups"]] == ["gen-1"]
    assert [g["key"] for g in build_report(runs, group="local/qa@cccccccccccc")["groups"]] == [
        "gen-1"
    ]
    with pytest.raises(UserError, match="no comparability group matches 'nope'"):
        build_report(runs, group="nope")


def test_page_is_self_contained(runs_root: Path, tmp_path: Path) -> None:
    summary = write_report(tmp_path / "r.html", output_dir=runs_root)
    html = (tmp_path / "r.html").read_text()
    assert summary.bytes == len(html.encode()) and summary.groups == 2
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", html)
    assert "@import" not in html and "url(http" not in html
    assert "default-src 'none'" in html  # the browser refuses any request the page might make
    payload = re.search(r'id="report-data">(.*?)</script>', html, re.S).group(1)
    assert json.loads(payload)["groups"][0]["key"]
    assert not list(tmp_path.glob("r.html.tmp*"))


def test_page_inlines_the_basic_bundle_and_keeps_drill_rows_apart(
    runs_root: Path, tmp_path: Path
) -> None:
    import plotly.offline

    from lasagna.results.report.page import bundle_version, plotly_bundle

    js = plotly_bundle()
    assert bundle_version(js) == plotly.offline.get_plotlyjs_version()  # same plotly.js
    assert "(basic - minified)" in js[:200] and len(js) < len(plotly.offline.get_plotlyjs()) / 3
    data = build_report(load_runs(runs_root))
    for g in data["groups"]:
        for fig in filter(None, g["figures"].values()):
            assert {t["type"] for t in fig["data"]} <= {"bar", "scatter"}
            assert set(fig["layout"]["template"]["data"]) <= {"bar", "scatter"}
    write_report(tmp_path / "r.html", output_dir=runs_root)
    html = (tmp_path / "r.html").read_text()
    assert html.count(js[:300]) == 1
    blocks = dict(re.findall(r'<script type="application/json" id="([^"]+)">(.*?)</script>', html))
    head = json.loads(blocks.pop("report-data"))
    assert all("drill" not in g for g in head["groups"]) and head["docs"] == {}
    assert sorted(blocks) == sorted(["docs", *(f"drill-{g['id']}" for g in head["groups"])])
    drill = json.loads(blocks[f"drill-{_group(head, 'gen-1')['id']}"])
    assert drill["runs"][0]["trials"][0]["rows"]["g1"]["prediction"] == "Paris"


def test_drill_numbers_are_compact() -> None:
    from lasagna.results.report.questions import compact

    assert [compact(v, 6) for v in (0.0, 1.0, 1 / 3, float("nan"), None, True)] == [
        0,
        1,
        0.333333,
        None,
        None,
        1,
    ]
    assert compact(15.106582641601562, 5) == 15.107 and json.dumps(compact(2.0, 5)) == "2"


def test_script_json_cannot_close_the_script_tag() -> None:
    text = script_json({"q": "</script><script>alert(1)</script>", "s": "a\u2028b"})
    assert "</" not in text and "\u2028" not in text
    assert json.loads(text)["q"].startswith("</script>")
    assert "<b>" not in render_page(
        {"runs": [], "groups": [], "docs": {}, "notes": ["<b>"], "compare_requested": None}
    )


def test_cli_report_refuses_an_empty_root(tmp_path: Path, capsys) -> None:
    assert (
        main(["report", "--output", str(tmp_path / "none"), "--out", str(tmp_path / "r.html")]) == 2
    )
    assert "no runs under" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def write_evaluation(
    root: Path, run_id: str, created: str, scores: list[float], group: str | None = "capitals"
) -> None:
    """An `evaluate()` run folder as lasagna.evaluation writes it (kind, summary, tables)."""
    import pyarrow.parquet as pq

    folder = root / run_id
    (folder / "tables").mkdir(parents=True)
    rows = [
        {
            "evaluation_id": run_id,
            "task_id": f"t{i}",
            "trial_index": 0,
            "data": json.dumps({"country": c}),
            "target": json.dumps(t),
            "output": json.dumps(t if s else "?"),
            "scores": [("accuracy", s)],
            "error": None if i else "ValueError: boom",
            "error_type": None,
        }
        for i, (c, t, s) in enumerate(
            zip(["France", "Japan"], ["Paris", "Tokyo"], scores, strict=True)
        )
    ]
    schema = pa.schema(
        [(k, pa.string()) for k in ("evaluation_id", "task_id")]
        + [("trial_index", pa.int64())]
        + [(k, pa.string()) for k in ("data", "target", "output")]
        + [("scores", pa.map_(pa.string(), pa.float64()))]
        + [(k, pa.string()) for k in ("error", "error_type")]
    )
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / "tables/trials.parquet")
    manifest = {
        "run_id": run_id,
        "kind": "evaluation",
        "created_at": created,
        "trials": [],
        "tables": {"evaluation_trials": "tables/trials.parquet"},
        "evaluation": {
            "evaluation_id": run_id,
            "name": "capitals-v" + run_id[-1],
            "group_name": group,
            "n_datapoints": 2,
            "n_trials": 2,
            "n_errors": 1,
            "averages": {"accuracy": sum(scores) / 2},
        },
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_evaluations_progression_compare_and_drilldown(tmp_path: Path) -> None:
    write_evaluation(tmp_path, "e1", "2026-01-01T00:00:00+00:00", [0.0, 1.0])
    write_evaluation(tmp_path, "e2", "2026-01-02T00:00:00+00:00", [1.0, 1.0])
    data = build_report(load_runs(tmp_path), group="capitals")
    (g,) = data["groups"]
    assert g["kind"] == "evaluation" and g["dimensions"] == ["accuracy"]
    (series,) = g["progression"]["series"]  # one line; each dimension its own axis
    assert g["progression"]["metrics"] == ["accuracy"]
    assert [(p["run"], p["values"]["accuracy"]) for p in series["points"]] == [
        ("e1", 0.5),
        ("e2", 1.0),
    ]
    assert g["drill"]["words"] == {"question": "data", "answers": "target", "prediction": "output"}
    (line,) = g["compare"]["lines"]
    assert (line["mean_a"], line["mean_b"], line["n"]) == (0.5, 1.0, 2)
    assert g["compare"]["questions"]["rows"][0]["id"] == "t0"
    trial = g["drill"]["runs"][1]["trials"][0]  # e1: newest first
    assert trial["system"] == "capitals-v1"  # the name it was given
    assert trial["rows"]["t0"]["error"] == "ValueError: boom"
    assert trial["rows"]["t0"]["prediction"] == "?"
    assert g["drill"]["questions"]["t1"] == {
        "question": '{"country": "Japan"}',
        "answers": ["Tokyo"],
    }
    assert g["failed"][0]["failed"] == 1
    html = render_page(data)
    assert "evaluation group capitals" in html and 'class="evaluation-row"' in html


def test_an_evaluations_drill_down_columns_say_the_executor_not_the_default_name() -> None:
    from lasagna.results.report.evaluation_drill import trial_label

    auto = {"evaluation_id": "r1", "group_name": "g", "name": "g-r1", "executor": "ask"}
    assert trial_label(auto) == "ask"
    assert trial_label(auto | {"group_name": None, "name": "r1"}) == "ask"
    assert trial_label(auto | {"name": "gpt baseline"}) == "gpt baseline"
    assert trial_label({"evaluation_id": "r1", "name": "g-r1", "group_name": "g"}) == "g-r1"


def test_evaluations_compare_the_runs_asked_for(tmp_path: Path) -> None:
    for i, s in enumerate(([0.0, 1.0], [1.0, 1.0], [0.0, 0.0]), 1):
        write_evaluation(tmp_path, f"e{i}", f"2026-01-0{i}T00:00:00+00:00", s)
    (g,) = build_report(load_runs(tmp_path))["groups"]
    assert (g["compare"]["run_a"], g["compare"]["run_b"]) == ("e2", "e3")  # the newest two
    (g,) = build_report(load_runs(tmp_path), compare=("e3", "e1"))["groups"]
    assert (g["compare"]["run_a"], g["compare"]["run_b"]) == ("e3", "e1")
    assert g["compare"]["lines"][0]["diff"] == pytest.approx(0.5)


def test_compare_refuses_one_run_named_twice(tmp_path: Path, capsys) -> None:
    """`--compare e2 e2` would put a run beside itself (every difference 0, p = 1)."""
    for i, s in enumerate(([0.0, 1.0], [1.0, 1.0]), 1):
        write_evaluation(tmp_path, f"e{i}", f"2026-01-0{i}T00:00:00+00:00", s)
    with pytest.raises(UserError, match="--compare names run e2 twice"):
        write_report(tmp_path / "r.html", output_dir=tmp_path, compare=("e2", "e2"))
    out = tmp_path / "page.html"
    argv = ["report", "--output", str(tmp_path), "--out", str(out), "--compare", "e1", "e1"]
    assert main(argv) == 2 and not out.exists()
    # an evaluate() run alone compares with nothing: no `results compare e1` suggested
    assert "lasagna results compare e1" not in capsys.readouterr().err
    write_report(out, output_dir=tmp_path, compare=("e1", "e2"))  # two runs: fine
    for pair, said in ((("e1", "nope"), "'nope' names no run"), (("e", "e1"), "several")):
        with pytest.raises(UserError, match=said):
            write_report(tmp_path / "x.html", output_dir=tmp_path, compare=pair)
    # two runs with no group in common: every section would say "not both in it"
    write_run(
        tmp_path, "r9", {"created_at": "2026-01-09T00:00:00+00:00"}, [make_trial("k9", [1.0])]
    )
    with pytest.raises(UserError, match="have no group in common"):
        write_report(tmp_path / "x.html", output_dir=tmp_path, compare=("e1", "r9"))
    assert not (tmp_path / "x.html").exists()


def test_judge_rows_show_case_verdicts_and_reason(tmp_path: Path) -> None:
    case = {
        "id": "c1",
        "input": "Is the sky green?",
        "actual_output": "No.",
        "context": ["x" * 5000],
    }
    rows = pa.table(
        {
            "id": ["c1"],
            "case": [json.dumps(case)],
            "faithfulness": pa.array([0.5], pa.float64()),
            "reason": ["one of two claims is supported"],
            "verdicts": [json.dumps([{"verdict": "yes"}, {"verdict": "no"}])],
            "error": pa.array([None], pa.string()),
        }
    )
    trial = TrialResult(
        key="j-0",
        comparability_key="judge-1",
        track="judge",
        system="judge:SmolLM2",
        config={"kind": "judge"},
        benchmark={"name": "faith@dddddddddddd", "source": str(tmp_path / "gone.csv")},
        metrics={"faithfulness": 0.5},
        counts={"rows": 1, "failed": 0},
        rows=rows,
    )
    write_run(tmp_path / "out", "rj", {"created_at": "2026-01-03T00:00:00+00:00"}, [trial])
    data = build_report(load_runs(tmp_path / "out"))
    (g,) = data["groups"]
    assert g["drill"]["questions"]["c1"]["question"] == "Is the sky green?"
    row = g["drill"]["runs"][0]["trials"][0]["rows"]["c1"]
    assert row["fields"] == {"reason": "one of two claims is supported"}
    assert row["json"]["verdicts"] == [{"verdict": "yes"}, {"verdict": "no"}]
    assert len(row["json"]["case"]["context"][0]) < 2_100  # long strings cut
    assert row["m"] == [0.5] and not data["notes"]  # the case file is not re-read


def test_progression_axes_per_metric_and_one_run_is_a_point() -> None:
    """A word count of ~19 beside an F1 of ~0.5 on one axis flattened the F1: each score
    dimension gets its own y axis (the menu), and one run is a point on a one-category
    axis, not the middle of a 24-hour time span."""
    from lasagna.results.report.charts import progression_figure

    def point(run: str, time: str, f1: float, words: float) -> dict:
        return {"run": run, "time": time, "n": 1, "values": {"f1": f1, "words": words}}

    times = ("2026-01-01T00:00:00+00:00", "2026-01-02T00:00:00+00:00")
    prog = {
        "metrics": ["f1", "words"],
        "default": "f1",
        "series": [{"system": "capitals", "points": [point("e1", times[0], 0.4, 19.0)]}],
    }
    one = progression_figure(prog)
    assert one["layout"]["xaxis"]["type"] == "category"
    assert "range" not in one["layout"]["xaxis"]
    (trace,) = one["data"]
    assert trace["x"] == ["2026-01-01 00:00:00 UTC"] and trace["y"] == [0.4]
    # one value: a narrow range around it (plotly padded it by +-1: an F1 below 0)
    assert one["layout"]["yaxis"]["range"] == pytest.approx([0.35, 0.45])
    assert one["layout"]["yaxis"]["autorange"] is False
    low = progression_figure(
        {**prog, "series": [{"system": "s", "points": [point("e", times[0], 0.01, 0)]}]}
    )
    assert low["layout"]["yaxis"]["range"] == pytest.approx([0.0, 0.06])  # never below 0
    prog["series"][0]["points"].append(point("e2", times[1], 0.6, 21.0))
    two = progression_figure(prog)
    assert two["layout"]["xaxis"].get("type") != "category"
    assert two["data"][0]["y"] == [0.4, 0.6]  # f1 alone on its axis
    buttons = {b["label"]: b["args"] for b in two["layout"]["updatemenus"][0]["buttons"]}
    assert buttons["words"][0]["y"] == [[19.0, 21.0]]
    assert buttons["words"][1] == {
        "yaxis.title.text": "words",
        "yaxis.autorange": True,  # several values: autoranged, not below 0 (none is negative)
        "yaxis.rangemode": "nonnegative",
    }
    # a run without one of the metrics (tokens/s of generations all answered by the
    # model-call cache): a gap in that metric's line, not a crash of the page
    del prog["series"][0]["points"][1]["values"]["words"]
    gap = progression_figure(prog)
    buttons = {b["label"]: b["args"] for b in gap["layout"]["updatemenus"][0]["buttons"]}
    assert buttons["words"][0]["y"] == [[19.0]]


def test_within_run_matrix_and_ties_with_the_best(runs_root: Path) -> None:
    from test_results_within import exact_permutation_p

    g = _group(build_report(load_runs(runs_root)), "group-1")
    mx = g["matrix"]
    assert mx["run"] == "r2" and mx["metric"] == "ndcg@10"  # the newest run of the group
    assert [s["system"] for s in mx["systems"]] == ["dense", "bm25"]
    dense, bm25 = [1.0, 0.5, 0.5, 0.5], [0.2, 0.4, 0.6, 0.1]
    cell = mx["cells"][0][1]  # dense minus bm25
    assert cell["diff"] == pytest.approx(sum(dense) / 4 - sum(bm25) / 4)
    assert cell["p"] == pytest.approx(exact_permutation_p(dense, bm25))  # one pair: Holm = raw
    assert mx["cells"][1][0]["diff"] == pytest.approx(-cell["diff"]) and mx["cells"][0][0] is None
    other = mx["cells"][1][0]  # bm25 minus dense: the same interval, mirrored
    assert cell["low"] <= cell["diff"] <= cell["high"]
    assert (other["low"], other["high"]) == (-cell["high"], -cell["low"])
    board = g["leaderboard"]
    assert board["tested"] and board["lines"][0]["p_vs_best"] is None
    second = board["lines"][1]
    assert second["tie_with_best"] is (second["p_vs_best"] >= 0.05)
    html = render_page(build_report(load_runs(runs_root)))
    assert 'class="matrix"' in html and "p vs #1" in html and "; 95% CI of the difference" in html


def test_the_leaderboard_of_evaluations_only_points_at_where_they_are_read(
    tmp_path: Path, capsys
) -> None:
    """It said "no results in ... yet: run `lasagna benchmark run` first" of a root holding
    evaluate() runs."""
    write_evaluation(tmp_path, "e1", "2026-01-01T00:00:00+00:00", [0.0, 1.0])
    assert main(["results", "leaderboard", "--output", str(tmp_path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "the 1 evaluate() run(s) in" in out and "no results" not in out, out
    assert "`lasagna results progression capitals` (group(s): capitals)" in out, out
    assert main(["results", "leaderboard", "--output", str(tmp_path / "empty")]) == 0
    assert "no results in" in capsys.readouterr().out


def test_a_judge_note_says_when_the_row_was_not_judged():
    from lasagna.results.report.evaluation_drill import judge_note

    assert judge_note({"reason": "matches", "degenerate": False}) == "matches"
    said = {"reason": "no claim", "degenerate": True, "degenerate_reason": "no claims found"}
    assert judge_note(said) == "not judged (no claims found): no claim"
    assert judge_note({"degenerate": True}) == "not judged (nothing found)"
    assert judge_note({"reason": None, "degenerate": False}) == ""
