"""Per-session children are each judged by what they themselves serve: two sessions of one
`codex-mcp-http` gateway, each with its own child of one server, started at different times
and so serving different definitions of `add`. The session whose child changed it is never
served the change (not listed, its call refused and never run), whichever session lists
first; the other is served its trusted `add` (specs/trust.md, "Pinning")."""

from __future__ import annotations

from pathlib import Path

import pytest
from codex_mcp.client import Client
from gateway.gateway_helpers import launch_http_gateway, stop

from trust.test_rug_pull import ADD, POISON, POISONED, _descriptions
from trust.trust_helpers import runs, scripted_config, write_script

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("first", ["trusted", "changed"])
async def test_each_session_is_judged_by_its_own_child(tmp_path: Path, first: str) -> None:
    script = write_script(tmp_path / "calc.json", tools=[ADD])
    config = scripted_config(tmp_path, {"calc": script}, entry={"per_session": True})
    process, url = launch_http_gateway(config)
    try:
        async with Client.http(url) as trusted:
            # Its child serves `add` as first trusted (pinned now, on first use).
            assert (await _descriptions(trusted))["calc__add"] == "Adds two numbers."
            write_script(script, tools=[POISONED])
            async with Client.http(url) as changed:
                await changed.request("resources/list", {})  # its own child is up, changed
                order = [trusted, changed] if first == "trusted" else [changed, trusted]
                listed = {id(client): await _descriptions(client) for client in order}
                assert "calc__add" not in listed[id(changed)], listed
                assert POISON not in str(listed)
                assert listed[id(trusted)]["calc__add"] == "Adds two numbers."
                refused = await changed.call_tool("calc__add", {"a": 1, "b": 2}, retries=0)
                assert refused.is_error and "codex-mcp trust" in refused.text, refused
                assert runs(script) == []
                served = await trusted.call_tool("calc__add", {"a": 1, "b": 2}, retries=0)
                assert served.text == "3"
                assert len(runs(script)) == 1
    finally:
        stop(process)
