#!/usr/bin/env bash
# Install everything and run the whole test suite (lint first). Extra args go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAY_USAGE_STATS_ENABLED=0
.venv/bin/python -m ruff check lasagna tests scripts
.venv/bin/python -m pytest -q -ra --durations=25 "$@"  # the slowest 25: where the time goes
