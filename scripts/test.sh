#!/usr/bin/env bash
# The project's checks, as CI runs them: lint, format, types, then every test (arguments go to
# pytest). Each part says how long it took, and so does the whole: the tests take minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
began=$SECONDS

part() {  # part NAME COMMAND...: run it, then say how long it took, passed or not
  local name=$1 start=$SECONDS status=0
  shift
  "$@" || status=$?
  echo "test.sh: $name took $((SECONDS - start)) s$([ $status = 0 ] || echo " and failed ($status)")" >&2
  return $status
}

part "ruff check" .venv/bin/ruff check .
part "ruff format" .venv/bin/ruff format --check .
part mypy .venv/bin/mypy
echo "test.sh: pytest collects the tests first (a minute or more, silently), then runs them" >&2
part pytest .venv/bin/python -m pytest -q "$@"
echo "test.sh: everything took $((SECONDS - began)) s" >&2
