#!/usr/bin/env bash
# Sets up .venv (if needed) with the test dependencies (TensorFlow, JAX and PyTorch for the real-capture tests) and runs the
# whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# The browser tests (the tab, the HTML report) drive Debian's chromium and the JS unit tests need node:
# install them when missing and we can (root with apt-get); otherwise those tests skip and say why.
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium fonts-dejavu-core)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}"; } >/dev/null 2>&1 || echo "warning: could not install ${missing[*]}" >&2
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test,tf,dask,torch,jax]'
exec .venv/bin/python -m pytest --all-tiers "$@"   # every tier but the timed one (perf); plain `pytest` runs only the fast one
