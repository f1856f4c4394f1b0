#!/usr/bin/env bash
# Install everything, lint, build the docs site (strict: a broken link or page fails) and run
# the whole test suite. Extra args go to pytest.
#
# Two test processes where there are two CPUs or more (pytest-xdist, a file's tests in one
# process, so a module's cluster or engine starts once): most tests wait on Ray, models or
# subprocesses part of the time, and the other process fills it. LASAGNA_TEST_JOBS=1 runs
# them in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAY_USAGE_STATS_ENABLED=0
.venv/bin/python -m ruff check lasagna tests scripts docs/hooks
NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --strict --quiet --site-dir site  # offline
jobs="${LASAGNA_TEST_JOBS:-$(( $(nproc) >= 2 ? 2 : 1 ))}"
parallel=()
if [ "$jobs" -gt 1 ]; then parallel=(-n "$jobs" --dist loadfile --no-loadscope-reorder); fi
.venv/bin/python -m pytest -q -ra --durations=25 "${parallel[@]}" "$@"  # the slowest 25: where the time goes
