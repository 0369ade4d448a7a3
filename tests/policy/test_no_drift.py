"""No drift between listing and using (specs/policy.md): under several policies, for the
child served directly and through a gateway, every tool, resource and prompt that could
be served is listed exactly when it can be called, read or got, for each caller. Real
`codex-mcp-http` processes on 127.0.0.1 and raw HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from oauth_helpers import AuthorizationServer
from support.polling import until

from .policy_helpers import (
    Caller,
    gateway_server,
    listed_and_usable,
    plain_server,
    principal_of,
    universe,
    write_policy,
)

ALPHA, BETA = "alpha-token-0123456789abcdef", "beta-token-0123456789abcdef"
DEFAULT_DENIED = ("rm", "echo", "job", "report", "admin_reset", "secret_prompt", "mem://secret")

#: name -> (the policy, what it must hide from each caller by own name: the teeth that
#: make each case able to fail).
POLICIES: dict[str, tuple[dict[str, Any], dict[str, set[str]]]] = {
    "allow all": ({"default": "allow"}, {ALPHA: set(), BETA: set()}),
    "deny a child": (
        {"default": "allow", "rules": [{"effect": "deny", "child": "other"}]},
        {ALPHA: {"other"}, BETA: {"other"}},
    ),
    "deny tools by glob": (
        {"default": "allow", "rules": [{"effect": "deny", "kind": "tool", "tool": "*_re*"}]},
        {ALPHA: {"admin_reset"}, BETA: {"admin_reset"}},
    ),
    "deny by default, allow some": (
        {
            "default": "deny",
            "rules": [
                {"effect": "allow", "tool": ["get_*", "greet", "mem://open", "gateway_status"]}
            ],
        },
        {ALPHA: set(DEFAULT_DENIED), BETA: set(DEFAULT_DENIED)},
    ),
    "principal-specific": (
        {
            "default": "allow",
            "rules": [
                {"effect": "deny", "principal": principal_of(BETA), "tool": ["rm", "echo"]},
                {"effect": "deny", "principal": principal_of(BETA), "kind": "prompt"},
            ],
        },
        {ALPHA: set(), BETA: {"rm", "echo", "greet", "secret_prompt"}},
    ),
}


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def _own(name: str) -> str:
    """The child's own name of a served name (`kid__rm` -> `rm`, `mem://kid/x` -> `mem://x`)."""
    if name.startswith("mem://"):
        parts = name[len("mem://") :].split("/", 1)
        return f"mem://{parts[-1]}"
    return name.split("__", 1)[-1]


def _child(name: str) -> str | None:
    if name.startswith("mem://"):
        rest = name[len("mem://") :]
        return rest.split("/", 1)[0] if "/" in rest else None
    return name.split("__", 1)[0] if "__" in name else None


@pytest.mark.slow
@pytest.mark.parametrize("served", ["plain", "gateway"])
@pytest.mark.parametrize("case", list(POLICIES))
async def test_listed_exactly_when_usable(
    tmp_path: Path, http: aiohttp.ClientSession, served: str, case: str
) -> None:
    document, must_hide = POLICIES[case]
    policy = write_policy(tmp_path, document)
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{ALPHA}\n{BETA}\n")
    auth = ("--bearer-token-file", str(tokens))
    children = ("kid", "other") if served == "gateway" else ()
    server = (
        gateway_server(tmp_path, policy, {c: {} for c in children}, *auth)
        if children
        else plain_server(policy, *auth)
    )
    try:
        everything = universe(children)
        for token in (ALPHA, BETA):
            caller = await Caller(http, server.url, token).open()
            if children:  # both children up before the listing is compared

                async def up(caller: Caller = caller) -> bool:
                    reply = await caller.ask("tools/call", {"name": "gateway_status"})
                    servers = reply["result"]["structuredContent"]["servers"]
                    return [s["state"] for s in servers] == ["ready", "ready"]

                await until(up, 30, "both children up")
            found = await listed_and_usable(caller, everything)
            for kind, (listed, used) in found.items():
                assert listed == used, (case, served, token[:5], kind, listed ^ used)
            hidden = {
                name
                for kind, names in everything.items()
                for name in names
                if name not in found[kind][0]
            }
            expected = {
                name
                for names in everything.values()
                for name in names
                if _own(name) in must_hide[token] or (children and _child(name) in must_hide[token])
            }
            assert hidden == expected, (case, served, token[:5], hidden ^ expected)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def authorization_server() -> Iterator[AuthorizationServer]:
    server = AuthorizationServer()
    yield server
    server.stop()


#: Scopes required two ways, both the policy's rules: by the policy file (a child's own
#: tool name, so behind a gateway too) and by --oauth-tool-scope (the served name).
SCOPED = {
    "default": "allow",
    "rules": [
        {"effect": "require", "scopes": ["admin"], "tool": "admin_*"},
        {"effect": "deny", "subject": "client-b", "tool": "rm"},
    ],
}


@pytest.mark.interop
@pytest.mark.slow
@pytest.mark.parametrize("served", ["plain", "gateway"])
async def test_listed_exactly_when_usable_by_scope_and_subject(
    tmp_path: Path,
    http: aiohttp.ClientSession,
    authorization_server: AuthorizationServer,
    served: str,
) -> None:
    policy = write_policy(tmp_path, SCOPED)
    oauth = (
        "--oauth-issuer", authorization_server.issuer,
        "--oauth-scope", "mcp",
        "--oauth-tool-scope", "echo=echo.use",
        "--oauth-tool-scope", "kid__echo=echo.use",
    )  # fmt: skip
    children = ("kid",) if served == "gateway" else ()
    server = (
        gateway_server(tmp_path, policy, {"kid": {}}, *oauth)
        if children
        else plain_server(policy, *oauth)
    )
    try:
        url, issuer = server.url, authorization_server
        cases = {
            "mcp": (await issuer.token(audience=url, scope="mcp"), {"admin_reset", "echo"}),
            "admin": (await issuer.token(audience=url, scope="mcp admin echo.use"), set()),
            "client-b": (
                await issuer.token("client-b", audience=url, scope="mcp admin echo.use"),
                {"rm"},
            ),
        }
        everything = universe(children)
        for label, (token, must_hide) in cases.items():
            caller = await Caller(http, url, token).open()
            if children:

                async def up(caller: Caller = caller) -> bool:
                    return "kid__get_time" in await caller.listed("tools")

                await until(up, 30, "the child up")
            found = await listed_and_usable(caller, everything)
            for kind, (listed, used) in found.items():
                assert listed == used, (label, served, kind, listed ^ used)
            hidden = {n for n in everything["tools"] if n not in found["tools"][0]}
            assert {_own(n) for n in hidden} == must_hide, (label, served, hidden)
        # The scope a call lacks is named in a 403 a client can step up with.
        caller = await Caller(http, url, cases["mcp"][0]).open()
        name = "kid__echo" if children else "echo"
        refusal = await caller.ask("tools/call", {"name": name, "arguments": {}})
        assert refusal.get("http_status") == 403 and "echo.use" in refusal["body"], refusal
        line = server.wait_for_line(rf"policy deny: action=call tool={name} ", timeout=10)
        assert "--oauth-tool-scope" in line, line
        line = server.wait_for_line(r"policy deny: action=list tool=\S*rm .*subject=client-b")
        assert "principal=sha256:" in line and "by=policy rules[1]" in line, line
    finally:
        server.stop()
