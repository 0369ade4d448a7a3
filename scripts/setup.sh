#!/usr/bin/env bash
# Installs codex-mcp for development from nothing: a virtualenv with the package and its
# test tools, the npm peers the interop tests talk to, and nginx and redis-server for the
# proxy and replica tests (as root with apt only; nobody else needs them).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"

[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev]'

if command -v npm >/dev/null 2>&1; then
  bash .ci/node-tools.sh
else
  echo "setup: npm not found; interop tests with npm peers will be skipped" >&2
fi

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null \
      || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null \
      || echo "setup: could not install nginx; the reverse-proxy test will be skipped" >&2
  else
    echo "setup: nginx not installed; the reverse-proxy test will be skipped" >&2
  fi
fi
# redis-server for the replica tests (tests/scale); a user who wants sessions on Redis
# runs their own. As with nginx: installed only as root with apt, never required.
if ! command -v redis-server >/dev/null 2>&1 && [ ! -x /usr/bin/redis-server ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null; } \
      || echo "setup: could not install redis-server; the replica tests will be skipped" >&2
    # The package starts a system-wide server; the tests start their own on a free port.
    if command -v systemctl >/dev/null 2>&1; then systemctl disable --now redis-server >/dev/null 2>&1 || true; fi
  else
    echo "setup: redis-server not installed; the replica tests will be skipped" >&2
  fi
fi
echo "setup: done. Try: .venv/bin/python smoke/smoke.py" >&2
