"""Hostile children for the gateway's per-front revision choice (issue 32): a child asked
for 2026-07-28 over its second connection that refuses `server/discover`, answers it with
something that is no DiscoverResult, never answers, or exits. Each time a 2026-07-28 front
is served in the legacy revision, every call answered, and the child is asked once only
(its refusal is remembered)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .gateway_helpers import PY, SERVERS, Lines, gateway, stdio, write_config

MODERN = "2026-07-28"
REFUSED = "does not answer server/discover"


@pytest.mark.slow
@pytest.mark.parametrize("how", ["refuse", "malformed", "silent", "exit"])
async def test_a_child_refusing_2026_07_28_serves_a_2026_front_in_legacy(
    tmp_path: Path, how: str
) -> None:
    child = stdio([PY, str(SERVERS / "legacy_only.py"), f"--discover={how}"])
    config = write_config(tmp_path, {"ex": {**child, "startup_timeout_sec": 5}})
    errlog = Lines()
    async with gateway(config, mode=MODERN, errlog=errlog, env={"DEBUG": "1"}) as client:
        assert client.session.stateless is not None
        for n in range(3):
            result = await client.call_tool("ex__add", {"a": n, "b": 2}, retries=0)
            assert not result.is_error and str(n + 2) in result.text, result.text
        refusals = [line for line in errlog.lines if REFUSED in line]
        assert len(refusals) == 1, errlog.lines[-20:]
        # the legacy session still serves a legacy-shaped question's round (the child's
        # elicitation without a declared capability is refused by the gateway, answered)
        asked = await client.call_tool("ex__test_elicitation", {"message": "Who?"}, retries=0)
        assert asked.is_error and "elicitation" in asked.text, asked.text
