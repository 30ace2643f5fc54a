#!/usr/bin/env bash
# Sets up .venv (if needed), writes (or reuses) the demo logdir demo_logs/ from the scenario library, and
# analyzes its input-bound run. Extra arguments go to `analyze` (e.g. --format markdown).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
.venv/bin/tb-gpu-advisor demo demo_logs
echo
exec .venv/bin/tb-gpu-advisor analyze demo_logs --run input_bound/2026_01_15_09_30_00 "$@"
