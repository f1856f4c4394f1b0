"""What the command line tells a user: filters as YAML scalars, sampling notes, error
messages, compare and leaderboard notes, export file names, resume and table widths."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pyarrow as pa
import pytest
from rich.console import Console
from test_data_beir import make_beir
from test_results_store import BENCH, make_trial

from lasagna import cli
from lasagna.data import load_benchmark
from lasagna.errors import UserError
from lasagna.results import TrialResult, compare, render_comparison, write_run
from lasagna.sample import sample_path

SAMPLE = sample_path()


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _years_file(tmp_path: Path) -> Path:
    rows = [
        {
            "id": f"q{i}",
            "question": f"question {i}",
            "answer": f"answer {i}",
            "contexts": [f"passage {i} holds answer {i}"],
            "metadata": {"year": 2020 + i % 2, "hard": i % 3 == 0, "score": 1.5},
        }
        for i in range(6)
    ]
    return _jsonl(tmp_path / "years.jsonl", rows)


def _plan_rows(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


# ---------------------------------------------------------------- 1. --filter values
def test_cli_filter_values_are_yaml_scalars() -> None:
    parsed = cli.parse_filters(
        ["year=2020", "hard=true", "score=1.5", "kind=a,b", "day=2020-01-01", "none=null"]
        + ["label=yes", "on=off"]
    )
    assert parsed == {
        "year": 2020,
        "hard": True,
        "score": 1.5,
        "kind": ["a", "b"],
        "day": "2020-01-01",  # a YAML date is not a metadata scalar: kept as typed
        "none": None,
        "label": "yes",  # YAML 1.2: a human label "yes" is matched, not the boolean
        "on": "off",
    }


@pytest.mark.parametrize(
    ("flt", "kept"), [("year=2020", 3), ("hard=true", 2), ("year=2020,2021", 6), ("score=1.5", 6)]
)
def test_cli_filter_matches_numbers_and_booleans(tmp_path, flt, kept) -> None:
    data = _years_file(tmp_path)
    argv = ["benchmark", "plan", str(data), "--filter", flt, "--output", str(tmp_path / "o")]
    plan = cli.plan_from_args(cli.build_parser().parse_args(argv))
    assert len(plan.benchmarks[0].benchmark.rows) == kept


# ---------------------------------------------------------------- 8. messages
def test_n_samples_zero_names_the_flag(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as exit:
        cli.main(["benchmark", "run", str(SAMPLE), "--n-samples", "0"])
    err = capsys.readouterr().err
    assert exit.value.code == 2
    assert "--n-samples" in err and "positive whole number" in err
    assert "benchmarks[0]" not in err and "greater_than" not in err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--trials-per-driver", "-3"], "'-3' is not a whole number >= 0"),
        (["--trials-per-driver", "1.5"], "'1.5' is not a whole number >= 0"),
        (["--stall-timeout", "-5"], "'-5' is not a number >= 0"),
        (["--stall-timeout", "nan"], "'nan' is not a number >= 0"),
    ],
)
def test_a_negative_count_or_period_names_the_flag(argv, said, tmp_path, capsys) -> None:
    """They ran: `-3` trials per driver as `1 trials run in 0 driver processes` and no run
    written, a negative stall timeout as none."""
    with pytest.raises(SystemExit) as exit:
        cli.main(["benchmark", "run", str(SAMPLE), *argv, "--output", str(tmp_path)])
    err = " ".join(capsys.readouterr().err.split())
    assert exit.value.code == 2 and f"argument {argv[0]}: {said}" in err, err
    assert os.listdir(tmp_path) == []


def test_n_samples_larger_than_the_data_says_so(tmp_path, capsys) -> None:
    argv = ["benchmark", "plan", str(SAMPLE), "--n-samples", "500", "--output", str(tmp_path)]
    code, _, err = _plan_rows(capsys, argv)
    assert code == 0
    assert "--n-samples 500 is more than the 26 rows" in err and "all 26 are scored" in err


def test_repeats_of_systems_that_sample_nothing_say_so(tmp_path, capsys) -> None:
    """`trials: N` of retrieval (or greedy generation) gives N equal scores: said before it
    runs; a generator sampling at temperature > 0 draws anew, so nothing is said."""
    argv = ["benchmark", "plan", str(SAMPLE), "--trials", "3", "--output", str(tmp_path)]
    code, _, err = _plan_rows(capsys, argv)
    assert code == 0 and "--trials 3: nothing here samples" in err and "speed only" in err
    sweep = tmp_path / "s.yaml"
    greedy = "{kind: closed_book, model: {max_tokens: 8}}"
    sweep.write_text(f"benchmarks: [{{name: sample}}]\ngenerators: [{greedy}]\ntrials: 2\n")
    code, _, err = _plan_rows(capsys, ["benchmark", "plan", str(sweep)])
    assert code == 0 and "trials: 2: nothing here samples" in err
    sampled = "{kind: closed_book, model: {max_tokens: 8, temperature: 0.8}}"
    sweep.write_text(
        f"benchmarks: [{{name: sample}}]\ngenerators: [{greedy}, {sampled}]\ntrials: 2\n"
    )
    code, _, err = _plan_rows(capsys, ["benchmark", "plan", str(sweep)])
    assert code == 0 and "samples" not in err
    code, _, err = _plan_rows(capsys, ["benchmark", "plan", str(SAMPLE), "--output", str(tmp_path)])
    assert code == 0 and "samples" not in err  # one repeat: nothing to say


def test_single_file_errors_do_not_speak_of_a_sweep(tmp_path, capsys) -> None:
    bad = _jsonl(tmp_path / "bad.jsonl", [{"question": "q", "anwser": "a"}])
    code, _, err = _plan_rows(capsys, ["benchmark", "run", str(bad)])
    assert code == 2
    assert f"1 problem(s) with {bad}" in err and "sweep" not in err
    code, _, err = _plan_rows(capsys, ["benchmark", "run", str(tmp_path / "nothere.jsonl")])
    assert code == 2
    assert "no such file or folder" in err and "current folder" in err and "sweep" not in err
    data = _years_file(tmp_path)
    code, _, err = _plan_rows(capsys, ["benchmark", "run", str(data), "--filter", "topic=x"])
    assert code == 2 and "field '--filter topic'" in err and "benchmarks[0]" not in err


def test_csv_header_in_the_wrong_case_gets_did_you_mean(tmp_path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("id,Question,Answer,context\nq1,Who?,Me,Some passage\n")
    with pytest.raises(UserError) as err:
        load_benchmark(path)
    text = err.value.render()
    assert "did you mean 'answer'? (names are lower case)" in text
    assert "did you mean 'question'?" in text and "did you mean 'contexts'?" in text
    assert "has no 'question' column" not in text  # `Question` is already reported


def test_dangling_queries_are_queries(tmp_path) -> None:
    folder = make_beir(tmp_path, {"test": "q9\td1\t1\n"})
    with pytest.raises(UserError) as err:
        load_benchmark(folder)
    text = err.value.render()
    assert "add the missing queries to queries.jsonl" in text and "querys" not in text


def test_plan_refuses_an_unknown_model_as_run_does(tmp_path, capsys) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"benchmarks:\n  - {{path: {SAMPLE}}}\n"
        "generators:\n  - kind: closed_book\n"
        f"    model: {{model: {tmp_path / 'no-such-model'}, backend: transformers}}\n"
    )
    code, out, err = _plan_rows(capsys, ["benchmark", "plan", str(sweep)])
    assert code == 2
    assert "does not exist" in err and "pending" not in out


# ---------------------------------------------------------------- 3. compare
ALL_RETRIEVAL = ("ndcg@10", "recall@10", "recall@100", "mrr@10", "map@10", "p@10", "ndcg@1")


def _trial(key: str, ckey: str, track: str, metrics: tuple[str, ...], bench: dict) -> TrialResult:
    ids = ["q1", "q2", "q3"]
    cols = {m: pa.array([0.25, 0.5, 0.75], pa.float64()) for m in metrics}
    return TrialResult(
        key=key,
        comparability_key=ckey,
        track=track,  # type: ignore[arg-type]
        system="bm25" if track == "retrieval" else "rag",
        config={"kind": track},
        benchmark=bench,
        metrics={m: 0.5 for m in metrics},
        rows=pa.table({"id": ids, **cols}),
    )


@pytest.fixture
def two_group_runs(tmp_path: Path) -> Path:
    other = BENCH | {"name": "local/other@bbbbbbbbbbbb", "revision": "b" * 64}
    gen = ("em", "f1", "has_ans_f1", "no_ans_em", "has_ans_em", "no_ans_f1")
    for run in ("A", "B"):
        write_run(
            tmp_path,
            run,
            {},
            [
                _trial(f"{run}1", "group-one", "retrieval", ALL_RETRIEVAL, BENCH),
                _trial(f"{run}2", "group-two", "retrieval", ALL_RETRIEVAL, other),
                _trial(f"{run}3", "group-gen", "generation", gen, BENCH),
            ],
        )
    return tmp_path


def _render(comparison) -> str:
    out = io.StringIO()
    render_comparison(comparison, Console(file=out, width=100))
    return out.getvalue()


def test_compare_one_section_per_group_main_metrics(two_group_runs: Path) -> None:
    result = compare("A", "B", two_group_runs)
    assert list(result.groups) == ["group-one", "group-two", "group-gen"]
    by_group = {
        k: [x.metric for x in result.lines if x.comparability_key == k] for k in result.groups
    }
    assert by_group["group-one"] == ["ndcg@10", "recall@10", "recall@100", "mrr@10"]
    assert by_group["group-gen"] == ["em", "f1", "has_ans_f1", "no_ans_em"]
    text = _render(result)
    for key in ("key group-one", "key group-two", "key group-gen"):
        assert text.count(key) == 1
    assert "local/other@bbbbbbbbbbbb" in text and "generation" in text
    assert "map@10" not in text
    everything = compare("A", "B", two_group_runs, all_metrics=True)
    assert len([x for x in everything.lines if x.comparability_key == "group-one"]) == 7


def test_compare_metric_names_the_groups_it_leaves_out(two_group_runs: Path) -> None:
    result = compare("A", "B", two_group_runs, metric="ndcg@10")
    assert {x.comparability_key for x in result.lines} == {"group-one", "group-two"}
    assert any("group-gen" in n and "'ndcg@10'" in n for n in result.notes)
    with pytest.raises(UserError, match="not in both runs"):
        compare("A", "B", two_group_runs, metric="ndcg@1000")


def test_cli_compare_all_metrics_flag(two_group_runs: Path, capsys) -> None:
    out_dir = str(two_group_runs)
    assert cli.main(["results", "compare", "A", "B", "--output", out_dir]) == 0
    short = capsys.readouterr().out
    assert cli.main(["results", "compare", "A", "B", "--output", out_dir, "--all-metrics"]) == 0
    full = capsys.readouterr().out
    assert "map@10" not in short and "map@10" in full


def test_leaderboard_metric_says_which_groups_it_drops(two_group_runs: Path, capsys) -> None:
    code = cli.main(
        ["results", "leaderboard", "--metric", "ndcg@10", "--output", str(two_group_runs)]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "not shown" in out and "group-gen" in out


# ---------------------------------------------------------------- 4. export trec + qrels
def _ranked_run(tmp_path: Path, systems: tuple[str, ...]) -> tuple[Path, dict, dict]:
    """A run of real pooled-gold judgments: each system ranks every document, its own
    relevant ones at a rank that differs by system, so the scores differ."""
    from lasagna.metrics.retrieval import mean_metrics, score_queries

    data = _years_file(tmp_path)
    bench = load_benchmark(data)
    docs = sorted(bench.corpus)
    trials, expected = [], {}
    for n, system in enumerate(systems):
        ranked = {}
        for i, row in enumerate(bench.rows):
            rel = sorted(bench.qrels[row.id])
            others = [d for d in docs if d not in rel]
            shift = i % 3 if n == 0 else 4  # the second system ranks its own 5th
            order = others[:shift] + rel + others[shift:]
            ranked[row.id] = {d: float(len(order) - r) for r, d in enumerate(order)}
        per_query = score_queries(bench.qrels, ranked)
        expected[system] = mean_metrics(per_query)
        ids = [r.id for r in bench.rows]
        rows = pa.table(
            {
                "id": ids,
                "doc_ids": [list(ranked[q]) for q in ids],
                "scores": [list(ranked[q].values()) for q in ids],
                "ndcg@10": [per_query[q]["ndcg@10"] for q in ids],
            }
        )
        trials.append(
            TrialResult(
                key=f"key{n}" * 4,
                comparability_key="group",
                track="retrieval",
                system=system,
                config={"kind": system},
                benchmark={
                    "name": bench.name,
                    "revision": bench.revision,
                    "source": str(data),
                    "format": "jsonl",
                    "split": None,
                    "n_samples": None,
                    "filters": {},
                    "sample_seed": None,
                    "corpus_provenance": "pooled_gold",
                },
                metrics=expected[system],
                rows=rows,
            )
        )
    write_run(tmp_path / "out", "r1", {}, trials)
    return tmp_path / "out", expected, bench.qrels


def test_export_names_files_says_so_and_trec_eval_scores_them(tmp_path, capsys) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval (dev extra) missing")
    out, expected, qrels = _ranked_run(tmp_path, ("bm25", "dense:all-MiniLM-L6-v2"))
    argv = ["results", "export", "r1", "--output", str(out), "--out"]
    assert cli.main([*argv, str(tmp_path / "run.trec")]) == 2  # a file name, two trials
    err = capsys.readouterr().err
    assert "give a folder" in err and not (tmp_path / "run.trec").exists()
    assert cli.main([*argv, str(tmp_path / "trec")]) == 0
    err = capsys.readouterr().err
    names = sorted(p.name for p in (tmp_path / "trec").iterdir())
    stem = "local_years@" + load_benchmark(tmp_path / "years.jsonl").revision[:12]
    assert names == [
        f"{stem}.qrels",
        f"{stem}__bm25.trec",
        f"{stem}__dense_all-MiniLM-L6-v2.trec",
    ]
    for name in names:
        assert f"wrote {tmp_path / 'trec' / name}" in err
    with open(tmp_path / "trec" / f"{stem}.qrels") as fh:
        exported_qrels = pytrec_eval.parse_qrel(fh)
    assert exported_qrels == {q: dict(d) for q, d in qrels.items()}
    for system, file in (("bm25", "bm25"), ("dense:all-MiniLM-L6-v2", "dense_all-MiniLM-L6-v2")):
        with open(tmp_path / "trec" / f"{stem}__{file}.trec") as fh:
            run = pytrec_eval.parse_run(fh)
        scores = pytrec_eval.RelevanceEvaluator(exported_qrels, {"ndcg_cut.10"}).evaluate(run)
        ndcg = sum(s["ndcg_cut_10"] for s in scores.values()) / len(scores)
        assert ndcg == pytest.approx(expected[system]["ndcg@10"], abs=1e-12)
    assert expected["bm25"]["ndcg@10"] != expected["dense:all-MiniLM-L6-v2"]["ndcg@10"]


def test_export_one_trial_gets_its_qrels_beside_it(tmp_path, capsys) -> None:
    out, _, qrels = _ranked_run(tmp_path, ("bm25",))
    target = tmp_path / "x" / "run.trec"
    assert cli.main(["results", "export", "r1", "--output", str(out), "--out", str(target)]) == 0
    err = capsys.readouterr().err
    assert f"wrote {target}: TREC run of bm25" in err and "run.qrels: qrels of" in err
    lines = (tmp_path / "x" / "run.qrels").read_text().splitlines()
    assert len(lines) == sum(len(d) for d in qrels.values())
    (tmp_path / "years.jsonl").write_text("{}\n")  # the data changed: the run is still written
    assert cli.main(["results", "export", "r1", "--output", str(out), "--out", str(target)]) == 0
    assert "qrels of bm25 not written" in capsys.readouterr().err


def test_trec_file_names_are_safe_and_distinct() -> None:
    from lasagna.results.export import trec_file_names

    def meta(key: str, repeat: int) -> TrialResult:
        t = _trial(key, "g", "retrieval", ("ndcg@10",), BENCH | {"name": "tickets@0a1b"})
        t.system, t.repeat = "dense:all/MiniLM", repeat
        return t

    a, b, c = meta("k" * 20, 0), meta("m" * 20, 1), meta("n" * 20, 1)
    assert trec_file_names([a.meta, b.meta, c.meta]) == [
        "tickets@0a1b__dense_all_MiniLM__rep0.trec",
        "tickets@0a1b__dense_all_MiniLM__rep1__mmmmmmmmmmmm.trec",
        "tickets@0a1b__dense_all_MiniLM__rep1__nnnnnnnnnnnn.trec",
    ]


# ---------------------------------------------------------------- 6. "answers": []
@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_empty_answers_list_is_an_error_unless_unanswerable(tmp_path, suffix) -> None:
    rows = [
        {"id": "a1", "question": "q1", "answers": ["yes"], "contexts": ["c1"]},
        {"id": "a2", "question": "q2", "answers": [], "contexts": ["c2"]},
    ]
    path = tmp_path / f"data{suffix}"
    text = json.dumps(rows) if suffix == ".json" else "".join(json.dumps(r) + "\n" for r in rows)
    path.write_text(text)
    with pytest.raises(UserError) as err:
        load_benchmark(path)
    (problem,) = err.value.problems
    assert problem.field == "answers" and "empty list" in problem.message
    assert problem.where and ("2" in problem.where or "a2" in problem.where)
    rows[1]["metadata"] = {"unanswerable": True}
    text = json.dumps(rows) if suffix == ".json" else "".join(json.dumps(r) + "\n" for r in rows)
    path.write_text(text)
    bench = load_benchmark(path)
    assert bench.rows[1].unanswerable and bench.rows[1].answers == []


# ---------------------------------------------------------------- 5. and 7. seconds, resume
def test_trial_seconds_count_the_engine_load_once() -> None:
    from lasagna.results.show import trial_seconds

    old = {"index": 0.2, "generate_and_score": 27.0, "engine_load": 14.6}  # load is inside
    assert trial_seconds(old) == pytest.approx(27.2)
    assert trial_seconds(old | {"total": 27.5}) == 27.5


def _restorable_plan(tmp_path: Path):
    """The speed plan of the sample, with a checkpoint for each trial (written by the store,
    dated a day ago), so a --resume has nothing to run and needs no Ray."""
    from lasagna.results import save_trial
    from lasagna.sweep import build_plan, sweep_for_path

    sweep, base = sweep_for_path(SAMPLE, "speed", output=str(tmp_path / "results"))
    plan = build_plan(sweep, base)
    for t in plan.trials:
        trial = _trial(t.key, t.comparability_key, "retrieval", ("ndcg@10",), BENCH)
        trial.started_at = "2026-01-01T00:00:00+00:00"
        save_trial(plan.output, trial)
    return plan


def test_resume_with_nothing_left_references_the_run(tmp_path, capsys) -> None:
    from rich.console import Console

    from lasagna.engine.driver import run_plan
    from lasagna.results import list_runs, sql

    plan = _restorable_plan(tmp_path)
    console = Console(file=io.StringIO(), width=100)
    first = run_plan(plan, resume=True, console=console)  # checkpoints only: one run written
    (only,) = list_runs(plan.output)
    assert only.run_id == first.run_id
    assert only.created_at != "2026-01-01T00:00:00+00:00"  # the run's own time, not a trial's
    again = run_plan(plan, resume=True, console=console)
    assert again.run_id == first.run_id and len(list_runs(plan.output)) == 1
    assert "no new run is written" in console.file.getvalue()
    rows = sql(plan.output, "SELECT count(*) AS n FROM rows").column("n")[0].as_py()
    assert rows == 3 * len(plan.trials)


def test_sql_rows_count_a_restored_trial_once(tmp_path) -> None:
    from lasagna.results import sql

    out = tmp_path / "results"
    a = _trial("k" * 20, "g", "retrieval", ("ndcg@10",), BENCH)
    b = _trial("m" * 20, "g", "retrieval", ("ndcg@10",), BENCH)
    write_run(out, "r1", {"created_at": "2026-01-01T00:00:00+00:00"}, [a])
    write_run(
        out, "r2", {"created_at": "2026-01-02T00:00:00+00:00", "restored_trials": [a.key]}, [a, b]
    )
    got = sql(out, "SELECT run_id, trial_key, count(*) AS n FROM rows GROUP BY ALL ORDER BY 1, 2")
    assert got.to_pylist() == [
        {"run_id": "r1", "trial_key": a.key, "n": 3},
        {"run_id": "r2", "trial_key": b.key, "n": 3},
    ]
    trials = sql(out, "SELECT run_id, restored FROM trials ORDER BY run_id, trial_key")
    assert trials.to_pylist() == [
        {"run_id": "r1", "restored": False},
        {"run_id": "r2", "restored": True},
        {"run_id": "r2", "restored": False},
    ]


# ---------------------------------------------------------------- 2. summary of a sweep
def test_summary_of_several_benchmarks_tells_rows_apart_in_100_columns() -> None:
    from lasagna.engine.driver import RunOutcome
    from lasagna.engine.summary import render_summary

    other = BENCH | {"name": "local/beir_scifact@91fcaefbbeee"}
    metrics = ("ndcg@10", "recall@10", "recall@100", "mrr@10", "map@10", "p@10")
    trials = []
    for bench in (BENCH, other):
        for system in ("bm25", "dense:all-MiniLM-L6-v2"):
            t = _trial(system + bench["name"], bench["name"], "retrieval", metrics, bench)
            t.system = system
            trials.append(t)
    out = io.StringIO()
    render_summary(RunOutcome("r1", "/x/r1", trials, []), Console(file=out, width=160))
    text = out.getvalue()
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 100
    sections = text.split(" — run r1")[:-1]
    assert [s.split("\n")[-1].split(" ")[0] for s in sections] == [BENCH["name"], other["name"]]
    for section in text.split(" — run r1")[1:]:
        assert section.count("bm25") == 1 and section.count("dense:all-MiniLM-L6-v2") == 1


# ---------------------------------------------------------------- tables fit 100 columns
def test_results_tables_fit_100_columns_without_cutting_names(
    two_group_runs, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # what the CLI gives a pipe (xdist workers say 80)
    out = str(two_group_runs)
    commands = [
        ["results", "list"],
        ["results", "show", "A"],
        ["results", "leaderboard"],
        ["results", "compare", "A", "B"],
    ]
    for argv in commands:
        assert cli.main([*argv, "--output", out]) == 0
        text = capsys.readouterr().out
        assert max(len(line.rstrip()) for line in text.splitlines()) <= 100, argv
        assert "…" not in text, argv
        assert not any(line.split() == ["+1"] for line in text.splitlines()), argv  # unfolded
        if argv == ["results", "list"]:  # a benchmark whole on its line, local/ kept
            assert "local/toy@aaaaaaaa " in text and "local/other@bbbbbbbb" in text


@pytest.mark.parametrize("width", [60, 80])
def test_a_narrow_terminal_keeps_every_system_name_and_says_what_it_left_out(
    two_group_runs, capsys, monkeypatch, width
) -> None:
    """Narrower than 100 columns, rich used to shrink the system column to nothing (scores
    without names) or cut headers (`tria…`): the names stay, the last metric columns and
    the runs go, and the table says which."""
    monkeypatch.setenv("COLUMNS", str(width))
    out = str(two_group_runs)
    for argv in (["results", "show", "A"], ["results", "leaderboard"]):
        assert cli.main([*argv, "--output", out]) == 0
        text = capsys.readouterr().out
        assert max(len(line.rstrip()) for line in text.splitlines()) <= width, argv
        lines = text.splitlines()
        for i, line in enumerate(lines):  # every table: the name column, a name in each row
            if line.split()[:1] == ["system"] or line.split()[:2] == ["#", "system"]:
                at = line.split().index("system")
                row = lines[i + 2].split()
                assert row[at].isalpha() and row[at + 1][0].isdigit(), (argv, lines[i : i + 3])
        if argv[1] == "show" and width == 60:
            assert "not shown: recall@100, mrr@10" in text  # the last ones go (by real cells)
    if width == 60:  # no room for the runs column: the runs are said under the table
        assert "runs of #1: B +1" in text and "| runs" not in text


def test_no_leaderboard_row_wraps_at_any_width(tmp_path, capsys, monkeypatch) -> None:
    """Real run ids (22 characters, `+1` for a second run): the runs column stays in the
    table only where it fits on one line, at every width from 60 to 100 columns."""
    for run in ("20261206-063203-3078a2", "20261206-063204-3078a3"):
        write_run(tmp_path, run, {}, [_trial(run, "g", "retrieval", ALL_RETRIEVAL, BENCH)])
    for width in range(60, 101):
        monkeypatch.setenv("COLUMNS", str(width))
        assert cli.main(["results", "leaderboard", "--output", str(tmp_path)]) == 0
        lines = capsys.readouterr().out.splitlines()
        rule = next(i for i, line in enumerate(lines) if line.strip().startswith("─"))
        end = next(i for i in range(rule + 1, len(lines)) if not lines[i].strip())
        rows = lines[rule + 1 : end]
        assert [line.split()[0] for line in rows] == ["1"], (width, rows)


def test_the_run_summary_title_is_one_line_above_a_narrow_table() -> None:
    from lasagna.engine.driver import RunOutcome
    from lasagna.engine.summary import render_summary

    # the group's title as the leaderboard's: its split and sample size too
    bench = BENCH | {"split": "test", "n_samples": 40}
    trials = [_trial("bm25", "g", "retrieval", ("ndcg@10",), bench)]
    trials[0].system = "bm25"
    out = io.StringIO()
    render_summary(RunOutcome("20261207-064155-8bb6d0", "/x/r1", trials, []), Console(file=out))
    group = f"{BENCH['name']} · split test · n=40 · retrieval · pooled gold"
    title = f"{group} — run 20261207-064155-8bb6d0"
    assert title in out.getvalue().splitlines()


def test_the_run_summary_leaves_out_a_metric_no_trial_has() -> None:
    """No unanswerable questions: no `no_ans_em` column of "-"; with them, the column."""
    from lasagna.tracks import get_track

    track = get_track("generation")
    answerable = _trial("g1", "g", "generation", ("em", "f1", "has_ans_f1"), BENCH)
    heads, rows = track.summary_table([answerable], repeats=False)
    assert "no_ans_em" not in heads and "has_ans_f1" in heads
    mixed = _trial("g2", "g", "generation", ("em", "f1", "has_ans_f1", "no_ans_em"), BENCH)
    heads, rows = track.summary_table([answerable, mixed], repeats=False)
    assert "no_ans_em" in heads and [r[heads.index("no_ans_em")] for r in rows] == ["-", "0.5000"]


def test_the_run_summary_on_a_narrow_terminal_keeps_the_names() -> None:
    from lasagna.engine.driver import RunOutcome
    from lasagna.engine.summary import render_summary

    metrics = ("ndcg@10", "recall@10", "recall@100", "mrr@10", "map@10", "p@10")
    trials = []
    for system in ("bm25", "dense:all-MiniLM-L6-v2"):
        t = _trial(system, "g", "retrieval", metrics, BENCH)
        t.system = system
        trials.append(t)
    out = io.StringIO()
    console = Console(file=out, width=70, force_terminal=True, color_system=None)
    render_summary(RunOutcome("r1", "/x/r1", trials, []), console)
    text = out.getvalue()
    assert "…" not in text and "dense:all-MiniLM-L6-v2" in text
    header = next(line for line in text.splitlines() if line.strip().startswith("system"))
    assert header.split()[:2] == ["system", "ndcg@10"] and "p@10" not in header
    assert "not shown: " in text and "p@10 (lasagna results show r1)" in text


def test_plan_fits_100_columns_and_reads_output_from_cwd(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    assert cli.main(["benchmark", "plan", str(SAMPLE), "--output", "here"]) == 0
    text = capsys.readouterr().out
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 100
    assert "dense:all-MiniLM-L6-v2" in text and "…" not in text
    assert f"Output: {tmp_path / 'here'}" in " ".join(text.split())


def test_a_failed_trials_reason_is_printed_as_written(tmp_path, monkeypatch, capsys) -> None:
    """A reason with brackets (pydantic's `[type=value_error]`, a system's `[k1=0.9]`) is
    text, not rich markup, and stays on one line however long."""
    from types import SimpleNamespace

    from lasagna.engine import driver

    reason = "ValueError: bad [bold]input[/bold] " + "x" * 150 + " [type=value_error]"
    failed = [{"system": "bm25 [k1=0.9]", "benchmark": "local/sample@1", "reason": reason}]
    monkeypatch.setattr(
        driver, "run_plan", lambda *a, **k: SimpleNamespace(trials=[], failed=failed)
    )
    argv = ["benchmark", "run", str(SAMPLE), "--output", str(tmp_path / "out")]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert f"failed: bm25 [k1=0.9] on local/sample@1: {reason}\n" in err, err


def test_names_with_brackets_are_shown_as_written(tmp_path, capsys) -> None:
    """rich reads `[v2]` as markup: systems named `rag[v1]` and `rag[v2]` were both shown as
    `rag`, in the plan, the tables and the trial lines."""
    sweep = tmp_path / "s.yaml"
    sweep.write_text(
        'description: "my [v2] sweep"\nbenchmarks:\n  - {name: sample}\n'
        'retrievers:\n  - {kind: bm25, name: "bm25[v2]"}\n'
        '  - {kind: bm25, name: "bm25[v1]", k1: 0.9}\n'
    )
    assert cli.main(["benchmark", "plan", str(sweep)]) == 0
    out = capsys.readouterr().out
    assert "my [v2] sweep" in out and "bm25[v2], bm25[v1]: one pipeline" in out, out
    assert out.count("bm25[v") == 4, out
    v1 = {"kind": "bm25", "k1": 0.9, "name": "bm25[v1]"}
    a = make_trial("k1", [0.5, 1.0], system="bm25[v1]", config=v1)
    v2 = {"kind": "bm25", "name": "bm25[v2]"}
    b = make_trial("k2", [1.0, 1.0], system="bm25[v2]", config=v2)
    write_run(tmp_path, "r1", {"created_at": "2026-01-01T00:00:00+00:00"}, [a, b])
    for argv in (["leaderboard"], ["show", "r1"], ["compare", "r1"]):
        assert cli.main(["results", *argv, "--output", str(tmp_path)]) == 0
        shown = capsys.readouterr().out
        assert "bm25[v1]" in shown and "bm25[v2]" in shown, (argv, shown)
