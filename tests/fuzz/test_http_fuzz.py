"""Fuzz a real `codex-mcp-http` on 127.0.0.1, one message (or batch) per POST.

Several POSTs are in flight at once. Each exchange must answer with something other than
a 5xx; 202 with an empty body; the requests it carried, each exactly once, in JSON or SSE;
replies with a null id within what its message allows. At the end a normal call still
works, the server logged no traceback, and its RSS stayed flat.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest

from .checker import Ledger
from .http_peer import messages_of, open_session
from .messages import MAIN_KINDS, NULL_ID_NOTIFICATION, ODD_BATCH, Case, Fuzzer
from .settings import (
    MAX_MESSAGE_BYTES,
    MESSAGES,
    ODD_MESSAGES,
    SEED,
    rss_growth_limit_kib,
    rss_kib,
)

if TYPE_CHECKING:
    from conftest import LaunchedHttp, LaunchHttp

CONCURRENCY = 4
EXCHANGE_TIMEOUT = 15.0


@pytest.fixture(scope="module")
def fuzz_url(launch_http: LaunchHttp) -> LaunchedHttp:
    return launch_http("--max-body-bytes", str(MAX_MESSAGE_BYTES), "--log-level", "warning")


async def exchange(
    http: aiohttp.ClientSession,
    url: str,
    session: dict[str, str],
    case: Case,
    ledger: Ledger,
    where: str,
) -> None:
    ledger.expect(case.expect)
    async with http.post(url, data=case.body, headers=session) as response:
        assert response.status < 500, f"{ledger.context}: HTTP {response.status} ({where})"
        messages = await messages_of(response, EXCHANGE_TIMEOUT)
        if response.status == 202:
            assert messages == [], f"{ledger.context}: 202 with a body ({where})"
    nulls_before = ledger.nulls
    for message in messages:
        ledger.take(message, where)
    ledger.check_nulls(case.expect, ledger.nulls - nulls_before, where)
    missing = ledger.missing(case.expect.must)
    assert not missing, f"{ledger.context}: not answered: {missing} ({where})"


async def run_http_fuzz(
    url: LaunchedHttp, version: str, kinds: dict[str, int], messages: int
) -> dict[str, Any]:
    context = f"HTTP fuzz, seed {SEED}, protocol {version}, kinds {sorted(kinds)}"
    fuzzer = Fuzzer(
        SEED,
        batches=version < "2025-06-18",
        kinds=kinds,
        max_message_bytes=MAX_MESSAGE_BYTES,
        http=True,
        clean_batches=ODD_BATCH not in kinds,
    )
    cases = [fuzzer.case() for _ in range(messages)]
    ledger = Ledger(context)
    connector = aiohttp.TCPConnector(limit=CONCURRENCY)
    async with aiohttp.ClientSession(connector=connector) as http:
        session = await open_session(http, url, version)

        async def worker(share: list[tuple[int, Case]]) -> None:
            for index, case in share:
                await exchange(http, url, session, case, ledger, f"message {index}: {case.kind}")

        async def send(batch: list[tuple[int, Case]]) -> None:
            shares = [batch[n::CONCURRENCY] for n in range(CONCURRENCY)]
            await asyncio.gather(*(worker(share) for share in shares))

        numbered = list(enumerate(cases))
        warm_up = max(1, messages // 10)
        started = time.monotonic()
        await send(numbered[:warm_up])
        rss_before = rss_kib(url.pid)
        await send(numbered[warm_up:])
        rss_after = rss_kib(url.pid)
        seconds = time.monotonic() - started
        final = {
            "jsonrpc": "2.0",
            "id": "final",
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "still here"}},
        }
        async with http.post(url, json=final, headers=session) as response:
            answer = await messages_of(response)
        assert answer[-1]["result"]["content"][0]["text"] == "still here", answer
    log = "".join(url.log)
    assert "Traceback" not in log, f"{context}: the server logged a traceback:\n{log[-5000:]}"
    figures = {
        "messages": messages,
        "seconds": round(seconds, 2),
        "replies": ledger.replies,
        "null_id_replies": ledger.nulls,
        "rss_before_kib": rss_before,
        "rss_after_kib": rss_after,
    }
    print(f"\n{context}: {figures}")
    limit = rss_growth_limit_kib(messages)
    assert rss_after - rss_before < limit, f"{context}: RSS grew over {limit} KiB: {figures}"
    return figures


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26"])
async def test_http_survives_the_fuzz(fuzz_url: LaunchedHttp, version: str) -> None:
    """2025-03-26 allows batches; here only of requests, notifications and responses."""
    await run_http_fuzz(fuzz_url, version, MAIN_KINDS, MESSAGES)


async def test_http_fuzz_with_odd_batches(fuzz_url: LaunchedHttp) -> None:
    await run_http_fuzz(fuzz_url, "2025-03-26", {**MAIN_KINDS, ODD_BATCH: 20}, ODD_MESSAGES)


async def test_http_fuzz_with_null_id_notifications(fuzz_url: LaunchedHttp) -> None:
    await run_http_fuzz(
        fuzz_url, "2025-06-18", {**MAIN_KINDS, NULL_ID_NOTIFICATION: 10}, ODD_MESSAGES
    )
