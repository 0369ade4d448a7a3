"""The shared test helpers (tests/support) do what the tests rely on: until() returns the
condition's value, fails with what was awaited once its deadline passes, and does not
mistake a check's own timeout for its deadline."""

from __future__ import annotations

import asyncio
import time

import pytest
from support.imports import loaded
from support.polling import until, until_sync


async def test_until_returns_the_first_truthy_value_of_a_sync_or_async_check() -> None:
    calls = []

    def sync_check() -> list[int] | None:
        calls.append(1)
        return calls if len(calls) >= 3 else None

    assert await until(sync_check, 5, every=0.001) == [1, 1, 1]

    async def async_check() -> str:
        await asyncio.sleep(0)
        return "ready"

    assert await until(async_check, 5) == "ready"


async def test_until_fails_at_its_deadline_saying_what_it_awaited() -> None:
    state = {"seen": 0}
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"not met in 0\.2 s: seen 0"):
        await until(lambda: False, 0.2, lambda: f"seen {state['seen']}")
    assert time.monotonic() - started < 5


async def test_until_bounds_a_check_that_hangs_and_keeps_a_checks_own_timeout() -> None:
    async def hangs() -> bool:
        await asyncio.Event().wait()
        return True

    with pytest.raises(AssertionError, match="the hanging check"):
        await until(hangs, 0.2, "the hanging check")

    async def times_out() -> bool:
        raise TimeoutError("the peer's own")

    with pytest.raises(TimeoutError, match="the peer's own"):
        await until(times_out, 5)


def test_until_sync_has_the_same_contract() -> None:
    values = iter([0, "", "done"])
    assert until_sync(lambda: next(values), 5, every=0.001) == "done"
    with pytest.raises(AssertionError, match=r"not met in 0\.1 s: never"):
        until_sync(lambda: None, 0.1, "never")


def test_import_rules_cover_a_package_and_a_name_prefix() -> None:
    imported = {"aiohttp", "aiohttp.web", "aiohttpx", "codex_mcp.lint.cli", "json"}
    assert loaded(imported, ["aiohttp"]) == ["aiohttp", "aiohttp.web"]
    assert loaded(imported, ["codex_mcp.lint*"]) == ["codex_mcp.lint.cli"]
    assert loaded(imported, ["aiohttp"], allowed={"aiohttp"}) == ["aiohttp.web"]
