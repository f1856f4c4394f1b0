"""Actor pools run each call on the actor's main thread; tokens/s from a batch timeline."""

from __future__ import annotations

import threading

import pyarrow as pa
import pytest

from lasagna.stages.actors import actor_pool
from lasagna.tracks.generation_metrics import generation_metrics


@pytest.mark.slow
def test_actor_pool_calls_run_on_the_main_thread(ray_local):
    import ray.data

    class WhichThread:  # local, so Ray pickles it by value (tests/ is not on workers' path)
        """Records, per batch, whether the call ran on the main thread that built the actor."""

        def __init__(self):
            self.built_on = threading.get_ident()

        def __call__(self, batch: pa.Table) -> pa.Table:
            same = threading.get_ident() == self.built_on
            main = threading.current_thread() is threading.main_thread()
            return batch.append_column("same_thread", pa.array([same and main] * batch.num_rows))

    ds = ray.data.from_arrow([pa.table({"x": list(range(i, i + 4))}) for i in range(0, 16, 4)])
    out = ds.map_batches(
        WhichThread, compute=actor_pool(1), num_cpus=0.1, batch_size=4, batch_format="pyarrow"
    )
    flags = [row["same_thread"] for row in out.take_all()]
    assert len(flags) == 16 and all(flags)


def _row(batch_start, latency, batch_rows, tokens, error=None):
    return {
        "em": None if error else 1.0,
        "f1": None if error else 1.0,
        "unanswerable": False,
        "error": error,
        "latency_s": latency,
        "batch_rows": batch_rows,
        "batch_started_at": batch_start,
        "completion_tokens": tokens,
        "prompt_tokens": 10,
    }


def test_generation_metrics_count_idle_gaps_in_pipeline_tokens_per_s():
    # two batches of 2 rows, 4 s each, with 2 s idle between them; one row failed
    rows = [
        _row(100.0, 4.0, 2, 10),
        _row(100.0, 4.0, 2, 10),
        _row(106.0, 4.0, 2, 20),
        _row(106.0, 4.0, 2, 0, error="RuntimeError: x"),
    ]
    metrics, counts = generation_metrics(pa.Table.from_pylist(rows))
    assert counts["completion_tokens"] == 40 and counts["failed"] == 1
    assert metrics["tokens_per_s"] == pytest.approx(40 / 8)  # busy 8 s
    assert metrics["pipeline_tokens_per_s"] == pytest.approx(40 / 10)  # span 100 -> 110
    assert metrics["em"] == 1.0


@pytest.mark.slow
def test_an_actor_publishes_its_cpu_use_to_the_driver(ray_local):
    """An actor that calls busy.publish() is seen from the driver (through Ray's key-value
    store): its CPU seconds rise while it computes and stay put while it waits; the job's
    entries are removed by forget()."""
    import time

    from lasagna.stages import busy

    @ray_local.remote(num_cpus=0.1)
    class Worker:
        def __init__(self):
            busy.publish()
            busy.publish()  # once per actor: a second call starts no second thread

        def spin(self, secs: float) -> int:
            end, n = time.process_time() + secs, 0
            while time.process_time() < end:
                n += 1
            return n

        def wait(self, secs: float) -> None:
            time.sleep(secs)

    worker = Worker.remote()
    key = f"cpu:{ray_local.get_runtime_context().get_job_id()}:{worker._actor_id.hex()}"

    def mine() -> dict[str, float]:  # the session's other actors publish too
        return {k: v for k, v in busy.cpu_seconds().items() if k == key}

    try:
        ray_local.get(worker.wait.remote(busy.BEAT_S + 0.5))
        before = mine()
        assert list(before) == [key], busy.cpu_seconds()
        ray_local.get(worker.wait.remote(2 * busy.BEAT_S + 0.5))
        idle = mine()
        assert busy.computing(before, idle, 2 * busy.BEAT_S) == [], (before, idle)
        ray_local.get(worker.spin.remote(3.0))
        time.sleep(busy.BEAT_S + 0.5)
        spun = mine()
        assert busy.computing(idle, spun, 3.0 + busy.BEAT_S) == [key], (idle, spun)
        assert busy.cpu_seconds("ffffffff") == {}  # another job's actors are not this one's
    finally:
        ray_local.kill(worker)
    busy.forget()
    assert key not in busy.cpu_seconds()
