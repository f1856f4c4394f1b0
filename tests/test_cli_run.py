"""The `lasagna` command end to end: a real BM25 run in a subprocess (its own loopback Ray),
`benchmark plan`, the refusals (exit 2, the reason and the fix, nothing written, no Ray
started) and the `results` commands on the real run folder."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from model_cache import cache_sharing_models

from lasagna.cli import main
from lasagna.data import load_benchmark
from lasagna.sample import sample_path

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]

BM25_SWEEP = """\
benchmarks:
  - {name: sample}
retrievers:
  - {kind: bm25, name: bm25-default, top_k: 10}
  - {kind: bm25, name: bm25-tuned, k1: 0.9, b: 0.4, top_k: 10}
"""


def cli_env(ray_tmpdir: str, cache: Path) -> dict[str, str]:
    """The environment of a `lasagna` subprocess: offline, loopback, wide tables."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env |= {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_AUTH_MODE": "disabled",
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_TMPDIR": ray_tmpdir,  # a Ray started by the command leaves its session here
        "LASAGNA_CACHE": str(cache_sharing_models(cache)),
        "COLUMNS": "240",
    }
    return env


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lasagna.cli", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def run_folders(out: Path) -> list[Path]:
    return sorted(p for p in out.iterdir() if p.is_dir() and not p.name.startswith("."))


@pytest.fixture(scope="module")
def bm25_run(tmp_path_factory):
    """One real `lasagna benchmark run` of a two-system BM25 sweep on the packaged sample."""
    from ray_procs import cleanup, kill_all, short_tmpdir

    base = tmp_path_factory.mktemp("cli_run")
    sweep = base / "bm25.yaml"
    sweep.write_text(BM25_SWEEP)
    out = base / "out"
    ray_tmp = short_tmpdir()
    env = cli_env(ray_tmp, base / "cache")
    try:
        proc = run_cli(["benchmark", "run", str(sweep), "--output", str(out)], env, base)
        kill_all(ray_tmp)  # nothing should be left; the folder stays for the first test
        assert proc.returncode == 0, proc.stderr[-3000:]
        yield {"proc": proc, "out": out, "sweep": sweep, "ray_tmp": Path(ray_tmp), "base": base}
    finally:
        cleanup(ray_tmp)


def test_run_prints_metrics_table_and_writes_one_run_folder(bm25_run):
    proc, out = bm25_run["proc"], bm25_run["out"]
    # Ray really ran, inside the private RAY_TMPDIR (what makes the refusal checks below mean
    # something)
    assert list(bm25_run["ray_tmp"].glob("ray/session_*"))
    folders = run_folders(out)
    assert len(folders) == 1
    manifest = json.loads((folders[0] / "manifest.json").read_text())
    assert manifest["run_id"] == folders[0].name
    assert [t["system"] for t in manifest["trials"]] == ["bm25-default", "bm25-tuned"]
    assert f"run folder: {folders[0]}" in proc.stdout.replace("\n", "")
    # the table shows each system's nDCG@10 as the manifest holds it
    assert "ndcg@10" in proc.stdout
    for trial in manifest["trials"]:
        line = next(ln for ln in proc.stdout.splitlines() if f" {trial['system']} " in ln)
        assert f"{trial['metrics']['ndcg@10']:.4f}" in line
    n_rows = len(load_benchmark(sample_path()).rows)
    for trial in manifest["trials"]:
        rows = pq.read_table(folders[0] / trial["rows_file"])
        assert rows.num_rows == n_rows
    assert not [p for p in out.rglob(".tmp*")]


def test_plan_shows_keys_pending_then_done(bm25_run, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "240")
    folder = run_folders(bm25_run["out"])[0]
    keys = [t["key"] for t in json.loads((folder / "manifest.json").read_text())["trials"]]
    sweep = str(bm25_run["sweep"])

    assert main(["benchmark", "plan", sweep, "--output", str(tmp_path / "empty")]) == 0
    fresh = capsys.readouterr().out
    assert "2 trial(s): 0 done, 2 pending" in fresh
    assert not (tmp_path / "empty").exists()  # planning writes nothing

    assert main(["benchmark", "plan", sweep, "--output", str(bm25_run["out"])]) == 0
    after = capsys.readouterr().out
    assert "2 trial(s): 2 done, 0 pending" in after
    for key in keys:
        line = next(ln for ln in after.splitlines() if key in ln)
        assert "done" in line and key in fresh


# ---------------------------------------------------------------- refusals
def _beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    docs = [("d1", "Glass", "glass is made from sand"), ("d2", "Coins", "coins are struck")]
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in docs)
    )
    queries = [("q1", "what is glass made from"), ("q2", "how are coins made")]
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in queries)
    )
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    return folder


def _dense_sweep(folder: Path, model: str) -> Path:
    path = folder / "dense.yaml"
    path.write_text(
        f"benchmarks:\n  - {{name: sample}}\nretrievers:\n  - {{kind: dense, model: {model}}}\n"
    )
    return path


REFUSALS = {
    "beir_rag": (
        lambda d: [str(_beir(d / "beir")), "--profile", "rag"],
        [
            "cannot run the generation track",
            "no reference answers",
            "Fix:",
            "the data cannot run the systems of --profile rag; it can run --profile speed",
        ],
    ),
    "csv_speed": (
        lambda d: [_csv(d), "--profile", "speed"],
        [
            "cannot run the retrieval track",
            "nothing to retrieve",
            "qa.csv",
            "Fix:",
            "it can run --profile closed_book",
            "qa.csv --profile closed_book",
        ],
    ),
    "unknown_profile": (
        lambda d: [str(sample_path()), "--profile", "fastest"],
        ["unknown profile 'fastest'", "closed_book, rag, speed", "Fix:"],
    ),
    "missing_model_path": (
        lambda d: [str(_dense_sweep(d, "/nonexistent/minilm"))],
        [
            "'/nonexistent/minilm' does not exist",
            "dense.yaml:line 4: field 'retrievers[0].model'",
            "retrieval system 'dense:",
            "Fix:",
        ],
    ),
    "uncached_hub_id": (
        lambda d: [str(_dense_sweep(d, "lasagna-test/never-cached-model"))],
        ["lasagna-test/never-cached-model", "HF_HUB_OFFLINE", "Fix:"],
    ),
}


def _csv(folder: Path) -> str:
    path = folder / "qa.csv"
    path.write_text("question,answer\nWhat is glass made from?,sand\nWhat are coins?,metal\n")
    return str(path)


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_refusal_exits_2_with_reason_and_fix_and_writes_nothing(case, tmp_path):
    from ray_procs import cleanup, short_tmpdir

    make_args, expected = REFUSALS[case]
    out = tmp_path / "out"
    ray_tmp = short_tmpdir()
    try:
        proc = run_cli(
            ["benchmark", "run", *make_args(tmp_path), "--output", str(out)],
            cli_env(ray_tmp, tmp_path / "cache"),
            tmp_path,
        )
        ray_started = os.listdir(ray_tmp)
    finally:
        cleanup(ray_tmp)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = " ".join(proc.stderr.split())  # rich wraps long lines
    assert err.startswith("error:") and "Traceback" not in proc.stderr
    for text in expected:
        assert text in err, f"{text!r} not in {err!r}"
    assert not out.exists(), "a refused run must not create its output folder"
    assert ray_started == [], "a refused run must not start Ray"


# ---------------------------------------------------------------- results commands
def test_results_list_show_leaderboard_on_real_run(bm25_run, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "240")
    out = str(bm25_run["out"])
    folder = run_folders(bm25_run["out"])[0]
    manifest = json.loads((folder / "manifest.json").read_text())

    assert main(["results", "list", "--output", out]) == 0
    listing = capsys.readouterr().out
    assert folder.name in listing and "retrieval" in listing

    assert main(["results", "show", str(folder), "--output", out]) == 0
    shown = capsys.readouterr().out
    for trial in manifest["trials"]:
        assert trial["key"][:8] in shown and trial["system"] in shown  # keys by their prefix
        assert f"{trial['metrics']['ndcg@10']:.4f}" in shown

    assert main(["results", "leaderboard", "--output", out, "--metric", "ndcg@10"]) == 0
    board = capsys.readouterr().out
    comparability = {t["comparability_key"] for t in manifest["trials"]}
    assert len(comparability) == 1  # two systems on one data set: one group
    assert comparability.pop() in board
    best = max(manifest["trials"], key=lambda t: t["metrics"]["ndcg@10"])
    first = next(ln for ln in board.splitlines() if re.match(r"^\W*1\W", ln))
    assert best["system"] in first


def test_results_export_trec_matches_rows(bm25_run, tmp_path, capsys):
    folder = run_folders(bm25_run["out"])[0]
    trial = json.loads((folder / "manifest.json").read_text())["trials"][1]
    target = tmp_path / "run.trec"
    args = ["results", "export", str(folder), "--format", "trec", "--trial", trial["key"]]
    assert main([*args, "--out", str(target), "--output", str(bm25_run["out"])]) == 0
    lines = target.read_text().splitlines()
    rows = pq.read_table(folder / trial["rows_file"]).to_pylist()
    assert len(lines) == sum(len(r["doc_ids"]) for r in rows)
    by_qid: dict[str, list[tuple[str, int, float, str]]] = {}
    for line in lines:
        qid, q0, docid, rank, score, tag = line.split()
        assert q0 == "Q0"
        by_qid.setdefault(qid, []).append((docid, int(rank), float(score), tag))
    for row in rows:
        got = by_qid[row["id"]]
        assert [d for d, *_ in got] == row["doc_ids"]
        assert [r for _, r, _, _ in got] == list(range(1, len(got) + 1))
        assert [s for *_, s, _ in got] == pytest.approx(row["scores"], rel=1e-6)
        assert all(s1 >= s2 for (_, _, s1, _), (_, _, s2, _) in zip(got, got[1:], strict=False))
        assert {t for *_, t in got} == {"bm25-tuned"}


def test_results_sql_counts_rows_of_the_run(bm25_run, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "240")
    out = str(bm25_run["out"])
    n = len(load_benchmark(sample_path()).rows)
    query = (
        "SELECT t.system, count(*) AS n, count(DISTINCT r.id) AS ids FROM rows r "
        "JOIN trials t USING (run_id, trial_key) GROUP BY t.system"
    )
    assert main(["results", "sql", query, "--output", out]) == 0
    text = capsys.readouterr().out
    for system in ("bm25-default", "bm25-tuned"):
        line = next(ln for ln in text.splitlines() if f" {system} " in ln)
        assert re.search(rf"\b{n}\b.*\b{n}\b", line), line  # n rows, n distinct ids
