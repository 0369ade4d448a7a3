#!/usr/bin/env bash
# Installs codex-mcp for development from nothing: a virtualenv with the package and its
# test tools, the npm peers the interop tests talk to, and nginx, redis-server, valkey-server
# and chromium for the proxy, replica and status-page tests (as root with apt only; nobody else needs them).
# Each step says what it does and how long it took; a second run skips what is there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"

step() {  # step "what it does" COMMAND...: runs COMMAND, then says how long it took
  local what="$1" started=$SECONDS; shift
  echo "setup: $what ..." >&2
  "$@"
  echo "setup:   done in $((SECONDS - started)) s" >&2
}

apt_install() {  # apt_install WHAT-FOR PACKAGE...: as root with apt, else say what is skipped
  local purpose="$1"; shift
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null; } \
      || echo "setup: could not install $*; $purpose will be skipped" >&2
  else
    echo "setup: $* not installed (needs root and apt); $purpose will be skipped" >&2
  fi
}

[ -x .venv/bin/python ] || step "creating the virtualenv .venv" "$python" -m venv .venv
step "upgrading pip in .venv" .venv/bin/python -m pip install --quiet --upgrade pip
step "installing codex-mcp (editable) with its test tools into .venv" \
  .venv/bin/python -m pip install --quiet -e '.[dev]'

if command -v npm >/dev/null 2>&1; then
  step "installing the npm peers (Codex CLI, Inspector, reference servers, conformance, node 22) into .tools/" \
    bash .ci/node-tools.sh
else
  echo "setup: npm not found; interop tests with npm peers will be skipped" >&2
fi

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  # nginx-light where the distribution has it (smaller), else nginx.
  if apt-cache show nginx-light >/dev/null 2>&1; then nginx=nginx-light; else nginx=nginx; fi
  step "installing nginx (the reverse-proxy tests)" apt_install "the reverse-proxy test" "$nginx"
fi
# redis-server for the replica tests (tests/scale); a user who wants sessions on Redis
# runs their own. As with nginx: installed only as root with apt, never required.
if ! command -v redis-server >/dev/null 2>&1 && [ ! -x /usr/bin/redis-server ]; then
  step "installing redis-server (the replica tests)" apt_install "the replica tests" redis-server
  # The package starts a system-wide server; the tests start their own on a free port.
  if command -v systemctl >/dev/null 2>&1; then systemctl disable --now redis-server >/dev/null 2>&1 || true; fi
fi
# redis-cli (redis-tools) makes the tests' Redis Cluster (`--cluster create`); sentinels are
# `redis-server --sentinel`, so no other package is needed for them.
if ! command -v redis-cli >/dev/null 2>&1 && [ ! -x /usr/bin/redis-cli ]; then
  step "installing redis-tools (the Cluster tests)" apt_install "the Cluster tests" redis-tools
fi
# valkey-server (and valkey-cli) for the same replica tests on Valkey. Debian 12 has it in
# bookworm-backports only: that suite is added when apt knows no valkey-server (backports
# are pinned low, so nothing else is taken from it).
if ! command -v valkey-server >/dev/null 2>&1 && [ ! -x /usr/bin/valkey-server ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
    && ! apt-cache show valkey-server >/dev/null 2>&1 \
    && grep -qs '^VERSION_CODENAME=bookworm' /etc/os-release; then
    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      > /etc/apt/sources.list.d/bookworm-backports.sources
  fi
  step "installing valkey-server (the replica tests on Valkey)" apt_install "the Valkey tests" valkey-server
  # Like redis-server's package, it starts a system-wide server; the tests start their own.
  if command -v systemctl >/dev/null 2>&1; then systemctl disable --now valkey-server >/dev/null 2>&1 || true; fi
fi
# valkey-cli (valkey-tools, which valkey-server depends on) makes the tests' Valkey Cluster.
if command -v valkey-server >/dev/null 2>&1 && ! command -v valkey-cli >/dev/null 2>&1 \
  && [ ! -x /usr/bin/valkey-cli ]; then
  step "installing valkey-tools (the Cluster tests on Valkey)" apt_install "the Valkey Cluster tests" valkey-tools
fi
# Headless Chromium for the status page's browser test (tests/browser.py drives it).
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  step "installing chromium (the status page's browser test)" apt_install "the browser test" chromium
fi
echo "setup: done. Try: .venv/bin/python smoke/smoke.py" >&2
