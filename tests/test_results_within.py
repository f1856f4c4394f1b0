"""`lasagna results compare RUN`: the systems of one run compared pairwise, each figure
checked against an independent computation (SciPy's ttest_rel, an exact permutation test
enumerated here, Holm's procedure by its definition)."""

from __future__ import annotations

import itertools
import statistics
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from test_results_store import make_trial

from lasagna.cli import main
from lasagna.errors import UserError
from lasagna.metrics.corrections import adjust
from lasagna.metrics.stats import effect_size, paired
from lasagna.results import write_run
from lasagna.results.store import open_run
from lasagna.results.within import compare_within

# three systems on the same 11 questions (n <= 13: the randomization test is exact)
A = [0.9, 0.8, 1.0, 0.7, 0.9, 0.6, 1.0, 0.8, 0.9, 0.7, 1.0]
B = [0.5, 0.7, 0.6, 0.4, 0.8, 0.3, 0.5, 0.6, 0.4, 0.7, 0.5]
C = [0.5, 0.6, 0.7, 0.4, 0.8, 0.4, 0.5, 0.6, 0.5, 0.6, 0.4]


def exact_permutation_p(a: list[float], b: list[float]) -> float:
    """Every one of the 2^n sign vectors of the differences: the share whose |mean| reaches
    the observed |mean| (two-sided)."""
    d = [y - x for x, y in zip(a, b, strict=True)]
    observed = abs(sum(d) / len(d))
    hits = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        if abs(sum(s * v for s, v in zip(signs, d, strict=True)) / len(d)) >= observed - 1e-12:
            hits += 1
    return hits / 2 ** len(d)


def holm_rejects(p: list[float], alpha: float) -> set[int]:
    """Holm's step-down procedure as defined: walk the p-values from the smallest, reject
    while p_(k) <= alpha / (m - k) (k from 0), stop at the first that is not."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    rejected: set[int] = set()
    for k, i in enumerate(order):
        if p[i] > alpha / (len(p) - k):
            break
        rejected.add(i)
    return rejected


def test_holm_and_bonferroni_by_their_definitions() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        m = int(rng.integers(1, 9))
        p = [float(x) for x in rng.random(m) ** 3]  # many small p-values
        holm = adjust(p, "holm")
        bonf = adjust(p, "bonferroni")
        assert bonf == [min(1.0, x * m) for x in p]
        assert all(h <= b + 1e-15 for h, b in zip(holm, bonf, strict=True))
        for alpha in (0.01, 0.05, 0.2):
            assert {i for i, h in enumerate(holm) if h <= alpha} == holm_rejects(p, alpha)
    assert adjust([0.01, None, 0.04], "holm") == [0.02, None, 0.04]  # None: not a test
    assert adjust([0.01, 0.04], "none") == [0.01, 0.04]
    with pytest.raises(ValueError, match="holm"):
        adjust([0.1], "sidak")


def test_paired_tests_and_effect_size_against_independent_computations() -> None:
    rng = np.random.default_rng(3)
    for n in (2, 5, 9, 13):
        a = rng.integers(0, 4, n) / 3  # ties and repeated values, as per-question scores are
        b = np.clip(a + rng.normal(0.1, 0.3, n), 0, 1)
        test = paired(a, b)
        assert test.p_ttest == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-9)
        assert test.p_permutation == pytest.approx(exact_permutation_p(list(a), list(b)))
        d = list(b - a)
        assert test.effect == pytest.approx(statistics.mean(d) / statistics.stdev(d))
    assert effect_size(np.zeros(3), np.zeros(3)) == 0.0
    assert effect_size(np.zeros(3), np.ones(3)) is None  # every question moved by 1: no sd


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    trials = [
        make_trial("kb" * 8, B, system="bm25", config={"kind": "bm25", "k1": 0.9}),
        make_trial("ka" * 8, A, system="dense", config={"kind": "dense"}),
        make_trial("kc" * 8, C, system="hybrid", config={"kind": "hybrid"}),
    ]
    write_run(tmp_path, "R1", {"created_at": "2026-01-01T00:00:00+00:00"}, trials)
    return tmp_path


def test_every_pair_of_a_run_with_holm(run_dir: Path) -> None:
    within = compare_within(open_run("R1", run_dir))
    (group,) = within.groups
    assert group.metric == "ndcg@10"
    assert [s.label for s in group.systems] == ["dense", "bm25", "hybrid"]  # best first
    scores = {"dense": A, "bm25": B, "hybrid": C}
    pairs = [(p.a, p.b) for p in group.pairs]
    assert pairs == [("dense", "bm25"), ("dense", "hybrid"), ("bm25", "hybrid")]
    raw_t = [stats.ttest_rel(scores[b], scores[a]).pvalue for a, b in pairs]
    raw_perm = [exact_permutation_p(scores[a], scores[b]) for a, b in pairs]
    for p, t, r in zip(group.pairs, raw_t, raw_perm, strict=True):
        assert p.n == 11 and p.diff == pytest.approx(np.mean(scores[p.b]) - np.mean(scores[p.a]))
        assert p.p_ttest == pytest.approx(t, rel=1e-9)
        assert p.p_permutation == pytest.approx(r)
    # Holm over the three tests, as defined: the i-th smallest times (3 - i), then monotone
    order = sorted(range(3), key=lambda i: raw_perm[i])
    expected = [0.0] * 3
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, raw_perm[i] * (3 - k)))
        expected[i] = running
    assert [p.p_permutation_adj for p in group.pairs] == pytest.approx(expected)
    assert [p.significant for p in group.pairs] == [x < 0.05 for x in expected]
    assert group.pairs[0].significant and not group.pairs[2].significant
    none = compare_within(open_run("R1", run_dir), correction="none").groups[0]
    assert [p.p_permutation_adj for p in none.pairs] == pytest.approx(raw_perm)


def test_cli_narrows_baseline_and_names_by_id_prefix(run_dir: Path, capsys) -> None:
    base = ["results", "compare", "R1", "--output", str(run_dir)]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "dense" in out and "Holm-adjusted over 3 comparison(s)" in out
    assert "p (perm)" in out and " *" in out
    run = open_run("R1", run_dir)
    hybrid_id = next(t.system_id for t in run.trials if t.system == "hybrid")
    within = compare_within(run, systems=["bm25", hybrid_id[:6]])
    assert [(p.a, p.b) for p in within.groups[0].pairs] == [("bm25", "hybrid")]
    within = compare_within(run, baseline="hybrid")
    assert [(p.a, p.b) for p in within.groups[0].pairs] == [("hybrid", "dense"), ("hybrid", "bm25")]
    assert main([*base, "--baseline", "hybrid", "--correction", "bonferroni"]) == 0
    assert "Bonferroni-adjusted over 2 comparison(s)" in capsys.readouterr().out
    assert main([*base, "--systems", "bm25", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "'nosuch'" in err and "--systems" in err and "dense" in err
    with pytest.raises(UserError, match="map@1000"):
        compare_within(run, metrics=["map@1000"])
    assert main([*base[:3], "R1", "--systems", "bm25", "--output", str(run_dir)]) == 2


def test_a_narrow_terminal_keeps_both_names_and_the_deciding_p(run_dir: Path) -> None:
    import io

    from rich.console import Console

    from lasagna.results.compare_render import render_within

    within = compare_within(open_run("R1", run_dir))
    for width, left in ((100, None), (60, "not shown: d, p (t) (a wider terminal shows them)")):
        out = io.StringIO()
        render_within(within, Console(file=out, width=width))
        lines = out.getvalue().splitlines()
        header = next(line for line in lines if line.startswith("A "))
        assert header.split()[:2] == ["A", "B"] and header.endswith("p (perm)"), header
        assert max(map(len, lines)) <= width
        body = lines[lines.index(header) + 2 :]
        assert body[0].split()[:2] == ["dense", "bm25"] and "*" in body[0], body
        if left:
            assert left in out.getvalue() and " d " not in header
        else:
            assert "p (t)" in header and "not shown" not in out.getvalue()
        # the title and the key are lines of their own, not wrapped to the table's width
        g = within.groups[0]
        assert lines[lines.index(header) - 1] == f"{g.title} · {g.metric}"
        assert any(line.startswith(f"key {g.comparability_key} · p ") for line in lines)


def test_many_pairs_point_at_baseline(tmp_path: Path) -> None:
    """Seven systems are 21 pairs: the table says how to compare each with the best alone."""
    import io

    from rich.console import Console

    from lasagna.results.compare_render import render_within

    rng = np.random.RandomState(0)
    trials = [
        make_trial(f"k{i}", list(rng.rand(11)), config={"kind": "bm25", "k1": 0.5 + i / 10})
        for i in range(7)
    ]
    write_run(tmp_path, "R7", {}, trials)
    run = open_run("R7", tmp_path)
    out = io.StringIO()
    within = compare_within(run)
    render_within(within, Console(file=out, width=100))
    best = within.groups[0].systems[0].label
    text = " ".join(out.getvalue().split())
    assert f"note: 21 pairs; --baseline '{best}' compares each system with the best" in text
    assert "(6 comparisons" in text
    out = io.StringIO()
    render_within(compare_within(run, baseline=best), Console(file=out, width=100))
    assert "--baseline" not in out.getvalue() and "over 6 comparison(s)" in out.getvalue()


def test_compare_as_csv_and_json_records(run_dir: Path, capsys) -> None:
    """`--format csv|json`: a record per pair with the table's figures, for a script."""
    import csv
    import io
    import json

    within = compare_within(open_run("R1", run_dir))
    argv = ["results", "compare", "R1", "--output", str(run_dir)]
    assert main([*argv, "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [(r["a"], r["b"]) for r in records] == [(p.a, p.b) for p in within.groups[0].pairs]
    first, pair = records[0], within.groups[0].pairs[0]
    assert first["diff"] == pair.diff and first["p_permutation_adj"] == pair.p_permutation_adj
    assert first["n"] == pair.n and first["significant"] == pair.significant
    assert first["metric"] == "ndcg@10" and first["correction"] == "holm"
    assert first["diff_low"] == pair.diff_low < first["diff"] < first["diff_high"]
    assert main([*argv, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["a"], r["b"]) for r in rows] == [(r["a"], r["b"]) for r in records]
    assert float(rows[0]["p_ttest_adj"]) == pytest.approx(first["p_ttest_adj"])
    # two runs: B - A per system
    again = make_trial("kd" * 8, A, system="bm25", config={"kind": "bm25", "k1": 0.9})
    write_run(run_dir, "R2", {"created_at": "2026-01-02T00:00:00+00:00"}, [again])
    two = ["results", "compare", "R1", "R2", "--output", str(run_dir), "--format", "json"]
    assert main(two) == 0
    (line,) = json.loads(capsys.readouterr().out)
    assert (line["run_a"], line["run_b"], line["system_a"]) == ("R1", "R2", "bm25")
    assert line["mean_b"] == pytest.approx(statistics.fmean(A))
    # one run twice: nothing to compare, and the fix names what would compare
    assert main(["results", "compare", "R1", "R1", "--output", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert "RUN and RUN_B are both run R1" in err and "lasagna results compare R1" in err


def test_a_run_of_one_system_says_so_without_the_tables_legend(tmp_path: Path, capsys) -> None:
    trials = [make_trial("k1", [0.5, 1.0], system="bm25", config={"kind": "bm25"})]
    write_run(tmp_path, "R1", {"created_at": "2026-01-01T00:00:00+00:00"}, trials)
    assert main(["results", "compare", "R1", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "fewer than two systems to compare" in out and "A is the better" not in out


def test_a_label_of_a_wider_group_names_the_run_system_that_holds_its_words(tmp_path: Path):
    """The leaderboard (every run) says `bm25 k1=0.9` where a run of a b grid says `bm25
    k1=0.9 b=0.75`: that name picks the system holding its words, or is refused as
    ambiguous with the candidates named, never "no system is named"."""
    from lasagna.results.within import find_system

    configs = {
        "s1": {"kind": "bm25", "k1": 0.9, "b": 0.75},
        "s2": {"kind": "bm25", "k1": 0.9, "b": 0.4},
        "s3": {"kind": "bm25", "k1": 1.5, "b": 0.4},
    }
    labels = {"s1": "bm25 k1=0.9 b=0.75", "s2": "bm25 k1=0.9 b=0.4", "s3": "bm25 b=0.4"}
    systems = {sid: [] for sid in configs}
    assert find_system("bm25 k1=0.9 b=0.75", systems, labels) == ["s1"]
    assert find_system("bm25 b=0.75", systems, labels) == ["s1"]
    assert find_system("bm25 k1=0.9", systems, labels) == ["s1", "s2"]  # ambiguous
    assert find_system("dense k1=0.9", systems, labels) == []
    trials = [
        make_trial(f"k{i}" * 8, A, system="bm25", config=config)
        for i, config in enumerate(configs.values())
    ]
    write_run(tmp_path, "R1", {}, trials)
    base = ["results", "compare", "R1", "--output", str(tmp_path)]
    assert main([*base, "--systems", "bm25 b=0.75", "bm25 k1=1.5"]) == 0
    assert main([*base, "--systems", "bm25 k1=0.9", "bm25 k1=1.5"]) == 2
