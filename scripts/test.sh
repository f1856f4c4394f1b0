#!/usr/bin/env bash
# Install everything, lint, build the docs site (strict: a broken link or page fails) and run
# the whole test suite. Extra args go to pytest.
#
# LASAGNA_TEST_JOBS=2 runs the tests in two processes (pytest-xdist, a file's tests in one
# process, so a module's cluster or engine starts once; files go out in the order
# tests/conftest.py sorts them, the longest first). The default is one process: CI runs so.
# In two, a worker process has been ended by a signal, without a Python exit, during tests
# where the stall watchdog ends a trial in the main thread (SIGUSR2: tests/test_run_watch.py,
# tests/test_autoscaling.py), and pytest-xdist then waits forever for it; not seen in one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAY_USAGE_STATS_ENABLED=0
.venv/bin/python -m ruff check lasagna tests scripts docs/hooks
# offline; not --quiet: that hides the warnings --strict counts, and a broken link passed
docs_log="$(mktemp)"
NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --strict --site-dir site >"$docs_log" 2>&1 \
  || { cat "$docs_log"; exit 1; }
rm -f "$docs_log"
jobs="${LASAGNA_TEST_JOBS:-1}"
parallel=()
if [ "$jobs" -gt 1 ]; then parallel=(-n "$jobs" --dist loadfile --no-loadscope-reorder); fi
.venv/bin/python -m pytest -q -ra --durations=25 "${parallel[@]}" "$@"  # the slowest 25: where the time goes
