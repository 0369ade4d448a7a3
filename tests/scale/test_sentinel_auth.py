"""Sentinels with a password of their own (`requirepass` in each sentinel's file), in front
of data nodes with another: the URL's user and password are the data nodes' (as redis-py's
`Sentinel(..., password=)`, Kombu and Prefect read them), the sentinels' are its options
`sentinel_username=` and `sentinel_password=` (redis-py's `sentinel_kwargs`). Each refusal
is one line at start, status 78, naming what to fix and never a password."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from http_helpers import call, open_session, text_of
from scale_setup import SERVERS
from test_redis_url import one_line, run_to_exit
from test_sentinel import serve
from topologies import SentinelGroup, backend_params

DATA = "data-p@ss/word"  # as the URL carries it: percent-encoded
SENTINELS = "sentinel-p+ss&word"


def encoded(text: str) -> str:
    return text.replace("%", "%25").replace("@", "%40").replace("/", "%2F").replace("&", "%26")


@pytest.fixture(params=backend_params("redis", "valkey"))
def guarded(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SentinelGroup]:
    binary = SERVERS[request.param]
    assert binary is not None
    group = SentinelGroup(tmp_path / "sentinel", binary, DATA, SENTINELS)
    yield group
    group.stop()


def url(group: SentinelGroup, data: str | None, sentinels: str | None) -> str:
    hosts = group.url.removeprefix("redis+sentinel://")
    userinfo = f":{encoded(data)}@" if data is not None else ""
    option = f"?sentinel_password={encoded(sentinels)}" if sentinels is not None else ""
    return f"redis+sentinel://{userinfo}{hosts}{option}"


@pytest.mark.slow
async def test_sentinels_with_their_own_password_serve_sessions(guarded: SentinelGroup) -> None:
    a, b = ours = serve(url(guarded, DATA, SENTINELS), 2)
    try:
        async with aiohttp.ClientSession() as http:
            session = await open_session(http, a.url)
            async with http.post(b.url, json=call(1, "whoami", {}), headers=session) as r:
                assert r.status == 200 and text_of(await r.json()) == str(b.pid)
    finally:
        for replica in ours:
            replica.stop()
    for replica in ours:  # what it logs shows neither password
        assert "p@ss" not in replica.stderr and "p%40ss" not in replica.stderr
        assert "p+ss" not in replica.stderr and "sentinel_password=***" in replica.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("data", "sentinels", "fix"),
    [
        (DATA, None, "sentinel_password"),  # the sentinels want theirs
        (DATA, "wrong-one", "sentinel_password"),
        (DATA, DATA, "sentinel_password"),  # the data nodes' password, given to them
        ("wrong-one", SENTINELS, "its user and password"),  # the data nodes refuse
    ],
    ids=[
        "no-sentinel-password",
        "wrong-sentinel-password",
        "data-password-to-sentinels",
        "wrong-data-password",
    ],
)
def test_a_password_refused_exits_with_one_line_naming_what_to_fix(
    guarded: SentinelGroup, data: str, sentinels: str | None, fix: str
) -> None:
    done = run_to_exit(url(guarded, data, sentinels), timeout=30)
    line = one_line(done)
    assert done.returncode == 78, done.stderr
    assert "refused" in line and fix in line, line
    for secret in ("p@ss", "p%40ss", "p+ss", "wrong-one"):
        assert secret not in done.stderr, done.stderr
