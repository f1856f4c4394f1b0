"""Soak: one sweep of many small BM25 trials, killed at seeded random moments (SIGKILL: the
first time one of its driver processes alone, as the OOM killer does, then the whole
process group) and rerun with `--resume` until it finishes; then the same sweep
uninterrupted in one driver process, as the baseline, in the same script.

Run from the repository root (it starts Ray: on a small machine, run nothing else beside it):
    HF_HUB_OFFLINE=1 python scripts/bench_soak.py                      # 200 trials, 5 kills
    HF_HUB_OFFLINE=1 python scripts/bench_soak.py --trials 12 --kills 2 --workdir /tmp/soak
    HF_HUB_OFFLINE=1 python scripts/bench_soak.py --rss-only --trials 200   # memory only

Reports: the kills and rounds it took; that a killed driver left no run folder and no
process of its Ray behind (given GRACE_S to exit); whether the final run holds every trial
exactly once with rows equal to the uninterrupted run. The killed sweep runs in driver
processes of `--trials-per-driver` trials (lasagna's default), so kills land in them too.
`--rss-only`: the driver's RSS (the `lasagna` process and its driver processes, not Ray's
workers) every 10 trials of the uninterrupted sweep, in one driver process and then in
parts, with the ratio of their peaks. tests/test_soak.py runs the soak at CI size and
checks the folders it leaves.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lasagna.engine.driver_processes import TRIALS_PER_DRIVER  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
RSS_AT = 10  # the driver's RSS is sampled after every this many finished trials
GRACE_S = 90.0  # how long a killed driver's Ray workers may take to notice and exit


def sweep_text(trials: int) -> str:
    """`trials` BM25 configurations over the packaged sample (k1 x b grid, cut to size)."""
    k1 = [round(0.3 + 0.05 * i, 2) for i in range(-(-trials // 10))]
    b = [round(0.3 + 0.06 * i, 2) for i in range(10)]
    grid = [(x, y) for x in k1 for y in b][:trials]
    lines = ["benchmarks:", "  - {name: sample}", "retrievers:"]
    lines += [f"  - {{kind: bm25, k1: {x}, b: {y}, top_k: 10}}" for x, y in grid]
    lines += ["resources:", "  retrieve: {num_cpus: 0.5, actors: 1}"]
    return "\n".join(lines) + "\n"


def env_for(workdir: Path, ray_tmp: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    return env | {
        "PYTHONPATH": str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
        "HF_HUB_OFFLINE": "1",
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_AUTH_MODE": "disabled",
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_TMPDIR": ray_tmp,
        "LASAGNA_CACHE": str(workdir / "cache"),
    }


def checkpoints(out: Path) -> int:
    folder = out / ".trials"
    if not folder.is_dir():
        return 0
    return sum(
        1 for p in folder.iterdir() if not p.name.startswith(".") and (p / "trial.json").exists()
    )


def _ray_left(ray_tmp: str, seen: dict[int, psutil.Process]) -> list[psutil.Process]:
    """The live processes of one run's in-process Ray: those naming its private temp folder
    and the driver's children seen while it ran (workers detach from its process group)."""
    for proc in psutil.process_iter(["cmdline"]):
        if ray_tmp in " ".join(proc.info["cmdline"] or []):
            seen.setdefault(proc.pid, proc)
    alive = []
    for proc in seen.values():
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(proc)
        except psutil.Error:
            pass
    return alive


def _end_ray(ray_tmp: str, seen: dict[int, psutil.Process]) -> int:
    """Give what is left of one run's Ray GRACE_S to exit on its own, then SIGKILL it;
    returns how many processes were still alive (0: the run left nothing behind)."""
    deadline = time.monotonic() + GRACE_S
    while (left := _ray_left(ray_tmp, seen)) and time.monotonic() < deadline:
        time.sleep(0.5)
    for proc in left:
        try:
            proc.kill()
        except psutil.Error:
            pass
    shutil.rmtree(ray_tmp, ignore_errors=True)
    return len(left)


def run_folders(out: Path) -> list[Path]:
    if not out.is_dir():
        return []
    return sorted(p for p in out.iterdir() if p.is_dir() and not p.name.startswith("."))


@dataclass
class Round:
    code: int  # the driver's exit code; -9: killed
    rss: dict[str, float]  # the driver's RSS in MiB every RSS_AT finished trials, at the end
    run_folders: int = 0  # run folders under the output right after a kill (must be 0)
    survivors: int = 0  # processes of its Ray alive GRACE_S after it ended (must be 0)
    killed: str = ""  # "group": the whole command; "part": one driver process alone
    ray_exit_s: float = 0.0  # how long its Ray's processes took to be gone after it ended


def driver_parts(driver: psutil.Process) -> list[psutil.Process]:
    """The driver processes (children multiprocessing spawned for parts of the sweep)."""
    parts = []
    for child in driver.children():
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                parts.append(child)
        except psutil.Error:
            pass
    return parts


def driver_rss_mib(driver: psutil.Process) -> float:
    """The driver's RSS: the `lasagna` process and its driver processes (children that
    multiprocessing spawned for parts of the sweep), not Ray's own processes."""
    total = driver.memory_info().rss
    for child in driver_parts(driver):
        try:
            total += child.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def one_round(
    sweep: Path,
    out: Path,
    workdir: Path,
    kill_after: tuple[int, float, str] | None,
    per_driver: int = 0,
) -> Round:
    """Run the sweep (with --resume) once, with `--trials-per-driver per_driver`; kill it
    after `kill_after` = (n new checkpoints, extra seconds, what): what = "group" kills the
    command's whole process group, "part" its running driver process alone (as the OOM
    killer would; the command then ends on its own: it waits for one to run)."""
    ray_tmp = tempfile.mkdtemp(prefix="lk", dir="/tmp")
    cmd = [PY, "-m", "lasagna.cli", "benchmark", "run", str(sweep), "--output", str(out)]
    cmd += ["--trials-per-driver", str(per_driver)]
    log_path = workdir / f"{out.name}-{time.time_ns()}.log"  # a file: a pipe would fill up
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [*cmd, "--resume"],
        env=env_for(workdir, ray_tmp),
        cwd=workdir,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    seen: dict[int, psutil.Process] = {}
    rss: dict[str, float] = {}
    result = Round(0, rss)
    start = checkpoints(out)
    driver = psutil.Process(proc.pid)
    fired_at: float | None = None
    try:
        while proc.poll() is None:
            done = checkpoints(out) - start
            try:
                mib = driver_rss_mib(driver)  # 0 once it has exited
                sample = f"at_{done - done % RSS_AT}"  # one sample per RSS_AT trials
                if mib and done >= RSS_AT and sample not in rss:
                    rss[sample] = mib
                    # as it goes (stderr): a run cut short by a time limit still reports
                    print(f"driver RSS after {done} trial(s): {mib:.1f} MiB", file=sys.stderr)
                if mib:
                    rss["last"] = mib
                for child in driver.children(recursive=True):
                    seen.setdefault(child.pid, child)
            except psutil.Error:
                pass
            if kill_after is not None and fired_at is None and done >= kill_after[0]:
                fired_at = time.monotonic() + kill_after[1]
            if fired_at is not None and time.monotonic() >= fired_at:
                parts = driver_parts(driver) if kill_after[2] == "part" else []
                if kill_after[2] == "part" and not parts:
                    time.sleep(0.05)  # between two parts, or the first not yet started
                    continue
                if parts:
                    parts[0].kill()
                    result.code, result.killed = proc.wait(timeout=120), "part"
                else:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=30)
                    result.code, result.killed = -9, "group"
                result.run_folders = len(run_folders(out))
                return result
            time.sleep(0.05)
        if proc.returncode != 0:
            tail = log_path.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the run failed ({proc.returncode}): {tail}")
        return result
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
        t0 = time.monotonic()
        result.survivors = _end_ray(ray_tmp, seen)
        result.ray_exit_s = round(time.monotonic() - t0, 1)


def soak(workdir: Path, trials: int, kills: int, seed: int, per_driver: int) -> dict:
    """The killed-and-resumed sweep into workdir/soak (in driver processes of `per_driver`
    trials; the first kill hits one driver process alone, the others the whole command),
    the uninterrupted one in one process into workdir/reference; what happened."""
    workdir.mkdir(parents=True, exist_ok=True)
    sweep = workdir / "sweep.yaml"
    sweep.write_text(sweep_text(trials))
    rng = random.Random(seed)
    span = max(1, trials // (kills + 1))
    t0 = time.perf_counter()
    rounds, killed, progress, done = 0, 0, [], []
    while True:
        rounds += 1
        what = "part" if killed == 0 and per_driver else "group"
        plan = (rng.randint(1, span), rng.uniform(0.0, 1.5), what) if killed < kills else None
        before = checkpoints(workdir / "soak")
        done.append(one_round(sweep, workdir / "soak", workdir, plan, per_driver))
        progress.append(checkpoints(workdir / "soak") - before)
        if done[-1].code == 0:
            break
        killed += 1
    soak_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    reference = one_round(sweep, workdir / "reference", workdir, None)
    return {
        "trials": trials,
        "seed": seed,
        "kills": killed,
        "killed": [r.killed for r in done if r.killed],  # "part" or "group", per kill
        "exit_codes": [r.code for r in done],
        "ray_exit_s": [r.ray_exit_s for r in done],
        "rounds": rounds,
        "new_checkpoints_per_round": progress,
        "run_folders_after_kills": sum(r.run_folders for r in done),
        "survivors_per_round": [r.survivors for r in [*done, reference]],
        "soak_s": round(soak_s, 1),
        "uninterrupted_s": round(time.perf_counter() - t0, 1),
        "driver_rss_mib": {k: round(v, 1) for k, v in reference.rss.items()},
    }


def growth(rss: dict[str, float], trials: int) -> float:
    """MiB per trial between the sample after RSS_AT trials and the last one."""
    return (
        round((rss["last"] - rss["at_10"]) / max(1, trials - RSS_AT), 3) if "at_10" in rss else 0.0
    )


def window_peaks(rss: dict[str, float], window: int) -> list[float]:
    """The highest sample in each stretch of `window` trials (1..window, window+1..2*window,
    ...): flat over a long run when every stretch peaks alike."""
    peaks: dict[int, float] = {}
    for name, mib in rss.items():
        if name.startswith("at_") and (done := int(name[3:])) > 0:
            w = (done - 1) // window
            peaks[w] = max(peaks.get(w, 0.0), mib)
    return [round(peaks[w], 1) for w in sorted(peaks)]


def rss_runs(workdir: Path, trials: int, per_driver: int) -> dict:
    """The uninterrupted sweep twice: in one driver process (the baseline) and in driver
    processes of `per_driver` trials; each one's driver RSS every RSS_AT trials."""
    workdir.mkdir(parents=True, exist_ok=True)
    sweep = workdir / "sweep.yaml"
    sweep.write_text(sweep_text(trials))
    report: dict = {"trials": trials, "trials_per_driver": per_driver}
    for name, n in (("one_driver", 0), ("driver_processes", per_driver)):
        t0 = time.perf_counter()
        rss = one_round(sweep, workdir / name, workdir, None, n).rss
        report[name] = {
            "wall_s": round(time.perf_counter() - t0, 1),
            "driver_rss_mib": {k: round(v, 1) for k, v in rss.items()},
            "growth_mib_per_trial": growth(rss, trials),
            "peak_mib": round(max(rss.values(), default=0.0), 1),
            f"peak_mib_per_{per_driver}_trials": window_peaks(rss, per_driver),
        }
    one, parts = report["one_driver"], report["driver_processes"]
    report["peak_ratio_vs_one_driver"] = round(parts["peak_mib"] / max(one["peak_mib"], 1e-9), 3)
    report["wall_ratio_vs_one_driver"] = round(parts["wall_s"] / max(one["wall_s"], 1e-9), 3)
    return report


def compare(workdir: Path) -> dict:
    """The final soak run vs the uninterrupted one: trials exactly once, rows equal."""
    import pyarrow.parquet as pq

    def final(out: Path) -> tuple[dict, dict]:
        runs = run_folders(out)
        manifest = json.loads((runs[-1] / "manifest.json").read_text())
        rows = {t["key"]: pq.read_table(runs[-1] / t["rows_file"]) for t in manifest["trials"]}
        return manifest, rows

    got, got_rows = final(workdir / "soak")
    want, want_rows = final(workdir / "reference")
    keys = [t["key"] for t in got["trials"]]
    return {
        "exactly_once": len(keys) == len(set(keys)) == len(want["trials"]),
        "same_keys": keys == [t["key"] for t in want["trials"]],
        "rows_equal": all(got_rows[k].equals(want_rows[k]) for k in want_rows),
        "restored": len(got["restored_trials"]),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--kills", type=int, default=5, help="kills before it may finish")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--trials-per-driver",
        type=int,
        default=TRIALS_PER_DRIVER,
        help="the killed sweep's (and --rss-only's second run's) driver processes",
    )
    ap.add_argument("--workdir", type=Path, help="keep the folders here (default: a temp one)")
    ap.add_argument("--json", type=Path, help="also write the report here")
    ap.add_argument(
        "--rss-only",
        action="store_true",
        help="only the uninterrupted sweep's driver RSS: in one driver, then in parts",
    )
    args = ap.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="lasagna-soak-"))
    if args.rss_only:
        report = rss_runs(workdir, args.trials, args.trials_per_driver)
        ok = True
    else:
        report = soak(workdir, args.trials, args.kills, args.seed, args.trials_per_driver)
        report |= compare(workdir)
        report["rss_growth_mib_per_trial"] = growth(report["driver_rss_mib"], args.trials)
        ok = report["exactly_once"] and report["same_keys"] and report["rows_equal"]
        ok = ok and not report["run_folders_after_kills"] and not any(report["survivors_per_round"])
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
