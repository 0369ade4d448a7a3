"""The smoke script, run as a user would run it."""

import subprocess
import sys

from .conftest import ROOT

#: The steps a fresh install must pass; the script may grow more.
REQUIRED_STEPS = [
    "stdio initialize",
    "stdio tools/list",
    "stdio tools/call echo",
    "stdio clean exit on EOF",
    "http server starts",
    "POST /mcp initialize",
    "POST /mcp tools/call echo",
    "GET /mcp/sse?request= tools/call echo",
    "http clean exit on SIGTERM",
]


def test_smoke_script_passes_every_step() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "smoke/smoke.py")], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert not [line for line in lines if line.startswith("FAIL")], result.stdout
    passed = [line.removeprefix("PASS").strip() for line in lines if line.startswith("PASS")]
    for step in REQUIRED_STEPS:
        assert any(line.startswith(step) for line in passed), f"no PASS for {step!r}"
    assert lines[-1].startswith(f"smoke: {len(passed)} passed, 0 failed"), lines[-1]
