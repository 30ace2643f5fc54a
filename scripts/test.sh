#!/usr/bin/env bash
# Sets up .venv (if needed) with the test dependencies and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
# The HTML report test screenshots it in headless Chromium (and is skipped without one): install it on Debian.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        chromium fonts-dejavu-core; } >/dev/null 2>&1 \
        || echo "warning: could not install chromium; the HTML screenshot test will be skipped" >&2
fi
exec .venv/bin/python -m pytest "$@"
