"""A child's stop racing a call: calls fired at the idle edge (a child stopped for want of use
while they arrive) and at a reload that replaces the child.

What must hold: a call that arrives while its child stops waits for the child to be started
again and is answered; none fails because the child was between two processes. Real gateway
subprocess, real children."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from codex_mcp.client import Client
from codex_mcp.core.errors import McpError

from .gateway_helpers import BROKEN, Lines, gateway, status, stdio, until, write_config

IDLE_SECONDS = 0.3
ROUNDS = 40
BURST = 8


async def _burst(client: Client, tool: str, count: int, tag: str) -> list[str]:
    """`count` calls at once; the failures' texts."""

    async def one(number: int) -> str | None:
        message = f"{tag}-{number}"
        try:
            result = await client.call_tool(tool, {"message": message}, retries=0)
        except Exception as error:  # a failure is what is counted
            return f"{type(error).__name__}: {error}"
        return None if result.text == message and not result.is_error else str(result.text)

    outcomes = await asyncio.gather(*(one(n) for n in range(count)))
    return [outcome for outcome in outcomes if outcome is not None]


@pytest.mark.slow
async def test_calls_at_the_idle_edge_all_succeed(tmp_path: Path) -> None:
    entry = stdio(BROKEN, "--tools", "echo", lazy=True, idle_timeout_sec=IDLE_SECONDS)
    config = write_config(tmp_path, {"edge": entry})
    errlog = Lines()
    failures: list[str] = []
    calls = 0
    async with gateway(config, "--log-level", "info", errlog=errlog) as client:
        for round_ in range(ROUNDS):
            stops = _count(errlog, "no call for")
            failures += await _burst(client, "edge__echo", BURST, f"r{round_}")
            calls += BURST
            # The idle watch decided to stop it: fire at once, while it stops.
            try:
                await until(lambda n=stops: _count(errlog, "no call for") > n, 30, every=0.005)
            except TimeoutError:
                raise AssertionError(
                    f"no idle stop: {failures[:3]} {errlog.text()[-3000:]}"
                ) from None
            failures += await _burst(client, "edge__echo", BURST, f"s{round_}")
            calls += BURST
    assert calls >= 600
    assert not failures, f"{len(failures)} of {calls} calls failed: {failures[:3]}"


def _count(errlog: Lines, text: str) -> int:
    return sum(text in line for line in errlog.lines)


@pytest.mark.slow
async def test_calls_racing_a_reload_that_replaces_their_child_are_answered_or_retryable(
    tmp_path: Path,
) -> None:
    """A reload (SIGHUP) replaces the child of a changed entry while calls keep coming: a
    call that arrives meanwhile waits for the successor (its listing too, when a second
    reload replaced the one it waited for), and one in flight on the old process is answered
    by it before it stops. Before: "the handler was cancelled", "client closed the
    connection", "the server is starting"."""
    config = write_config(tmp_path, {"one": stdio(BROKEN, "--tools", "echo", "--name", "v0")})
    refused: list[str] = []
    retried: list[str] = []
    answered = 0
    done = asyncio.Event()

    async def caller(client: Client, worker: int) -> None:
        nonlocal answered
        number = 0
        while not done.is_set():
            number += 1
            message = f"{worker}.{number}"
            try:
                result = await client.call_tool("one__echo", {"message": message}, retries=0)
            except McpError as error:
                (retried if error.retryable else refused).append(str(error))
                continue
            except Exception as error:  # what is counted
                refused.append(f"{type(error).__name__}: {error}")
                continue
            answered += result.text == message

    async with gateway(config) as client:
        gateway_pid = client.transport.process.pid  # type: ignore[attr-defined]
        callers = [asyncio.create_task(caller(client, n)) for n in range(BURST)]
        for version in range(1, 11):
            before = (await status(client))["one"]["pid"]
            entry = stdio(BROKEN, "--tools", "echo", "--name", f"v{version}")
            write_config(tmp_path, {"one": entry})
            os.kill(gateway_pid, signal.SIGHUP)

            async def replaced(old: int = before) -> bool:
                return (await status(client))["one"]["pid"] not in (old, None)

            await until(replaced, 30)
        done.set()
        await asyncio.gather(*callers)
    calls = answered + len(retried) + len(refused)
    assert not refused and not retried, f"{len(refused) + len(retried)} of {calls} failed: " + (
        f"{(refused + retried)[:3]}"
    )
    assert answered >= 10 * BURST
