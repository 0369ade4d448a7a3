"""A listing under an external decision point (specs/policy.md, "Hook", "A listing"): a
child listing hundreds of tools must not turn one tools/list into hundreds of concurrent
requests to the decision point, a hook that answers every question in time must not lose
items to its own queue, and a hook that is slow or down costs a listing about one
timeout, not one per item, and hides everything. Real processes: `codex-mcp-http` serving
a child of 400 tools, and an aiohttp decision point on 127.0.0.1 counting how many of
its requests are open at once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from codex_mcp.policy import Caller as Who
from codex_mcp.policy import Target
from codex_mcp.policy.config import HookConfig, PolicyConfig
from codex_mcp.policy.decide import Policy
from support.processes import HttpProcess

from .policy_helpers import Caller, called, refused, write_policy
from .servers.many import COUNT

MANY = Path(__file__).parent / "servers" / "many.py"


class CountingDecisionPoint:
    """Allows every tool but `tool_7`, after `delay` seconds (`slow`: never in time);
    counts the requests open at once."""

    def __init__(self) -> None:
        self.runner: web.AppRunner | None = None
        self.url = ""
        self.delay = 0.04
        self.open = 0
        self.peak = 0
        self.asked = 0

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/data/mcp/allow", self.decide)
        # A client that went away (a hook that gave up, a cancelled listing) ends its
        # question here too, as a real decision point would not be kept waiting on.
        self.runner = web.AppRunner(app, handler_cancellation=True)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", 0).start()
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}/v1/data/mcp/allow"

    async def decide(self, request: web.Request) -> web.Response:
        self.open += 1
        self.asked += 1
        self.peak = max(self.peak, self.open)
        try:
            asked: dict[str, Any] = (await request.json())["input"]
            await asyncio.sleep(self.delay)
            return web.json_response({"result": asked.get("tool") != "tool_7"})
        finally:
            self.open -= 1

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None


@pytest.fixture
async def decision_point() -> AsyncIterator[CountingDecisionPoint]:
    point = CountingDecisionPoint()
    await point.start()
    yield point
    await point.stop()


def _served(tmp_path: Path, hook: dict[str, Any]) -> HttpProcess:
    policy = write_policy(tmp_path, {"default": "allow", "hook": hook})
    return HttpProcess("--serve", str(MANY), "--policy", str(policy))


@pytest.mark.slow
async def test_a_big_listing_is_asked_with_bounded_concurrency_and_loses_nothing(
    tmp_path: Path, decision_point: CountingDecisionPoint
) -> None:
    # 400 questions of 40 ms each: 16 at a time take about a second, more than the
    # hook's timeout. A timeout that counted the wait for a free connection would hide
    # the listing's tail although every answer came in time.
    server = _served(tmp_path, {"url": decision_point.url, "timeout_sec": 0.6})
    try:
        async with aiohttp.ClientSession() as http:
            callers = [await Caller(http, server.url).open() for _ in range(2)]
            # Two sessions list at once: the bound is the hook's, not each listing's.
            listings = await asyncio.gather(*(caller.listed("tools") for caller in callers))
            expected = {f"tool_{n}" for n in range(COUNT)} - {"tool_7"}
            for listed in listings:
                assert set(listed) == expected, sorted(expected - set(listed))[:10]
            assert decision_point.asked >= 2 * (COUNT - 1)
            assert 1 <= decision_point.peak <= 16, decision_point.peak
            # Listed is usable, hidden is refused.
            assert called(await callers[0].ask("tools/call", {"name": "tool_8"}), "tool")
            assert refused(await callers[0].ask("tools/call", {"name": "tool_7"}))
    finally:
        server.stop()


@pytest.mark.slow
async def test_the_concurrency_is_the_policys_setting(
    tmp_path: Path, decision_point: CountingDecisionPoint
) -> None:
    decision_point.delay = 0.005
    server = _served(tmp_path, {"url": decision_point.url, "max_concurrent": 3})
    try:
        async with aiohttp.ClientSession() as http:
            caller = await Caller(http, server.url).open()
            listed = await caller.listed("tools")
            assert len(listed) == COUNT - 1 and "tool_7" not in listed
            assert 1 <= decision_point.peak <= 3, decision_point.peak
    finally:
        server.stop()


@pytest.mark.slow
async def test_a_slow_hook_costs_a_listing_about_one_timeout_and_hides_everything(
    tmp_path: Path, decision_point: CountingDecisionPoint
) -> None:
    # Asked one by one, 400 questions of 0.3 s each, 16 at a time, would take 7.5 s.
    decision_point.delay = 5
    server = _served(tmp_path, {"url": decision_point.url, "timeout_sec": 0.3})
    try:
        async with aiohttp.ClientSession() as http:
            caller = await Caller(http, server.url).open()
            started = time.monotonic()
            assert await caller.listed("tools") == []
            took = time.monotonic() - started
            assert took < 4, took
            # Only the first round was asked; the rest of the listing was denied unasked.
            assert decision_point.asked <= 16, decision_point.asked
            line = server.wait_for_line(r"policy deny: action=list tool=tool_\d+ .*unasked")
            assert "hook failed closed" in line, line
            # Failing closed is per listing: a call is asked again (and denied again).
            reply = await caller.ask("tools/call", {"name": "tool_8"})
            assert refused(reply), reply
            server.wait_for_line(r"policy deny: action=call tool=tool_8 .*no answer within")
    finally:
        server.stop()


async def test_a_cancelled_listing_leaves_no_question_behind(
    decision_point: CountingDecisionPoint,
) -> None:
    """A listing whose request goes away (the client left) stops asking: its questions
    do not go on in the background."""
    decision_point.delay = 5
    policy = Policy(PolicyConfig("allow", (), HookConfig(decision_point.url, timeout_sec=10)))
    who = Who(principal=None, scopes=None, session="s")
    targets = [Target("tool", f"tool_{n}") for n in range(COUNT)]
    try:
        listing = asyncio.ensure_future(policy.decide_all(who, targets, "list"))

        async def asking() -> None:
            while decision_point.open == 0:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(asking(), 10)
        listing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await listing

        async def quiet() -> None:
            while decision_point.open:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(quiet(), 10)
        assert decision_point.asked <= 16, decision_point.asked
    finally:
        await policy.close()
