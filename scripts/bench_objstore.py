"""What committing results costs on an S3 server: requests and seconds per trial checkpoint
and per run, lasagna's protocol against the move-based one it replaced (same script, same
server: moto's S3 server mode on 127.0.0.1, through s3fs).

- lasagna: a checkpoint is a version folder + its pointer replaced in one PUT; a run is
  written under its own id with its manifest PUT last (`lasagna.results.store`).
- baseline: build the folder under a temporary name, then move it object by object with
  the marker moved last (`Store.commit_dir`, what object stores got before).

    python scripts/bench_objstore.py --trials 20 --rows 2000
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import socket
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


class RequestCounter(logging.Handler):
    """Counts the S3 server's requests by HTTP method (from its access log)."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        found = re.search(r"(?<![A-Z])(GET|PUT|POST|DELETE|HEAD) /", record.getMessage())
        if found:  # (the log colours some lines: match the method, not the quote)
            self.counts[found.group(1)] += 1


def start_server() -> tuple[object, RequestCounter]:
    from moto.server import ThreadedMotoServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    os.environ |= {
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL_S3": f"http://127.0.0.1:{port}",
    }
    counter = RequestCounter()
    log = logging.getLogger("werkzeug")
    log.handlers[:] = [counter]
    log.setLevel(logging.INFO)
    log.propagate = False
    return server, counter


def baseline_save_trial(root: str, result) -> None:
    """The old checkpoint commit: a temporary folder moved into place object by object."""
    from lasagna.common.writers import temp_name
    from lasagna.results.fs import Store
    from lasagna.results.layout import CHECKPOINTS, ROWS_FILE, TRIAL_JSON, dumps, write_parquet

    store = Store(root)
    final = store.path(CHECKPOINTS, result.file_name)
    tmp = store.path(CHECKPOINTS, temp_name(result.file_name))
    write_parquet(store, f"{tmp}/{ROWS_FILE}", result.rows)
    store.write_bytes(f"{tmp}/{TRIAL_JSON}", dumps(result.meta.to_json()))
    store.commit_dir(tmp, final, TRIAL_JSON, replace=True)


def baseline_write_run(root: str, run_id: str, trials: list) -> None:
    from lasagna.common.writers import temp_name
    from lasagna.results.fs import Store
    from lasagna.results.layout import MANIFEST, dumps, write_parquet

    store = Store(root)
    tmp = store.path(temp_name(run_id))
    entries = []
    for t in trials:
        write_parquet(store, f"{tmp}/trials/{t.file_name}.parquet", t.rows)
        entries.append(t.meta.to_json())
    store.write_bytes(f"{tmp}/{MANIFEST}", dumps({"run_id": run_id, "trials": entries}))
    store.commit_dir(tmp, store.path(run_id), MANIFEST, replace=False)


def measure(name: str, counter: RequestCounter, work) -> dict[str, float]:
    counter.counts.clear()
    start = time.perf_counter()
    work()
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "requests": sum(counter.counts.values()), **counter.counts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20, help="checkpoints (and run trials)")
    parser.add_argument("--rows", type=int, default=2000, help="questions per trial")
    args = parser.parse_args()
    server, counter = start_server()
    import fsspec
    from test_results_store import make_trial

    from lasagna.results import save_trial, write_run

    fsspec.filesystem("s3").mkdir("bench")
    trials = [
        make_trial(f"k{i}", [((i + j) % 7) / 7 for j in range(args.rows)])
        for i in range(args.trials)
    ]
    results = {}
    for label, root, save, run in (
        ("baseline", "s3://bench/baseline", baseline_save_trial, baseline_write_run),
        ("lasagna", "s3://bench/lasagna", save_trial, None),
    ):
        first = measure(label, counter, lambda s=save, r=root: [s(r, t) for t in trials])
        again = measure(label, counter, lambda s=save, r=root: [s(r, t) for t in trials])
        if run is None:
            runw = measure(label, counter, lambda r=root: write_run(r, "run1", {}, trials))
        else:
            runw = measure(label, counter, lambda r=root, f=run: f(r, "run1", trials))
        results[label] = {"checkpoint (new)": first, "checkpoint (replace)": again, "run": runw}
    server.stop()

    n = args.trials
    print(f"{n} trials x {args.rows} rows, moto S3 server on 127.0.0.1 (s3fs)")
    print(f"{'':22} {'baseline':>20} {'lasagna':>20} {'ratio':>8}")
    for what in ("checkpoint (new)", "checkpoint (replace)", "run"):
        per = n if what.startswith("checkpoint") else 1
        b, x = results["baseline"][what], results["lasagna"][what]
        unit = "per trial" if per == n else "per run"
        print(
            f"{what:22} {b['requests'] / per:9.1f} req {b['seconds'] / per:6.3f} s "
            f"{x['requests'] / per:9.1f} req {x['seconds'] / per:6.3f} s "
            f"{x['seconds'] / b['seconds']:7.2f}x  ({unit}; time ratio)"
        )
        print(f"{'':22} requests: baseline {_methods(b)}; lasagna {_methods(x)}")


def _methods(row: dict[str, float]) -> str:
    return " ".join(f"{k}={int(v)}" for k, v in sorted(row.items()) if k.isupper())


if __name__ == "__main__":
    main()
