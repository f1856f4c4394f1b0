#!/usr/bin/env bash
# Install lasagna into ./.venv and run the main job on the embedded default: the packaged
# sample data set, keyless local models, an in-process Ray. Results go to ./results.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 RAY_USAGE_STATS_ENABLED=0
SAMPLE=lasagna/sample/sample.jsonl
.venv/bin/lasagna benchmark validate-data "$SAMPLE"
.venv/bin/lasagna benchmark run "$SAMPLE" --profile speed      # retrieval: BM25 + dense MiniLM
.venv/bin/lasagna benchmark run "$SAMPLE" --profile rag        # generation: SmolLM2 on vLLM
.venv/bin/lasagna benchmark run "$SAMPLE" --profile speed      # again: a 2nd run of the group (progression)
.venv/bin/lasagna results leaderboard
.venv/bin/lasagna report --out report.html   # one offline page: open report.html in a browser
