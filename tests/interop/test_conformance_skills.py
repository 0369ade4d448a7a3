"""The conformance suite's Skills extension scenarios (sep-2640-*), both sides, both eras:
our examples server (examples/skills/ and a skill defined in code) against the suite's
server scenarios, and our client (examples/conformance_client.py) against its scenario
servers. Extension scenarios are on no revision's timeline, so each is run by name with
`--force`. Every check passes; the only SKIPPED ones are those the suite itself declares
not applicable (the cache attributes it checks from 2026-07-28 on), and a check missing
from a run fails the test as much as a failing one."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .test_conformance import ADAPTER, NODE, SUITES, checks_by_status

if TYPE_CHECKING:
    from conftest import LaunchHttp

ROOT = Path(__file__).resolve().parents[2]
SUITE = SUITES["0.2.0-alpha.12"]
VERSIONS = ["2025-11-25", "2026-07-28"]

#: Each server scenario's checks, every one of which must be reported.
SERVER_CHECKS = {
    "sep-2640-skills-enumeration": {
        "sep-2640-capability-empty-object",
        "sep-2640-capability-declaration-inline",
        "sep-2640-capability-requires-resources",
        "sep-2640-capability-commits-to-methods",
        "sep-2640-skills-list-implemented",
        "sep-2640-skills-list-pagination",
        "sep-2640-skills-list-entry-atomic",
        "sep-2640-skills-list-cache-attributes",
        "sep-2640-entry-uri-required",
        "sep-2640-entry-frontmatter-required",
        "sep-2640-entry-uri-matches-frontmatter-name",
        "sep-2640-skill-uri-scheme",
        "sep-2640-entry-resources-required",
        "sep-2640-resources-complete",
        "sep-2640-resources-uri-within-skill",
        "sep-2640-resources-digest-format",
        "sep-2640-resources-size-required",
        "sep-2640-limit-resources-per-skill",
        "sep-2640-limit-total-size",
        "sep-2640-metadata-reserved-prefix",
        "sep-2640-name-naming-rules",
        "sep-2640-authority-reg-name",
        "sep-2640-names-should-be-unique",
        "sep-2640-skills-get-implemented",
        "sep-2640-skills-get-entry-shape",
        "sep-2640-skills-get-cache-attributes",
        "sep-2640-skills-get-no-cursor",
        "sep-2640-skills-get-unknown-uri-invalid-params",
        "sep-2640-skillmd-required",
        "sep-2640-skillmd-frontmatter",
        "sep-2640-entry-frontmatter-identical",
    },
    "sep-2640-skills-directory": {
        "sep-2640-capability-directory-read-flag",
        "sep-2640-directory-read-method-registered",
        "sep-2640-directory-read-result-resources-shape",
        "sep-2640-directory-read-subdir-mimetype",
        "sep-2640-directory-read-invalid-params",
        "sep-2640-directory-read-pagination",
    },
    "sep-2640-skills-manifest": {
        "sep-2640-skillmd-mimetype",
        "sep-2640-skillmd-metadata-name",
        "sep-2640-skillmd-metadata-description",
        "sep-2640-final-segment-equals-name",
        "sep-2640-meta-prefix",
    },
}
#: The suite's own skips: before 2026-07-28 it does not check the cache attributes.
SUITE_SKIPS = {
    "2025-11-25": {"sep-2640-skills-list-cache-attributes", "sep-2640-skills-get-cache-attributes"},
    "2026-07-28": set(),
}
CLIENT_CHECKS = {
    "sep-2640-client-no-prefetch": "sep-2640-host-no-prefetch",
    "sep-2640-client-verify-digest": "sep-2640-host-verify-digest",
    "sep-2640-client-verify-size": "sep-2640-host-size-mismatch-failure",
    "sep-2640-client-verify-frontmatter": "sep-2640-host-frontmatter-comparison",
}

pytestmark = [pytest.mark.interop, pytest.mark.slow]


def suite(mode: str, scenario: str, version: str, tmp_path: Path, *extra: str) -> Path:
    """Run one scenario (`mode` "server" or "client") with `--force`; its results folder."""
    if not (NODE.exists() and SUITE.exists()):
        pytest.skip("conformance 0.2.0-alpha.12 or node 22 not installed (bash .ci/node-tools.sh)")
    results = tmp_path / f"results-{mode}-{version}"
    command = [str(NODE), str(SUITE), mode, *extra, "--scenario", scenario]
    command += ["--spec-version", version, "--force", "-o", str(results)]
    completed = subprocess.run(
        command,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_COLOR": "1", "CONFORMANCE_CLIENT_TIMEOUT": "100"},
    )
    assert any(results.rglob("checks.json")), completed.stdout[-3000:] + completed.stderr[-3000:]
    return results


@pytest.fixture(scope="module")
def examples_url(launch_http: LaunchHttp) -> str:
    return launch_http("--serve", str(ROOT / "examples/everything_server.py"))


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("scenario", sorted(SERVER_CHECKS))
def test_our_server_passes_the_skills_scenarios(
    examples_url: str, tmp_path: Path, scenario: str, version: str
) -> None:
    results = suite("server", scenario, version, tmp_path, "--url", examples_url)
    statuses = checks_by_status(results)
    assert not statuses["FAILURE"] and not statuses["WARNING"], (
        statuses["FAILURE"] + statuses["WARNING"]
    )
    skipped = {check[1] for check in statuses["SKIPPED"]}
    passed = {check[1] for check in statuses["SUCCESS"]}
    expected = SERVER_CHECKS[scenario]
    assert skipped == SUITE_SKIPS[version] & expected, statuses["SKIPPED"]
    assert passed >= expected - skipped, expected - skipped - passed
    for _folder, check, message in statuses["SKIPPED"]:
        assert "not applicable on negotiated protocol" in message, (check, message)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("scenario", sorted(CLIENT_CHECKS))
def test_our_client_passes_the_skills_scenarios(
    tmp_path: Path, scenario: str, version: str
) -> None:
    results = suite("client", scenario, version, tmp_path, "--command", ADAPTER)
    statuses = checks_by_status(results)
    assert {check[1] for check in statuses["SUCCESS"]} == {CLIENT_CHECKS[scenario]}, statuses
    assert not statuses["FAILURE"] and not statuses["WARNING"] and not statuses["SKIPPED"]
