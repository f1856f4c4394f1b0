"""What evaluate() costs per trial over a plain loop, and what it gains on a slow executor.

    python scripts/bench_sdk.py [--n 1000] [--slow-n 200] [--concurrency 16] [--repeats 3]

1. Overhead: 1,000 trivial datapoints (the executor returns its input, one evaluator returns
   1). Baseline: the same executor and evaluator called in a plain Python loop. evaluate()
   runs on an in-process Ray started once by this script and warmed by one run first
   (steady state: workers up), and includes everything it does: spans, Ray batches, the
   Parquet run folder. Reported: (evaluate - loop) / n, in ms per trial (goal: < 2 ms).
2. Speed-up: a 100 ms sleeping executor, 200 datapoints, concurrency 16, against the same
   executor in a plain loop (goal: >= 12x).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time


def trivial(data):
    return data


def slow(data):
    time.sleep(0.1)
    return data


def one(output, target):
    return 1


def loop(executor, points) -> float:
    t0 = time.perf_counter()
    for p in points:
        one(executor(p.data), p.target)
    return time.perf_counter() - t0


def timed_evaluate(points, executor, out: str, **kw) -> float:
    from lasagna import evaluate

    t0 = time.perf_counter()
    result = evaluate(points, executor, {"one": one}, output=out, quiet=True, **kw)
    elapsed = time.perf_counter() - t0
    assert result.n_errors == 0 and result.n_trials == len(points)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--slow-n", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from lasagna import Datapoint
    from lasagna.engine.ray_session import prefer_loopback, ray_session

    prefer_loopback()
    points = [Datapoint(i, target=i) for i in range(args.n)]
    slow_points = [Datapoint(i, target=i) for i in range(args.slow_n)]
    with tempfile.TemporaryDirectory() as out, ray_session() as session:
        print(f"ray: {session.resources.get('CPU', 0):g} CPUs, started in {session.start_s:.1f} s")
        timed_evaluate(points, trivial, out)  # warm-up: workers started, code imported
        base = min(loop(trivial, points) for _ in range(args.repeats))
        runs = [timed_evaluate(points, trivial, out) for _ in range(args.repeats)]
        best, median = min(runs), statistics.median(runs)
        print(
            f"overhead, {args.n} trivial datapoints: plain loop {base * 1e3:.1f} ms; "
            f"evaluate() best {best:.3f} s, median {median:.3f} s (of {args.repeats}) -> "
            f"{(best - base) / args.n * 1e3:.2f} ms/trial best, "
            f"{(median - base) / args.n * 1e3:.2f} ms/trial median (goal < 2 ms)"
        )
        seq = loop(slow, slow_points)
        par = [
            timed_evaluate(slow_points, slow, out, concurrency=args.concurrency)
            for _ in range(args.repeats)
        ]
        print(
            f"speed-up, sleep(0.1) x {args.slow_n}, concurrency {args.concurrency}: plain loop "
            f"{seq:.2f} s; evaluate() best {min(par):.2f} s, median {statistics.median(par):.2f} s"
            f" -> {seq / min(par):.1f}x best, {seq / statistics.median(par):.1f}x median "
            "(goal >= 12x)"
        )


if __name__ == "__main__":
    main()
