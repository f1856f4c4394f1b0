"""The sdk track's Executor stage: the rows of a trial (datapoint x trial index) as Ray
work, batches of rows in tasks (functions) or in an actor pool (callable classes).

Ray's per-task cost (~1 ms and a round trip) is paid per batch, not per row: each worker
runs a batch with up to `threads` rows at once (threads for sync executors, asyncio for
async ones), so `concurrency` rows are in flight across the workers. A worker that dies
mid-batch (OOM, SIGKILL) has its batch re-run by Ray (tasks: retries; actors: restart and
retry); a batch's results reach the driver only once, so no row is duplicated.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import os
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from lasagna.common import tracing
from lasagna.results.evaluations import row_record
from lasagna.stages import stop
from lasagna.stages.sdk_rows import ExecutorTimeout, RowSpec, run_row, run_row_async
from lasagna.systems.executor import is_async

RETRIES = 3  # re-runs of a batch whose worker died


def run_batch(
    executor: Any,
    evaluators: dict[str, Any],
    specs: list[RowSpec],
    carrier: dict[str, str],
    evaluation_id: str,
    threads: int,
    hub: Any = None,
    timeout: float | None = None,
    exclusive: bool = False,
) -> dict[str, Any]:
    """Run a batch of rows here (a Ray worker, or the driver); return their records and spans.
    `hub`: the run's model servers, which `lasagna.model(...)` clients call here.
    `timeout`: the seconds one executor call may take. `exclusive`: the executor serves one
    call at a time (a sync class's instance), so after a call that timed out, still running,
    no other is made: the batch's other rows come back as `unrun` (a list, maybe empty: the
    instance is busy), for a fresh instance."""
    from lasagna.models.client import route_calls
    from lasagna.models.instrument import instrument_models
    from lasagna.stages.model_hub import hub_router

    instrument_models()
    route_calls(hub_router(hub) if hub is not None else None)
    parent = tracing.extract(carrier)
    unrun: list[RowSpec] | None = None  # a list: a call of this exclusive executor still runs
    if is_async(executor):

        async def main() -> list[dict[str, Any]]:
            gate = asyncio.Semaphore(threads)

            async def one(spec: RowSpec) -> dict[str, Any]:
                async with gate:
                    return await run_row_async(
                        spec, executor, evaluators, evaluation_id, parent, timeout
                    )

            return await asyncio.gather(*(one(s) for s in specs))

        rows = asyncio.run(main())
    elif threads > 1 and len(specs) > 1 and not exclusive:
        with ThreadPoolExecutor(min(threads, len(specs))) as pool:
            rows = list(
                pool.map(
                    lambda s: run_row(s, executor, evaluators, evaluation_id, parent, timeout),
                    specs,
                )
            )
    else:
        rows = []
        for i, spec in enumerate(specs):
            rows.append(run_row(spec, executor, evaluators, evaluation_id, parent, timeout))
            if exclusive and rows[-1]["error_type"] == ExecutorTimeout.__name__:
                unrun = specs[i + 1 :]
                break
    spans = tracing.collector().take([t["trace_id"] for t in rows])
    return {"rows": rows, "spans": spans, "pid": os.getpid(), "unrun": unrun}


def _task(payload, specs, carrier, evaluation_id, threads, hub, timeout):
    executor, evaluators = payload
    return run_batch(executor, evaluators, specs, carrier, evaluation_id, threads, hub, timeout)


class ExecutorActor:
    """Holds one instance of a callable-class executor (a model, a client) for its life."""

    def __init__(self, cls: type):
        from lasagna.models.instrument import instrument_models

        instrument_models()
        self.executor = cls()

    def pid(self) -> int:
        return os.getpid()

    def run(self, evaluators, specs, carrier, evaluation_id, threads, hub, timeout):
        exclusive = not is_async(self.executor)  # a sync instance: one call at a time
        return run_batch(
            self.executor,
            evaluators,
            specs,
            carrier,
            evaluation_id,
            threads,
            hub,
            timeout,
            exclusive,
        )


MAX_BATCH = 1024  # rows per Ray call at most


@dataclass(frozen=True)
class Plan:
    """How rows are cut and spread: `workers` batches in flight, `threads` rows each."""

    workers: int
    threads: int
    sizes: list[int]  # rows per batch, in submission order


def plan_batches(n_rows: int, concurrency: int, slots: int) -> Plan:
    """Two batches per worker (more when huge), each a whole number of `threads`-wide rounds,
    the larger first: the rounds split evenly, so the last batches end together."""
    workers = max(1, min(concurrency, slots, n_rows))
    threads = max(1, math.ceil(concurrency / workers))
    rounds = math.ceil(n_rows / threads)
    n_batches = min(rounds, max(workers * 2, math.ceil(n_rows / MAX_BATCH)))
    q, r = divmod(rounds, n_batches)
    sizes, left = [], n_rows
    for i in range(n_batches):
        size = min(left, threads * (q + (1 if i < r else 0)))
        if size > 0:
            sizes.append(size)
            left -= size
    return Plan(workers, threads, sizes)


def _lost(specs: list[RowSpec], exc: BaseException) -> list[dict[str, Any]]:
    """Rows whose worker died past every retry: recorded as errors, not lost silently."""
    cause = getattr(exc, "cause", None) or exc  # a RayTaskError wraps the real one
    lines = [line for line in str(cause).strip().splitlines() if line.strip()]
    text = f"{type(cause).__name__}: {lines[-1] if lines else ''}"
    error = f"worker lost: {text}"[:2000]
    return [row_record(s, error=error, error_type=type(cause).__name__) for s in specs]


WAIT_S = 0.5  # the longest the driver waits on Ray before a ^C or a stop request is taken


def task_options(resources: dict[str, float]) -> dict[str, float]:
    """What each executor task or actor asks Ray for (evaluate()'s `resources=`)."""
    return {"num_cpus": resources.get("num_cpus", 1.0), "num_gpus": resources.get("num_gpus", 0)}


def dispatch(
    specs: list[RowSpec],
    executor: Any,
    evaluators: dict[str, Any],
    evaluation_id: str,
    *,
    concurrency: int,
    resources: dict[str, float],
    actors: int,
    on_batch: Callable[[int], None] = lambda n: None,
    on_result: Callable[[list[dict[str, Any]], list[dict[str, Any]]], None] = lambda t, s: None,
    hub: Any = None,
    timeout: float | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Run every row on Ray; return (records in evaluation order, span records).
    `on_result` sees each batch's new records and spans as they arrive (the checkpoint).
    An actor whose call timed out (`timeout`) is replaced by a fresh one, which runs the
    rows its batch had left."""
    import ray

    carrier = tracing.inject()
    options = task_options(resources)
    ev_ref = ray.put(evaluators)
    workers: list[Any] = []
    if inspect.isclass(executor):
        pool_size = max(1, actors)
        threads = math.ceil(concurrency / pool_size) if is_async(executor) else 1
        plan = plan_batches(len(specs), pool_size * threads, pool_size)
        actor_cls = ray.remote(max_restarts=RETRIES, max_task_retries=RETRIES)(ExecutorActor)

        def new_worker() -> Any:
            return actor_cls.options(**options).remote(executor)

        workers = [new_worker() for _ in range(pool_size)]

        def submit(worker: int | None, batch: list[RowSpec]):
            return workers[worker or 0].run.remote(
                ev_ref, batch, carrier, evaluation_id, plan.threads, hub, timeout
            )
    else:
        free = ray.available_resources().get("CPU", 1.0)
        slots = max(1, int(free // options["num_cpus"])) if options["num_cpus"] > 0 else 64
        plan = plan_batches(len(specs), concurrency, slots)
        remote = ray.remote(max_retries=RETRIES)(_task).options(**options)
        payload = ray.put((executor, evaluators))

        def submit(worker: int | None, batch: list[RowSpec]):
            return remote.remote(payload, batch, carrier, evaluation_id, plan.threads, hub, timeout)

    queue: deque[list[RowSpec]] = deque()
    at = 0
    for size in plan.sizes:
        queue.append(specs[at : at + size])
        at += size
    idle = list(range(len(workers)))  # an actor runs one batch at a time
    pending: dict[Any, tuple[list[RowSpec], int | None]] = {}  # call -> (batch, actor)
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    spans: list[dict[str, Any]] = []
    try:
        while queue or pending:
            while queue and len(pending) < plan.workers:
                worker = idle.pop(0) if workers else None
                batch = queue.popleft()
                pending[submit(worker, batch)] = (batch, worker)
            # bounded waits: between them a ^C is handled and the stall watchdog's request
            # to stop is taken (lasagna.stages.stop), never an interruption inside Ray
            done, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT_S)
            stop.check()
            for ref in done:
                batch, worker = pending.pop(ref)
                unrun: list[RowSpec] = []
                try:
                    out = ray.get(ref)
                    got, got_spans, busy = out["rows"], out["spans"], out.get("unrun")
                except (ray.exceptions.RayError, OSError) as exc:
                    got, got_spans, busy = _lost(batch, exc), [], None
                if busy is not None:  # a call still runs in that actor: a fresh one takes over
                    ray.kill(workers[worker or 0])
                    workers[worker or 0] = new_worker()
                    unrun = busy
                    if unrun:
                        queue.appendleft(unrun)
                if worker is not None:
                    idle.append(worker)
                new = [t for t in got if (t["task_id"], t["trial_index"]) not in rows]
                for row in new:
                    rows[(row["task_id"], row["trial_index"])] = row
                spans += got_spans
                on_result(new, got_spans)
                on_batch(len(batch) - len(unrun))
    finally:
        for ref in pending:
            ray.cancel(ref, force=False)
        for worker in workers:
            ray.kill(worker)
    return sorted(rows.values(), key=lambda t: t["order"]), spans
