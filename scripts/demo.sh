#!/usr/bin/env bash
# Sets up .venv (if needed), writes (or reuses) the demo logdir demo_logs/ from the scenario library, prints
# the report of its input-bound run, and starts TensorBoard with the GPU Advisor tab on it (Ctrl-C stops it).
# Extra arguments go to `demo` (e.g. --port 6007, --no-serve).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
.venv/bin/tb-gpu-advisor analyze demo_logs --run input_bound/2026_01_15_09_30_00
echo
exec .venv/bin/tb-gpu-advisor demo demo_logs "$@"

