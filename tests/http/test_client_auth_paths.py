"""`codex-mcp-client` (the console script, a subprocess) against real servers that want a
credential: no dead ends (issue #31). A static bearer-token server is told apart from an
OAuth one and the user is told to pass the token, not to log in; a tool refused for lack of
scope names the scope and the next `login` asks for it; the flags named are the CLI's own.
The servers: `codex-mcp-http` with `--bearer-token` or `--oauth-issuer`, the authorization
server oauth2-mock-server (authorization_server.mjs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest
from client_cli import cli, login_as_browser
from http_process import HttpProcess

TOKEN = "s3cret-static-token"

# Each test starts servers and several CLI processes.
pytestmark = pytest.mark.slow


def refusal_lines(audit_log: Path) -> list[dict[str, Any]]:
    if not audit_log.exists():
        return []
    lines = [json.loads(line) for line in audit_log.read_text().splitlines() if line]
    return [line for line in lines if line.get("event") == "refused"]


async def test_a_bearer_token_server_asks_for_the_token_not_a_login(
    tmp_path: Path, http_process: Any
) -> None:
    audit_log = tmp_path / "audit.jsonl"
    server: HttpProcess = http_process("--bearer-token", TOKEN, "--audit-log", str(audit_log))
    url = server.url
    env = {"CODEX_MCP_OAUTH_DIR": str(tmp_path / "oauth")}

    code, _, err = await cli("tools", "--url", url, env=env)
    assert code == 1
    assert "needs login" not in err and "codex-mcp-client login" not in err, err
    assert "--header 'Authorization: Bearer" in err and "CODEX_MCP_CLIENT_TOKEN" in err, err
    assert "missing bearer token" in err, err  # the server's own words
    assert len(err.strip().splitlines()) == 1, err

    code, _, err = await cli(
        "tools", "--url", url, "--header", "Authorization: Bearer wrong", env=env
    )
    assert code == 1 and "invalid bearer token" in err and "--header" in err, err

    # One request, one refusal: discovery's probes of /.well-known/ are 404s, not refusals.
    lines = refusal_lines(audit_log)
    assert [line.get("status") for line in lines] == [401, 401], lines

    code, _, err = await cli("login", url, env=env)
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert "no OAuth" in err and "refused to register" not in err, err
    assert "--header 'Authorization: Bearer" in err, err

    code, result, err = await cli(
        "tools", "--url", url, env={**env, "CODEX_MCP_CLIENT_TOKEN": TOKEN}
    )
    assert code == 0 and "echo" in [tool["name"] for tool in result], err


async def test_well_known_probes_get_404_without_a_credential_and_are_no_refusals(
    tmp_path: Path, http_process: Any
) -> None:
    audit_log = tmp_path / "audit.jsonl"
    server: HttpProcess = http_process("--bearer-token", TOKEN, "--audit-log", str(audit_log))
    async with aiohttp.ClientSession() as http:
        for path in (
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration",
        ):
            async with http.get(server.base + path) as reply:
                assert reply.status == 404, (path, reply.status)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        async with http.get(server.base + "/metrics", headers=auth) as reply:
            metrics = await reply.text()
    assert refusal_lines(audit_log) == []
    refused = [
        line for line in metrics.splitlines()
        if line.startswith("codex_mcp_http_refused") and not line.endswith(" 0.0")
    ]  # fmt: skip
    assert refused == [], refused


@pytest.mark.interop
async def test_a_tool_refused_for_scope_names_it_and_login_asks_for_it(
    resource_server: HttpProcess, tmp_path: Path
) -> None:
    url = resource_server.url
    env = {"CODEX_MCP_OAUTH_DIR": str(tmp_path / "oauth")}
    first, visited = await login_as_browser(
        url, "--client-id", "cli-test", "--scope", "mcp", env=env
    )
    assert first["logged_in"], first
    assert parse_qs(urlsplit(visited).query)["scope"] == ["mcp"]

    code, _, err = await cli("call", "echo", '{"message": "hi"}', "--url", url, env=env)
    assert code == 1 and "needs login" not in err, err
    assert "echo.use" in err, err
    assert f"codex-mcp-client login {url} --scope mcp --scope echo.use" in err, err

    # The plain `login` now asks for what is held and what was refused: no loop.
    _, visited = await login_as_browser(url, "--client-id", "cli-test", env=env)
    assert set(parse_qs(urlsplit(visited).query)["scope"][0].split()) == {"mcp", "echo.use"}
    code, result, err = await cli("call", "echo", '{"message": "hi"}', "--url", url, env=env)
    assert code == 0 and result["content"][0]["text"] == "hi", err


@pytest.mark.interop
async def test_login_without_a_client_id_names_the_cli_flags(
    resource_server: HttpProcess, tmp_path: Path
) -> None:
    """oauth2-mock-server offers no dynamic registration: a client id must be given."""
    env = {"CODEX_MCP_OAUTH_DIR": str(tmp_path / "oauth")}
    code, _, err = await cli("login", resource_server.url, "--no-browser", env=env)
    assert code == 1 and "--client-id" in err and "--client-secret" in err, err
    assert "(client_id and client_secret)" not in err, err
