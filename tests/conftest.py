"""Test-wide settings: offline models, a loopback-only Ray shared by the whole session, and
one warm vLLM engine shared by the tests that call an engine directly."""

from __future__ import annotations

import os
from pathlib import Path

# Before anything imports ray or transformers.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # Ray on 127.0.0.1 only
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# output is read at the width the CLI gives a pipe, whatever the runner says (a terminal,
# or 80 in pytest-xdist workers); tests of other widths set COLUMNS themselves
os.environ["COLUMNS"] = "100"

from typing import Any  # noqa: E402

import pytest  # noqa: E402
from reference_data import SHARED_DATA, missing  # noqa: E402


@pytest.fixture(scope="session")
def ray_local():
    """One in-process Ray (2 CPUs, loopback, no dashboard) for every test that needs it."""
    import ray

    if not ray.is_initialized():
        ray.init(
            address="local",
            num_cpus=2,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            logging_level="WARNING",
        )
    yield ray
    ray.shutdown()


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(reason=missing(SHARED_DATA))
    return SHARED_DATA


# ------------------------------------------------------------ one warm vLLM engine
ENGINE_FIXTURE = "vllm_engine"
_engine: dict[str, Any] = {}  # "server": the live ModelServer; "last": the last test using it


# The longest files first when the tests run in two processes (pytest-xdist hands out
# whole files in this order): they then run side by side from the start, and the short
# files fill in at the end instead of one process finishing a long file alone.
LONGEST_FILES = (
    "test_cluster.py",
    "test_judges_vllm.py",
    "test_interrupt_run.py",
    "test_soak.py",
    "test_engine_run.py",
    "test_engine_generation.py",
    "test_report_browser.py",
    "test_placement_run.py",
    "test_view_browser.py",
)


def _longest_first(item: pytest.Item) -> int:
    name = item.path.name
    return LONGEST_FILES.index(name) if name in LONGEST_FILES else len(LONGEST_FILES)


@pytest.hookimpl(trylast=True)  # after -k / -m deselection: the tests that will run
def pytest_collection_modifyitems(session, config, items):
    if os.environ.get("PYTEST_XDIST_WORKER"):  # every worker sorts alike (a stable sort)
        items.sort(key=_longest_first)
    users = [item.nodeid for item in items if ENGINE_FIXTURE in item.fixturenames]
    _engine["last"] = users[-1] if users else None


@pytest.fixture
def vllm_engine(ray_local):
    """One vLLM engine (the packaged SmolLM2 at the judge's lengths, JUDGE_MODEL) in
    lasagna's own `ModelServer` actor, loaded by the first test that asks for it and shared
    by every later one (the judge benchmarks, the vLLM backend): one load instead of one per
    module. It reserves no CPU (num_cpus=0: stages sized to the session's 2 CPUs still fit
    while it idles) and is closed right after the last test that uses it, not at the end of
    the session."""
    if "server" not in _engine:
        from lasagna.stages.pools import ModelServer
        from lasagna.systems import JUDGE_MODEL

        remote = ray_local.remote(ModelServer).options(num_cpus=0)
        _engine["server"] = remote.remote(JUDGE_MODEL, 2)
    return _engine["server"]


def close_engine() -> None:
    server = _engine.pop("server", None)
    if server is None:
        return
    import ray

    try:
        ray.get(server.close.remote(), timeout=60)
    finally:
        ray.kill(server)


def pytest_runtest_teardown(item, nextitem):
    if item.nodeid == _engine.get("last") or nextitem is None:
        close_engine()
