"""Time the leaderboard's marks (the best system against each other one, p-values only)
against the same paired tests with B - A's bootstrap interval (what they computed before).

Synthetic per-question scores in [0, 1]: `--systems` systems of `--questions` questions.
Prints each side's best of `--repeats` and the ratio (marks / with intervals).

    python scripts/bench_leaderboard_tests.py --systems 8 --questions 5000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from lasagna.results.pairwise import SystemScores, best_ties, pairs_of


def systems(n: int, questions: int, seed: int = 0) -> list[SystemScores]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        scores = {f"q{j}": float(v) for j, v in enumerate(rng.random(questions))}
        out.append(
            SystemScores(f"s{i}", f"s{i}", [], float(np.mean(list(scores.values()))), scores)
        )
    return out


def best_of(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=8)
    parser.add_argument("--questions", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    scored = systems(args.systems, args.questions)
    with_intervals = best_of(lambda: pairs_of(scored, "m", baseline=0), args.repeats)
    marks = best_of(lambda: best_ties(scored, "m"), args.repeats)
    print(f"{args.systems} systems x {args.questions} questions, best of {args.repeats}")
    print(f"paired tests with B - A's interval: {with_intervals:.3f} s")
    print(f"leaderboard marks (p-values only):  {marks:.3f} s")
    print(f"ratio marks / with intervals: {marks / with_intervals:.2f}x")


if __name__ == "__main__":
    main()
