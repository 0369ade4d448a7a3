"""The official MCP conformance suite's client adapter, written with the public client API.

The suite runs `python examples/conformance_client.py <server-url>` once per scenario with
MCP_CONFORMANCE_SCENARIO (which scenario), MCP_CONFORMANCE_PROTOCOL_VERSION (the revision
on the wire) and, for some, MCP_CONFORMANCE_CONTEXT (JSON: the tool calls to make, a
pre-registered client's credentials...). Each scenario does only what the suite asks of it;
everything the suite checks (headers, resumption, defaults, OAuth) is the library's work.

    node conformance client --command "python examples/conformance_client.py" \\
        --requirements 2025-11-25
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from codex_mcp.client import Client, SkillVerificationError
from codex_mcp.client.oauth import (
    ClientProfile,
    IdJagExchange,
    OAuth,
    SigningKey,
    StaticAssertion,
)

Scenario = Callable[[str], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(run: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = run
        return run

    return register


def context() -> dict[str, Any]:
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    value = json.loads(raw) if raw else {}
    return value if isinstance(value, dict) else {}


def client(url: str, **options: Any) -> Client:
    """A client speaking the revision the suite asked for."""
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")
    if version.startswith("2026"):
        options.setdefault("mode", version)
    else:
        options.setdefault("protocol_version", version)
    # The suite starts every scenario at once: on a busy machine a first answer (an OAuth
    # flow, for a server that wants one first) can take longer than the usual 10 s. The
    # suite gives a scenario 30 s unless told otherwise (`--timeout`, in ms).
    options.setdefault("timeout", float(os.environ.get("CONFORMANCE_CLIENT_TIMEOUT", "25")))
    return Client.http(url, client_name="codex-mcp-conformance", **options)


@scenario("initialize", "request-metadata", "json-schema-ref-no-deref")
async def list_tools(url: str) -> None:
    async with client(url) as mcp:
        await mcp.list_tools()


@scenario("tools_call")
async def call_add_numbers(url: str) -> None:
    async with client(url) as mcp:
        await mcp.list_tools()
        await mcp.call_tool("add_numbers", {"a": 5, "b": 3}, retries=0)


@scenario("sse-retry")
async def call_the_tool_that_cuts_its_stream(url: str) -> None:
    async with client(url) as mcp:
        await mcp.list_tools()
        await mcp.call_tool("test_reconnection", {}, retries=0)


@scenario("elicitation-sep1034-client-defaults")
async def accept_with_defaults(url: str) -> None:
    """Accepts with nothing filled in: the library applies the schema's defaults."""
    async with client(url, elicitation_handler=lambda _params: {"action": "accept"}) as mcp:
        await mcp.list_tools()
        await mcp.call_tool("test_client_elicitation_defaults", {}, retries=0)


@scenario("sep-2322-client-request-state")
async def call_every_tool(url: str) -> None:
    """Input-required rounds: the library answers them and echoes the request state."""

    def elicit(_params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"confirmed": True}}

    def sample(_params: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "test"}

    async with client(url, elicitation_handler=elicit, sampling_handler=sample, roots=[]) as mcp:
        for tool in await mcp.list_tools():
            await mcp.call_tool(tool.name, {}, retries=0)


@scenario("http-standard-headers", "http-custom-headers", "http-invalid-tool-headers")
async def make_the_calls_asked(url: str) -> None:
    """Lists tools (learning their x-mcp-header arguments), then makes the calls the
    context names; with none named, calls each tool listed, and reads and gets what the
    server lists."""
    async with client(url) as mcp:
        tools = await mcp.list_tools()
        calls = context().get("toolCalls")
        if isinstance(calls, list):
            for call in calls:
                await mcp.call_tool(call["name"], call.get("arguments") or {}, retries=0)
            return
        for tool in tools:
            await mcp.call_tool(tool.name, {}, retries=0)
        if mcp.server_capabilities.get("resources") is not None:
            for resource in await mcp.list_resources(all_pages=True):
                await mcp.read_resource(resource.uri)
        if mcp.server_capabilities.get("prompts") is not None:
            for prompt in await mcp.list_prompts(all_pages=True):
                await mcp.get_prompt(prompt.name)


@scenario("sep-2640-client-no-prefetch")
async def list_the_skills(url: str) -> None:
    """A host builds its registry from the listing alone: no file is read."""
    async with client(url) as mcp:
        await mcp.list_skills(all_pages=True)


@scenario(
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
)
async def load_each_skill(url: str) -> None:
    """Load every listed skill, then read its files: a SKILL.md that fails verification
    against its entry stops that skill there (its supporting files are never read)."""
    async with client(url) as mcp:
        for skill in await mcp.list_skills(all_pages=True):
            try:
                loaded = await mcp.load_skill(skill)
            except SkillVerificationError as refused:
                print(f"conformance_client: skill not loaded: {refused}", file=sys.stderr)
                continue
            for file in loaded.skill.files or ():
                if file.uri != skill.uri:
                    await mcp.read_skill_file(loaded, file.uri)


@scenario("json-schema-2020-12-preservation")
async def echo_the_schema(url: str) -> None:
    """Hands the focal tool's inputSchema back verbatim: what the library kept of it."""
    async with client(url) as mcp:
        tools = {tool.name: tool for tool in await mcp.list_tools()}
        focal = tools["json_schema_2020_12_tool"]
        await mcp.call_tool("json_schema_echo", {"schema": focal.input_schema}, retries=0)


# -- authorization ------------------------------------------------------------------------
#: The client ID metadata document URL the suite expects us to present.
CIMD_URL = "https://conformance-test.local/client-metadata.json"


class FollowRedirect:
    """The user's browser, for the suite: its authorization endpoint approves at once, so
    the redirect back to us is read from the answer's Location instead of followed."""

    redirect_uri = "http://localhost:3000/callback"

    async def authorize(self, url: str) -> str:
        async with (
            aiohttp.ClientSession() as http,
            http.get(url, allow_redirects=False) as resp,
        ):
            location = resp.headers.get("Location")
        if location is None:
            raise RuntimeError(f"the authorization endpoint answered {resp.status}, no redirect")
        return location


async def list_and_call(url: str, auth: OAuth) -> None:
    async with client(url, auth=auth) as mcp:
        tools = await mcp.list_tools()
        if any(tool.name == "test-tool" for tool in tools):
            await mcp.call_tool("test-tool", {}, retries=0)


@scenario(
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/dpop",
    "auth/dpop-nonce",
)
async def authorization_code(url: str) -> None:
    """The authorization code flow; a pre-registered client when the context names one;
    DPoP-bound tokens from a server that offers them."""
    given = context()
    profile = ClientProfile(
        client_name="codex-mcp-conformance",
        metadata_url=CIMD_URL,
        client_id=given.get("client_id"),
        client_secret=given.get("client_secret"),
    )
    await list_and_call(url, OAuth(profile=profile, authorizer=FollowRedirect(), dpop=True))


@scenario("auth/client-credentials-basic", "auth/client-credentials-jwt")
async def client_credentials(url: str) -> None:
    given = context()
    key = None
    if "private_key_pem" in given:
        key = SigningKey(given["private_key_pem"], given.get("signing_algorithm", "ES256"))
    profile = ClientProfile(
        client_id=given["client_id"],
        client_secret=given.get("client_secret"),
        auth_method="private_key_jwt" if key is not None else None,
    )
    await list_and_call(url, OAuth(profile=profile, grant="client_credentials", signing_key=key))


@scenario("auth/wif-jwt-bearer")
async def workload_identity(url: str) -> None:
    """The workload's JWT, presented with the JWT-bearer grant."""
    given = context()
    auth = OAuth(
        profile=ClientProfile(client_id=given["client_id"]),
        grant="jwt_bearer",
        assertion=StaticAssertion(given["valid_jwt"]),
    )
    await list_and_call(url, auth)


@scenario("auth/enterprise-managed-authorization")
async def enterprise_managed(url: str) -> None:
    """The IdP's ID token exchanged for an ID-JAG, presented with the JWT-bearer grant."""
    given = context()
    exchange = IdJagExchange(
        given["idp_token_endpoint"], given["idp_id_token"], client_id=given.get("idp_client_id")
    )
    profile = ClientProfile(client_id=given["client_id"], client_secret=given["client_secret"])
    await list_and_call(url, OAuth(profile=profile, grant="jwt_bearer", assertion=exchange))


async def main(url: str) -> int:
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    run = SCENARIOS.get(name)
    if run is None:
        print(f"conformance_client: no scenario named {name!r}", file=sys.stderr)
        return 2
    await run(url)
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    if len(sys.argv) != 2:
        sys.exit("usage: MCP_CONFORMANCE_SCENARIO=NAME conformance_client.py SERVER_URL")
    sys.exit(asyncio.run(main(sys.argv[1])))
