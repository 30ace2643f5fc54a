#!/usr/bin/env bash
# Sets up .venv (if needed) with the test dependencies (TensorFlow for the real-capture tests) and runs the
# whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test,tf]'
exec .venv/bin/python -m pytest "$@"
