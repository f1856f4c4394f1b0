#!/usr/bin/env bash
# Install everything, lint, build the docs site (strict: a broken link or page fails) and run
# the whole test suite. Extra args go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAY_USAGE_STATS_ENABLED=0
.venv/bin/python -m ruff check lasagna tests scripts docs/hooks
NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --strict --quiet --site-dir site  # offline
.venv/bin/python -m pytest -q -ra --durations=25 "$@"  # the slowest 25: where the time goes
