"""The token store against what another local process can do to it (specs/isolation.md,
"The OAuth client and its token store"): tamper with it (wrong types, deep nesting, a huge
file, bytes that are not UTF-8), leave its directory open to others, and refresh the same
tokens at the same moment as we do, against an authorization server that rotates refresh
tokens (OAuth 2.1): two real processes must converge on the newest tokens, with no login.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from codex_mcp.client import Client
from codex_mcp.client.oauth import OAuth, OAuthError, ServerAuth, Tokens, TokenStore
from oauth_fake import OAuthFake

URL = "https://mcp.example/mcp"
WORKER = Path(__file__).resolve().parent / "servers" / "oauth_store_worker.py"
GOOD = {"access_token": "ok", "token_type": "Bearer"}

TAMPERED: list[Any] = [
    pytest.param({"tokens": [1, 2]}, None, id="tokens-list"),
    pytest.param({"tokens": {"access_token": {"x": 1}}}, None, id="access-object"),
    pytest.param({"tokens": {"access_token": ["x"]}}, None, id="access-list"),
    pytest.param({"tokens": {"access_token": "a\r\nX-Evil: 1"}}, None, id="access-newline"),
    pytest.param({"tokens": {**GOOD, "token_type": {"t": 1}}}, None, id="type-object"),
    pytest.param({"tokens": {**GOOD, "expires_at": "soon"}}, "Bearer ok", id="expires-string"),
    pytest.param({"tokens": {**GOOD, "refresh_token": 5}}, "Bearer ok", id="refresh-number"),
    pytest.param({"tokens": {**GOOD, "extra": 1}}, "Bearer ok", id="extra-key"),
    pytest.param({"tokens": GOOD, "registrations": []}, "Bearer ok", id="registrations-list"),
    pytest.param(
        {"tokens": GOOD, "registrations": {"https://as.example": []}}, "Bearer ok", id="reg-list"
    ),
    pytest.param(
        {"tokens": GOOD, "registrations": {"https://as.example": {"client_id": 5}}},
        "Bearer ok",
        id="reg-id-number",
    ),
    pytest.param({"tokens": GOOD, "scopes": "abc"}, "Bearer ok", id="scopes-string"),
    pytest.param({"tokens": GOOD, "scopes": [1, {}]}, "Bearer ok", id="scopes-objects"),
    pytest.param({"tokens": GOOD, "issuer": 5, "dpop_key": []}, "Bearer ok", id="issuer-number"),
]


def write_store(directory: Path, content: bytes) -> None:
    directory.mkdir(mode=0o700, exist_ok=True)
    TokenStore(directory).path(URL).write_bytes(content)


async def header_from(directory: Path) -> str | None:
    auth = OAuth(store=TokenStore(directory))
    auth.bind(URL)
    async with aiohttp.ClientSession() as http:
        return await auth.header(http)


@pytest.mark.parametrize(("fields", "expected"), TAMPERED)
async def test_a_tampered_store_is_read_as_absent_never_raised_or_sent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, fields: dict[str, Any], expected: str | None
) -> None:
    write_store(tmp_path, json.dumps({"server": URL, **fields}).encode())
    with caplog.at_level(logging.WARNING, logger="codex_mcp.client.oauth"):
        assert await header_from(tmp_path) == expected
    kept = TokenStore(tmp_path).load(URL)
    assert all(isinstance(scope, str) for scope in kept.scopes) and kept.scopes != tuple("abc")
    assert kept.issuer is None or isinstance(kept.issuer, str)
    if expected is None or "extra" not in fields.get("tokens", {}):
        # Each ignored value is said once, naming the file.
        assert TokenStore(tmp_path).path(URL).name in caplog.text


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"[" * 100_000, id="deep-list"),
        pytest.param(b'{"server": "' + URL.encode() + b'", "tokens": ' + b"[" * 100_000, id="deep"),
        pytest.param(b'{"server": "x", "pad": "' + b"a" * (2 << 20) + b'"}', id="huge"),
        pytest.param(b"\xff\xfe{not utf-8", id="not-utf8"),
        pytest.param(b"[]", id="array"),
        pytest.param(b"", id="empty"),
    ],
)
async def test_a_deep_huge_or_binary_store_reads_as_not_logged_in(
    tmp_path: Path, content: bytes
) -> None:
    write_store(tmp_path, content)
    assert TokenStore(tmp_path).load(URL) == ServerAuth()
    assert await header_from(tmp_path) is None


def test_an_open_token_directory_is_closed_and_files_made_private(tmp_path: Path) -> None:
    directory = tmp_path / "oauth"
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    store = TokenStore(directory)
    store.path(URL).write_text("{}")
    store.path(URL).chmod(0o644)
    store.save(URL, ServerAuth(tokens=Tokens("t")))
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(store.path(URL).stat().st_mode) == 0o600
    assert store.load(URL).tokens == Tokens("t")
    leftovers = [p.name for p in directory.iterdir() if p.suffix == ".tmp"]
    assert leftovers == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the directory away")
def test_a_token_directory_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    directory = tmp_path / "oauth"
    directory.mkdir(mode=0o700)
    os.chown(directory, 65534, 65534)
    with pytest.raises(OAuthError, match="owned by"):
        TokenStore(directory).save(URL, ServerAuth(tokens=Tokens("t")))
    assert not TokenStore(directory).path(URL).exists()


# -- two processes, one store --------------------------------------------------------------


class ReadRedirect:
    redirect_uri = "http://127.0.0.1:9/callback"

    async def authorize(self, url: str) -> str:
        async with aiohttp.ClientSession() as http, http.get(url, allow_redirects=False) as page:
            return page.headers["Location"]


class Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def ask(self, command: str) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{command}\n".encode())
        await self.process.stdin.drain()
        line = await asyncio.wait_for(self.process.stdout.readline(), 60)
        assert line, f"the worker ended on {command!r}"
        return line.decode().strip()

    async def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 30)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


def expire(directory: Path, url: str) -> Tokens:
    """The kept access token has expired: the next request of any process refreshes."""
    store = TokenStore(directory)
    kept = store.load(url)
    assert kept.tokens is not None
    kept.tokens.expires_at = time.time() - 5
    store.save(url, kept)
    return kept.tokens


@pytest.mark.slow
async def test_two_processes_refreshing_at_once_converge_on_the_newest_tokens(
    aiohttp_server: Any, tmp_path: Path
) -> None:
    fake = OAuthFake(rotate=True)
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    url = str(server.make_url("/mcp"))
    async with Client.http(url, auth=OAuth(store=TokenStore(tmp_path), authorizer=ReadRedirect())):
        pass  # logged in once
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    workers = [
        Worker(
            await asyncio.create_subprocess_exec(
                sys.executable, str(WORKER), str(tmp_path), url, stdin=-1, stdout=-1, env=env
            )
        )
        for _ in range(2)
    ]
    try:
        for _ in range(4):
            before = expire(tmp_path, url)
            refreshes = fake.log.count("token:refresh_token")
            assert await asyncio.gather(*(w.ask("load") for w in workers)) == ["loaded"] * 2
            answers = [json.loads(a) for a in await asyncio.gather(*(w.ask("go") for w in workers))]
            assert all(answer["ok"] for answer in answers), answers
            kept = TokenStore(tmp_path).load(url).tokens
            assert kept is not None and kept.refresh_token in fake.tokens.values()
            assert kept.access_token != before.access_token
            # One of them refreshed; the other found the new tokens and used them.
            assert {a["text"] for a in answers} == {f"token {kept.access_token}"}
            assert fake.log.count("token:refresh_token") == refreshes + 1
        assert "invalid_grant" not in fake.log
    finally:
        for worker in workers:
            await worker.close()
