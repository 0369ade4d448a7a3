"""The smoke script, run as a user would run it."""

import subprocess
import sys

from .conftest import ROOT


def test_smoke_script_passes_every_step() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "smoke/smoke.py")], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert not [line for line in lines if line.startswith("FAIL")]
    assert sum(line.startswith("PASS") for line in lines) == 10
