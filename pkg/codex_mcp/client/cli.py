"""codex-mcp-client: a small command line MCP client for scripts and debugging
(specs/client.md, "codex-mcp-client")."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from codex_mcp.core.versions import STATELESS_VERSIONS

from ..launch import add_version_flag
from .client import Client
from .errors import TOKEN_ENV, McpClientError, UsageError
from .transports.stdio import Framing

if TYPE_CHECKING:
    from .oauth import ClientProfile


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codex-mcp-client",
        description="Talk to an MCP server: over stdio (-- CMD ARGS...) or HTTP (--url URL).",
        epilog="Examples: codex-mcp-client tools -- python server.py; "
        'codex-mcp-client call echo \'{"message": "hi"}\' --url http://127.0.0.1:8000/mcp',
    )
    parser.add_argument(
        "command",
        choices=[
            "tools",
            "call",
            "resources",
            "templates",
            "read",
            "prompts",
            "prompt",
            "skills",
            "skill",
            "dir",
            "info",
            "login",
            "logout",
        ],
        metavar="COMMAND",
        help="tools, call TOOL [ARGS], resources, templates, read URI, prompts, "
        "prompt NAME [ARGS], skills, skill URI (its entry), dir URI (a directory's "
        "children), info (what the server said at initialize), login URL "
        "(OAuth in the browser; the tokens are kept for later commands), or logout URL",
    )
    parser.add_argument(
        "target",
        nargs="?",
        help="tool name (call), URI (read, skill, dir), prompt name (prompt), server URL "
        "(login, logout)",
    )
    parser.add_argument("arguments", nargs="?", help="JSON object of arguments (call, prompt)")
    parser.add_argument("--url", help="Streamable HTTP endpoint (or legacy SSE with --sse)")
    parser.add_argument("--sse", action="store_true", help="--url is a legacy HTTP+SSE endpoint")
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help=f"HTTP header (a static token: 'Authorization: Bearer TOKEN', or set {TOKEN_ENV})",
    )
    parser.add_argument(
        "--qualify", metavar="SERVER", help="qualify tool names with this server name"
    )
    parser.add_argument(
        "--mode",
        default="legacy",
        metavar="MODE",
        help="protocol era: legacy (the initialize handshake; default), auto (2026-07-28 "
        "when the server speaks it, else legacy), modern (2026-07-28 only), or a version",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request (60)")
    parser.add_argument("--retries", type=int, default=0, help="retries of a failed call (0)")
    parser.add_argument(
        "--content-length", action="store_true", help="frame stdio with Content-Length headers"
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="environment variable for the stdio server (repeatable)",
    )
    parser.add_argument("--client-id", help="login: a client registered in advance")
    parser.add_argument("--client-secret", help="login: that client's secret")
    parser.add_argument(
        "--scope", action="append", default=None, help="login: a scope to ask for (repeatable)"
    )
    parser.add_argument(
        "--no-browser", action="store_true", help="login: print the URL instead of opening it"
    )
    parser.add_argument("--verbose", action="store_true", help="show the server's stderr")
    parser.add_argument("--compact", action="store_true", help="one-line JSON output")
    add_version_flag(parser)
    return parser


def _split(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    args = list(argv)
    if "--" in args:
        i = args.index("--")
        return args[:i], args[i + 1 :]
    return args, []


def _json_object(text: str | None, what: str) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"{what} must be a JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def _client(opts: argparse.Namespace, server_command: list[str]) -> Client:
    mode = STATELESS_VERSIONS[0] if opts.mode == "modern" else opts.mode
    if mode not in ("legacy", "auto") and mode not in STATELESS_VERSIONS:
        raise UsageError(f"--mode must be legacy, auto, modern or one of {STATELESS_VERSIONS}")
    options: dict[str, Any] = {
        "server_name": opts.qualify,
        "timeout": opts.timeout,
        "mode": mode,
    }
    if opts.url and server_command:
        raise UsageError("give either --url URL or -- CMD ARGS..., not both")
    if opts.url:
        headers = {}
        for header in opts.header:
            name, sep, value = header.partition(":")
            if not sep:
                raise UsageError(f"--header must look like 'Name: value', got {header!r}")
            headers[name.strip()] = value.strip()
        given = any(name.lower() == "authorization" for name in headers)
        token = os.environ.get(TOKEN_ENV, "").strip()
        if token and not given:  # the environment keeps it out of `ps`
            headers["Authorization"] = f"Bearer {token}"
            given = True
        if opts.sse:
            return Client.sse(opts.url, headers=headers, **options)
        from .oauth import MemoryStore, OAuth, TokenStore  # aiohttp: only for HTTP

        # Tokens from `login`, refreshed as they expire; none kept: "needs login". A token
        # given here is sent as it is (OAuth only explains a refusal of it).
        store = MemoryStore() if given else TokenStore()
        auth = OAuth(store=store, profile=_profile(opts))
        return Client.http(opts.url, headers=headers, auth=auth, **options)
    if not server_command:
        raise UsageError("no server: give -- CMD ARGS... (stdio) or --url URL (HTTP)")
    env = {}
    for item in opts.env:
        name, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--env must look like NAME=VALUE, got {item!r}")
        env[name] = value
    framing: Framing = "content-length" if opts.content_length else "ndjson"
    return Client.stdio(
        server_command,
        env=env,
        framing=framing,
        errlog=sys.stderr if opts.verbose else None,
        **options,
    )


def _profile(opts: argparse.Namespace) -> ClientProfile:
    from .oauth import ClientProfile

    return ClientProfile(
        client_name="codex-mcp-client",
        client_id=opts.client_id,
        client_secret=opts.client_secret,
    )


async def _account(opts: argparse.Namespace) -> Any:
    from .oauth.login import login, logout

    url = opts.target or opts.url
    if not url:
        raise UsageError(f"{opts.command} needs the server's URL")
    if opts.command == "logout":
        return await logout(url)
    mode = STATELESS_VERSIONS[0] if opts.mode == "modern" else opts.mode
    return await login(
        url, profile=_profile(opts), scopes=opts.scope, open_browser=not opts.no_browser, mode=mode
    )


async def _run(opts: argparse.Namespace, server_command: list[str]) -> tuple[Any, bool]:
    """The JSON to print, and whether the command failed (isError)."""
    if opts.command in ("login", "logout"):
        return await _account(opts), False
    needs_target = {"call": "TOOL", "read": "URI", "prompt": "NAME", "skill": "URI", "dir": "URI"}
    if opts.command in needs_target and not opts.target:
        raise UsageError(f"{opts.command} needs {needs_target[opts.command]}")
    # Bad input is reported before a server is started for nothing.
    arguments = _json_object(opts.arguments, f"{opts.command} arguments")
    async with _client(opts, server_command) as client:
        timeout = opts.timeout
        if opts.command == "info":
            return client.init_result.raw, False
        if opts.command == "tools":
            tools = await client.list_tools(qualify=bool(opts.qualify), timeout=timeout)
            return [t.to_json() for t in tools], False
        if opts.command == "call":
            name = await _resolve_tool(client, opts.target, opts.qualify)
            result = await client.call_tool(name, arguments, timeout=timeout, retries=opts.retries)
            return result.raw, result.is_error
        if opts.command == "resources":
            resources = await client.list_resources(all_pages=True, timeout=timeout)
            return [r.to_json() for r in resources], False
        if opts.command == "templates":
            templates = await client.list_resource_templates(all_pages=True, timeout=timeout)
            return [t.to_json() for t in templates], False
        if opts.command == "read":
            return (await client.read_resource(opts.target, timeout=timeout)).raw, False
        if opts.command == "skills":  # the Skills extension (specs/skills.md)
            return [skill.raw for skill in await client.list_skills(all_pages=True)], False
        if opts.command == "skill":
            return (await client.get_skill(opts.target)).raw, False
        if opts.command == "dir":
            return list(await client.read_directory(opts.target)), False
        if opts.command == "prompts":
            prompts = await client.list_prompts(all_pages=True, timeout=timeout)
            return [p.to_json() for p in prompts], False
        prompt = await client.get_prompt(opts.target, arguments, timeout=timeout)
        return prompt.raw, False


async def _resolve_tool(client: Client, name: str, qualify: str | None) -> str:
    """With --qualify, a qualified name (mcp__srv__tool) is mapped back to the server's name."""
    if not qualify or not name.startswith("mcp__"):
        return name
    for tool in await client.list_tools(qualify=True):
        if tool.qualified_name == name:
            return tool.name
    return name


def main(argv: Sequence[str] | None = None) -> int:
    own, server_command = _split(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    opts = parser.parse_args(own)
    # Our own one-line message says what failed; library warnings only with --verbose.
    logging.basicConfig(
        level=logging.INFO if opts.verbose else logging.CRITICAL,
        format="codex-mcp-client: %(name)s: %(message)s",
    )
    try:
        output, failed = asyncio.run(_run(opts, server_command))
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        print(f"codex-mcp-client: error: {exc}", file=sys.stderr)
        return 2
    except McpClientError as exc:
        print(f"codex-mcp-client: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    option = orjson.OPT_INDENT_2 if not opts.compact else 0
    sys.stdout.write(orjson.dumps(output, option=option).decode() + "\n")
    if failed:
        print(f"codex-mcp-client: tool {opts.target!r} reported an error", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
