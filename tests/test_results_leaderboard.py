"""Leaderboard grouping, confidence intervals, and paired comparisons of runs."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from test_results_store import BENCH, make_trial

from lasagna.errors import UserError
from lasagna.metrics.stats import (
    MeanCI,
    bootstrap_mean_ci,
    mean_ci,
    paired,
    paired_ttest,
    permutation_test,
)
from lasagna.results import compare, leaderboard, render_comparison, render_leaderboard, write_run

T975_DF1 = 12.706204736174694  # Student t quantiles, from tables
T975_DF3 = 3.182446305284263
REAL = BENCH | {"corpus_provenance": "corpus"}
REV2 = BENCH | {"revision": "b" * 64, "name": "local/toy@bbbbbbbbbbbb"}


def test_mean_ci_matches_the_t_formula() -> None:
    ci = mean_ci([1.0, 2.0, 3.0, 4.0])
    half = T975_DF3 * math.sqrt(5 / 3) / 2  # sd of 1..4 is sqrt(5/3)
    assert ci.n == 4 and ci.mean == pytest.approx(2.5)
    assert ci.low == pytest.approx(2.5 - half) and ci.high == pytest.approx(2.5 + half)
    one = mean_ci([0.7])
    assert one.mean == 0.7 and one.low is None and one.high is None
    assert mean_ci([]).n == 0


def test_paired_tests_on_hand_made_scores() -> None:
    a, b = np.zeros(5), np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    # t = mean / (sd / sqrt(n)) = 3 / (sqrt(2.5) / sqrt(5)) = 4.2426, df 4 -> p = 0.01324
    assert paired_ttest(a, b) == pytest.approx(0.013236, abs=1e-5)
    # exact sign-flip test: only all-plus and all-minus reach |mean| 3 -> 2 / 32
    assert permutation_test(a, b) == pytest.approx(2 / 32)
    # [1,-2,3,4,5]: flipped subsets summing to <= 2 or >= 13 -> 6 / 32
    assert permutation_test(a, np.array([1.0, -2.0, 3.0, 4.0, 5.0])) == pytest.approx(6 / 32)
    # sampled (n=40): deterministic with the fixed seed, and near the t-test for a big effect
    rng = np.random.default_rng(1)
    x, y = rng.random(40), rng.random(40) + 0.3
    assert permutation_test(x, y) == permutation_test(x, y) < 0.01
    same = paired(x, x)
    assert same.diff == 0 and same.p_permutation == 1.0 and same.p_ttest == 1.0
    with_nan = paired(np.array([0.0, np.nan, 1.0]), np.array([1.0, 1.0, np.nan]))
    assert with_nan.n == 1 and with_nan.diff_low is None  # one pair: no interval
    # B - A's 95% interval: the questions resampled in pairs (the mean of y - x)
    test = paired(x, y)
    ci = bootstrap_mean_ci(y - x)
    assert (test.diff_low, test.diff_high) == (ci.low, ci.high)
    assert test.diff_low < test.diff < test.diff_high
    # the leaderboard's marks need p-values only: the same tests, no bootstrap
    marks = paired(x, y, interval=False)
    assert marks.diff_low is marks.diff_high is None
    assert (marks.p_ttest, marks.p_permutation) == (test.p_ttest, test.p_permutation)


def _runs(tmp_path: Path) -> Path:
    bm25 = {"kind": "bm25", "k1": 1.2}
    bm25_b = {"kind": "bm25", "k1": 0.9}  # same display name, other config
    dense = {"kind": "dense"}
    write_run(
        tmp_path,
        "r1",
        {"created_at": "2026-01-01T00:00:00+00:00"},
        [
            make_trial("p-bm25-0", [0.5, 0.5], config=bm25, ckey="pooled", repeat=0),
            make_trial("p-bm25-1", [0.7, 0.7], config=bm25, ckey="pooled", repeat=1),
            make_trial("p-dense-0", [0.9, 0.9], system="dense", config=dense, ckey="pooled"),
            make_trial("p-bm25b-0", [0.1, 0.1], config=bm25_b, ckey="pooled"),
        ],
    )
    write_run(
        tmp_path,
        "r2",
        {"created_at": "2026-01-02T00:00:00+00:00"},
        [
            make_trial("c-bm25-0", [0.3, 0.3], config=bm25, ckey="corpus", benchmark=REAL),
            make_trial("v-bm25-0", [0.2, 0.2], config=bm25, ckey="rev2", benchmark=REV2),
            make_trial("p-bm25-1", [0.7, 0.7], config=bm25, ckey="pooled", repeat=1),  # resumed
        ],
    )
    return tmp_path


def test_leaderboard_groups_never_mix(tmp_path: Path) -> None:
    groups = {g.comparability_key: g for g in leaderboard(_runs(tmp_path))}
    assert set(groups) == {"pooled", "corpus", "rev2"}
    pooled = groups["pooled"]
    assert pooled.metric == "ndcg@10"
    # two configs of one kind: each label says the setting that differs
    assert [line.system for line in pooled.lines] == ["dense", "bm25 k1=1.2", "bm25 k1=0.9"]
    dense, bm25, bm25_b = pooled.lines
    assert bm25.n_trials == 2  # p-bm25-1 is in both runs but counts once
    assert bm25.mean == pytest.approx(0.6)
    # over questions: both questions score 0.6 on average over the two trials
    assert bm25.interval == "questions" and bm25.low == bm25.high == pytest.approx(0.6)
    assert sorted(bm25.runs) == ["r1", "r2"]
    assert dense.low == dense.high == pytest.approx(0.9) and dense.n_trials == 1
    # the manifests only (--no-tests): over the trial means
    by_trials = {g.comparability_key: g for g in leaderboard(tmp_path, tests=False)}
    _, bm25, _ = by_trials["pooled"].lines
    half = T975_DF1 * math.sqrt(0.02) / math.sqrt(2)
    assert bm25.interval == "trials"
    assert bm25.low == pytest.approx(0.6 - half) and bm25.high == pytest.approx(0.6 + half)
    assert by_trials["pooled"].lines[0].low is None  # dense: one trial
    out = io.StringIO()
    render_leaderboard([by_trials["pooled"]], Console(file=out, width=200))
    assert "95% CI: t-interval over trials (no per-question scores read)" in out.getvalue()
    assert bm25_b.mean == pytest.approx(0.1) and bm25_b.system_id != bm25.system_id
    assert groups["corpus"].lines[0].mean == pytest.approx(0.3)
    assert groups["corpus"].benchmark["corpus_provenance"] == "corpus"
    assert groups["rev2"].lines[0].mean == pytest.approx(0.2)
    out = io.StringIO()
    render_leaderboard(list(groups.values()), Console(file=out, width=200))
    assert "pooled gold" in out.getvalue() and "0.6000" in out.getvalue()


def test_leaderboard_interval_is_over_questions(tmp_path: Path) -> None:
    """One trial per system (retrieval, greedy generation): the 95% interval comes from the
    spread of the per-question scores, the t-interval of their mean."""
    scores = [0.0, 1.0, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0]
    write_run(tmp_path, "r1", {}, [make_trial("t1", scores)])
    line = leaderboard(tmp_path)[0].lines[0]
    ci = bootstrap_mean_ci(scores)
    assert line.interval == "questions" and line.mean == pytest.approx(ci.mean)
    assert (line.low, line.high) == (ci.low, ci.high)
    assert 0 <= line.low < line.mean < line.high == 1.0  # a t-interval would pass 1
    assert mean_ci(scores).high > 1.0
    out = io.StringIO()
    render_leaderboard(leaderboard(tmp_path), Console(file=out, width=120))
    text = " ".join(out.getvalue().split())
    assert f"[{ci.low:.4f}, {ci.high:.4f}]" in text
    assert "95% CI: percentile bootstrap over questions" in text


def test_bootstrap_interval_of_a_mean() -> None:
    rng = np.random.default_rng(3)
    x = rng.random(400)
    ci = bootstrap_mean_ci(x)
    assert ci == bootstrap_mean_ci(x)  # seeded
    assert ci.n == 400 and ci.mean == pytest.approx(x.mean())
    t = mean_ci(x)  # many questions: the two agree
    assert ci.low == pytest.approx(t.low, abs=0.003) and ci.high == pytest.approx(t.high, abs=0.003)
    assert bootstrap_mean_ci([0.0, 1.0]) == MeanCI(0.5, 0.0, 1.0, 2)
    assert bootstrap_mean_ci([0.7, math.nan]) == MeanCI(0.7, None, None, 1)
    big = rng.random(250_000)  # past the budget: the t-interval
    assert bootstrap_mean_ci(big) == mean_ci(big)


def test_leaderboard_unknown_metric(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="ndcg@10"):
        leaderboard(_runs(tmp_path), metric="map@1000")
    assert leaderboard(tmp_path / "none") == []


def test_compare_pairs_by_question_id(tmp_path: Path) -> None:
    a = [0.0, 1.0, 0.0, 1.0, 0.0]  # by id, B - A = [1, 1, 3, 3, 5]
    ids = ["q0", "q1", "q2", "q3", "q4"]
    write_run(tmp_path, "A", {}, [make_trial("a1", a, ids=ids)])
    # B's rows in another order, plus a question A lacks: pairing must follow ids
    write_run(
        tmp_path,
        "B",
        {},
        [
            make_trial(
                "b1",
                [5.0, 1.0, 4.0, 2.0, 3.0, 9.0],
                system="dense",
                config={"kind": "dense"},
                ids=["q4", "q0", "q3", "q1", "q2", "qX"],
            ),
        ],
    )
    result = compare("A", "B", tmp_path)
    (line,) = result.lines
    assert (line.system_a, line.system_b, line.metric) == ("bm25", "dense", "ndcg@10")
    assert line.n == 5 and line.mean_a == pytest.approx(0.4) and line.mean_b == pytest.approx(3.0)
    assert line.diff == pytest.approx(2.6)
    # t = 2.6 / (sqrt(2.8) / sqrt(5)) = 3.4744, df 4; exact sign flips: 2 of 32 reach 13
    assert line.p_ttest == pytest.approx(0.025481, abs=1e-5)
    assert line.p_permutation == pytest.approx(2 / 32)
    out = io.StringIO()
    render_comparison(result, Console(file=out, width=200))
    assert "+2.6000" in out.getvalue()


def test_compare_matches_systems_and_averages_repeats(tmp_path: Path) -> None:
    cfg = {"kind": "bm25"}
    write_run(
        tmp_path,
        "A",
        {},
        [
            make_trial("a0", [0.2, 0.4], config=cfg, repeat=0),
            make_trial("a1", [0.4, 0.6], config=cfg, repeat=1),
            make_trial("ad", [0.9, 0.9], system="dense", config={"kind": "dense"}),
        ],
    )
    write_run(
        tmp_path,
        "B",
        {},
        [
            make_trial("b0", [0.5, 0.5], config=cfg),
            make_trial("bh", [0.1, 0.1], system="hybrid", config={"kind": "hybrid"}),
        ],
    )
    result = compare("A", "B", tmp_path)
    (line,) = result.lines
    assert line.system_a == line.system_b == "bm25"
    assert line.trials_a == 2 and line.mean_a == pytest.approx(0.4)  # (0.3 + 0.5) / 2
    assert line.diff == pytest.approx(0.1)
    assert any("dense" in n for n in result.notes) and any("hybrid" in n for n in result.notes)


def test_compare_refuses_across_groups(tmp_path: Path) -> None:
    write_run(tmp_path, "A", {}, [make_trial("a", [0.5], ckey="g-rev1")])
    write_run(tmp_path, "B", {}, [make_trial("b", [0.5], ckey="g-rev2", benchmark=REV2)])
    with pytest.raises(UserError, match="not comparable") as err:
        compare("A", "B", tmp_path)
    text = err.value.render()
    assert "g-rev1" in text and "g-rev2" in text
    assert f"revision: {'a' * 64} vs {'b' * 64}" in text
    write_run(tmp_path, "C", {}, [make_trial("c", [0.5], ckey="g-real", benchmark=REAL)])
    with pytest.raises(UserError, match="corpus_provenance: pooled_gold vs corpus"):
        compare("A", "C", tmp_path)


def test_leaderboard_marks_systems_not_different_from_the_best(tmp_path: Path) -> None:
    from test_results_within import exact_permutation_p

    best = [1.0, 0.9, 0.8, 1.0, 0.9, 0.7, 1.0, 0.8, 0.9, 1.0]
    close = [0.9, 1.0, 0.8, 0.9, 1.0, 0.7, 0.9, 0.8, 1.0, 0.9]  # a shuffle of best's scores
    worse = [0.2, 0.3, 0.1, 0.4, 0.2, 0.3, 0.1, 0.2, 0.3, 0.2]
    write_run(
        tmp_path,
        "R",
        {},
        [
            make_trial("kw", worse, system="w", config={"kind": "bm25", "k1": 0.1}),
            make_trial("kb", best, system="b", config={"kind": "dense"}),
            make_trial("kc", close, system="c", config={"kind": "bm25", "k1": 0.9}),
        ],
    )
    (group,) = leaderboard(tmp_path)
    first, second, third = group.lines
    assert first.system == "dense" and first.p_vs_best is None and not first.tie_with_best
    raw = [exact_permutation_p(best, close), exact_permutation_p(best, worse)]
    low, high = sorted(raw)  # Holm over two tests: 2 x the smaller, then max(that, larger)
    adjusted = {low: min(1.0, 2 * low), high: min(1.0, max(2 * low, high))}
    holm = [adjusted[x] for x in raw]
    assert [second.p_vs_best, third.p_vs_best] == pytest.approx(holm)
    assert second.tie_with_best and not third.tie_with_best and third.differs_from_best
    out = io.StringIO()
    render_leaderboard([group], Console(file=out, width=200))
    text = out.getvalue()
    assert "p vs #1" in text and f"≈ {holm[0]:.4f}" in text
    assert "not significantly different from #1" in text
    assert max(map(len, text.splitlines())) <= 100
    (quick,) = leaderboard(tmp_path, tests=False)  # manifests only: no marks
    assert not quick.tested and quick.lines[1].p_vs_best is None


def test_generation_leaderboard_shows_judge_scores_beside_em_f1(tmp_path: Path) -> None:
    import pyarrow as pa

    from lasagna.results import TrialResult

    def judged(key: str, f1: float, faith: float) -> TrialResult:
        rows = pa.table({"id": ["g1", "g2"], "f1": [f1, f1], "em": [0.0, 1.0]})
        return TrialResult(
            key=key,
            comparability_key="gen",
            track="generation",
            system="rag",
            config={"kind": "rag", "passages": int(f1 * 10)},
            benchmark=BENCH,
            metrics={"f1": f1, "em": 0.5, "faithfulness_score": faith, "pass_rate": 1.0},
            rows=rows,
        )

    write_run(tmp_path, "G", {}, [judged("g1", 0.4, 0.75), judged("g2", 0.2, 0.5)])
    (group,) = leaderboard(tmp_path)
    assert group.metric == "f1" and group.also == ["em", "faithfulness_score"]
    assert [line.also["faithfulness_score"] for line in group.lines] == [0.75, 0.5]
    out = io.StringIO()
    render_leaderboard([group], Console(file=out, width=200))
    header = next(line for line in out.getvalue().splitlines() if "system" in line)
    assert header.split() == [
        "#", "system", "f1", "95%", "CI", "p", "vs", "#1", "em", "faithfulness_score",
        "trials",
    ]  # fmt: skip
    assert "rag passages=4" in out.getvalue()
    assert "runs of #1, #2: G" in out.getvalue()  # 100 columns: the runs go below first
    narrow = io.StringIO()
    render_leaderboard([group], Console(file=narrow, width=80))
    header = next(line for line in narrow.getvalue().splitlines() if "system" in line)
    assert header.split()[-2:] == ["em", "trials"], header
    assert "runs of #1, #2: G" in narrow.getvalue()  # no room beside the names: under it
    assert "not shown: faithfulness_score (a wider terminal shows them)" in narrow.getvalue()
    tight = io.StringIO()  # too narrow for the names beside the scores: the names fold
    render_leaderboard([group], Console(file=tight, width=62))
    lines = tight.getvalue().splitlines()
    header = next(line for line in lines if "system" in line)
    assert header.split()[-3:] == ["vs", "#1", "trials"], header  # whole, not cut
    assert max(map(len, lines)) <= 62 and "passages" in tight.getvalue()
    for width, gone in ((54, ["trials"]), (46, ["trials", "p vs #1"])):
        squeezed = io.StringIO()  # too narrow even for the fixed columns: the least read go
        render_leaderboard([group], Console(file=squeezed, width=width))
        text = squeezed.getvalue()
        header = next(line for line in text.splitlines() if "system" in line)
        assert header.split()[-1] == ("#1" if "p vs #1" not in gone else "CI"), header
        assert max(map(len, text.splitlines())) <= width, text
        assert ", ".join(gone) in " ".join(text.split()), text
        assert ("≈: not significantly" in text) == ("p vs #1" not in gone)


def test_leaderboard_as_json_and_csv_for_programs(tmp_path: Path, capsys) -> None:
    """`--format json|csv`: the table's figures (intervals, tests) for a script or a paper."""
    import csv as csv_module

    from lasagna.cli import main

    root = _runs(tmp_path)
    groups = {g.comparability_key: g for g in leaderboard(root)}
    assert main(["results", "leaderboard", "--format", "json", "--output", str(root)]) == 0
    data = {g["comparability_key"]: g for g in json.loads(capsys.readouterr().out)}
    assert set(data) == set(groups)
    pooled = data["pooled"]
    assert pooled["metric"] == "ndcg@10" and pooled["track"] == "retrieval"
    assert [line["system"] for line in pooled["lines"]] == [
        line.system for line in groups["pooled"].lines
    ]
    first = pooled["lines"][0]
    assert (first["mean"], first["low"], first["high"], first["interval"]) == (
        groups["pooled"].lines[0].mean,
        groups["pooled"].lines[0].low,
        groups["pooled"].lines[0].high,
        "questions",
    )
    assert pooled["interval_caption"].startswith("95% CI: percentile bootstrap")
    assert main(["results", "leaderboard", "--format", "csv", "--output", str(root)]) == 0
    rows = list(csv_module.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == sum(len(g.lines) for g in groups.values())
    bm25 = next(r for r in rows if r["comparability_key"] == "pooled" and r["rank"] == "2")
    assert bm25["system"] == "bm25 k1=1.2" and float(bm25["mean"]) == pytest.approx(0.6)
    assert bm25["ci_over"] == "questions" and sorted(bm25["runs"].split()) == ["r1", "r2"]


def test_leaderboard_of_one_group(tmp_path: Path, capsys) -> None:
    """`--group`: a comparability key, its start or a benchmark name picks the groups shown
    (the others' rows are not read); a name that matches nothing lists some groups."""
    from lasagna.cli import main

    root = _runs(tmp_path)
    base = ["results", "leaderboard", "--format", "json", "--output", str(root)]
    for wanted, keys in (("pooled", ["pooled"]), ("corp", ["corpus"]), (REV2["name"], ["rev2"])):
        assert main([*base, "--group", wanted]) == 0
        assert [g["comparability_key"] for g in json.loads(capsys.readouterr().out)] == keys
    assert main([*base, "--group", BENCH["name"]]) == 0  # one benchmark, two groups
    assert sorted(g["comparability_key"] for g in json.loads(capsys.readouterr().out)) == [
        "corpus",
        "pooled",
    ]
    assert main([*base, "--group", "toy@bb"]) == 0  # a file's name without its local/
    assert [g["comparability_key"] for g in json.loads(capsys.readouterr().out)] == ["rev2"]
    assert main(["results", "leaderboard", "--group", "nope", "--output", str(root)]) == 2
    assert "no comparability group matches 'nope'" in capsys.readouterr().err


def test_compare_table_keeps_names_whole_on_a_narrow_terminal(tmp_path: Path) -> None:
    """Long labels fold at spaces, a metric's name never folds; below 100 columns p (t)
    goes first and the table says so."""
    ids = [f"q{i}" for i in range(8)]
    labels = ("rag bge-small k=5 judges=#35a9228b", "hybrid bm25+e5-small-v2 rrf_k=60")
    for run, shift in (("A", 0.0), ("B", 0.05)):
        trials = [
            make_trial(
                f"{run}{i}",
                [0.1 * j + shift + 0.01 * (j % 3) * (run == "B") for j in range(8)],
                system=label,
                config={"kind": label},
                ids=ids,
                metric="passage_recall@10",
            )
            for i, label in enumerate(labels)
        ]
        write_run(tmp_path, run, {}, trials)
    result = compare("A", "B", tmp_path)
    for width, dropped in ((100, False), (80, True)):
        out = io.StringIO()
        render_comparison(result, Console(file=out, width=width))
        text = out.getvalue()
        assert text.count("passage_recall@10") == 2, text
        words = {w for line in text.splitlines() for w in line.split()}
        assert {"judges=#35a9228b", "bm25+e5-small-v2", "rrf_k=60"} <= words, text
        assert ("p (t)" not in text.split("key")[0]) == dropped, text
        assert ("not shown: p (t)" in text) == dropped, text
        assert max(len(line.rstrip()) for line in text.splitlines()) <= width
