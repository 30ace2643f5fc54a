#!/usr/bin/env bash
# Sets up .venv (if needed) and runs the product on the bundled demo logdir.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
exec .venv/bin/tb-gpu-advisor analyze demo_logs "$@"
