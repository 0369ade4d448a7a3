"""The external decision point, end to end (specs/policy.md, "Hook"): `codex-mcp-http`
(serving the child directly, and as a gateway of it) asks a real aiohttp decision point on
127.0.0.1 about every listing and call; its yes allows, its no denies, an answer slower
than the hook's timeout denies, and once it is down everything is denied; the listing
follows the same answers (no drift), and every deny is an audit line naming the hook."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from support.polling import until

from .policy_helpers import (
    Caller,
    gateway_server,
    listed_and_usable,
    plain_server,
    universe,
    write_policy,
)

#: The decision point's answer by the child's own tool name (anything else: allowed).
ANSWERS = {"rm": "deny", "admin_reset": "slow", "job": "garbage"}


class DecisionPoint:
    def __init__(self) -> None:
        self.runner: web.AppRunner | None = None
        self.url = ""
        self.asked: list[dict[str, Any]] = []

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/data/mcp/allow", self.decide)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", 0).start()
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}/v1/data/mcp/allow"

    async def decide(self, request: web.Request) -> web.Response:
        asked = (await request.json())["input"]
        self.asked.append(asked)
        own = asked.get(asked["kind"])
        answer = ANSWERS.get(own, "allow")
        if answer == "slow":
            await asyncio.sleep(3)
        if answer == "garbage":
            return web.Response(text="<html>yes</html>", content_type="application/json")
        return web.json_response({"result": {"allow": answer != "deny"}})

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None


@pytest.fixture
async def decision_point() -> AsyncIterator[DecisionPoint]:
    point = DecisionPoint()
    await point.start()
    yield point
    await point.stop()


@pytest.mark.slow
@pytest.mark.parametrize("served", ["plain", "gateway"])
async def test_the_hook_decides_listing_and_calling_alike_and_fails_closed(
    tmp_path: Path, decision_point: DecisionPoint, served: str
) -> None:
    policy = write_policy(
        tmp_path,
        {
            "default": "allow",
            "rules": [{"effect": "deny", "kind": "prompt"}],  # local rules first
            "hook": {"url": decision_point.url, "timeout_sec": 0.5},
        },
    )
    children = ("kid",) if served == "gateway" else ()
    server = gateway_server(tmp_path, policy, {"kid": {}}) if children else plain_server(policy)
    prefix = "kid__" if children else ""
    try:
        async with aiohttp.ClientSession() as http:
            caller = await Caller(http, server.url).open()
            if children:

                async def up() -> bool:
                    return f"{prefix}get_time" in await caller.listed("tools")

                await until(up, 30, "the child up")
            everything = universe(children)
            found = await listed_and_usable(caller, everything)
            for kind, (listed, used) in found.items():
                assert listed == used, (served, kind, listed ^ used)
            listed_tools = {n for n in found["tools"][0] if n in everything["tools"]}
            assert listed_tools == {f"{prefix}{t}" for t in ("get_time", "echo", "report")}, found
            assert found["prompts"] == (set(), set())  # denied locally: the hook not asked
            assert not any(each["kind"] == "prompt" for each in decision_point.asked)
            # What the hook was told: who and what, the action, never a token.
            calls = [a for a in decision_point.asked if a["action"] == "call"]
            rm = next(a for a in calls if a.get("tool") == "rm")
            assert rm["name"] == f"{prefix}rm" and rm["child"] == (
                children[0] if children else None
            )
            assert rm["session"] and rm["principal"] is None

            deny = server.wait_for_line(rf"policy deny: action=call tool={prefix}rm .* by=hook$")
            assert "session=" in deny, deny
            slow = server.wait_for_line(
                rf"policy deny: action=call tool={prefix}admin_reset .*by=hook failed closed: "
                r"no answer within 0.5 s"
            )
            assert slow
            server.wait_for_line(rf"action=call tool={prefix}job .*by=hook failed closed: its")

            # Down: every decision is a deny, listing and calling alike.
            await decision_point.stop()
            assert await caller.listed("tools") == []
            reply = await caller.ask("tools/call", {"name": f"{prefix}get_time"})
            assert "error" in reply, reply
            server.wait_for_line(
                rf"policy deny: action=call tool={prefix}get_time .*hook failed closed: "
                r"unreachable"
            )
    finally:
        server.stop()
