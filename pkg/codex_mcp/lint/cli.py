"""`codex-mcp lint`: connect to MCP servers and show what Codex would do to their tools
(specs/gateway.md, "`codex-mcp lint`")."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, TextIO

from codex_mcp.client import Client
from codex_mcp.codex_compat import CODEX_CLI_VERSION
from codex_mcp.codex_compat.check import (
    LintReport,
    Listing,
    ToolReport,
    lint_servers,
    repeated_findings,
)
from codex_mcp.codex_compat.client import codex_client_options
from codex_mcp.codex_compat.policy import APPROVAL_ADVICE
from codex_mcp.core.log_names import printable
from codex_mcp.gateway import asked_record
from codex_mcp.gateway.config.json_file import ConfigError
from codex_mcp.gateway.config.load import find_config, read_config
from codex_mcp.gateway.config.model import GatewayConfig, HttpTarget, ServerConfig, StdioTarget
from codex_mcp.gateway.config.parse import derive_name
from codex_mcp.gateway.errors import normalize_exception, one_line
from codex_mcp.gateway.logins import child_oauth

from .fix import fix_plan

DEFAULT_TIMEOUT = 30.0
#: A finding's line names at most this many tools, then says how many more.
MAX_NAMED = 8
MAX_PAGES = 100
#: The longest text of a server's shown on one line of the table.
SHOWN_CHARS = 2000


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codex-mcp lint",
        description=f"Show what the Codex CLI ({CODEX_CLI_VERSION}) would do to each tool of MCP "
        "servers: drop it, rename it, compact its schema, refuse to call it.",
        epilog="Exit status: 0 nothing lost, 1 a tool would be lost, 2 bad arguments or config.",
    )
    parser.add_argument(
        "target", nargs="*", help="a URL, a .mcp.json, or (after --) a server command"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--fix",
        action="store_true",
        help="also print gateway config entries that repair what was found",
    )
    parser.add_argument(
        "--name", help="the server's name in Codex (default: derived from the command or URL)"
    )
    parser.add_argument(
        "--server", action="append", help="in a config file, lint only this server (repeatable)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help="seconds to start and list one server (default: 30)",
    )
    parser.add_argument(
        "--schema-max-bytes", type=int, help="Codex's tool_input_schema_max_bytes (default: 5000)"
    )
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="an HTTP header for a URL target (repeatable)",
    )
    parser.add_argument(
        "--bearer-token-env-var",
        metavar="VAR",
        help="for a URL target: send the token in this variable",
    )
    parser.add_argument("--sse", action="store_true", help="the URL is a legacy HTTP+SSE endpoint")
    return parser


def _servers(
    options: argparse.Namespace, environ: Mapping[str, str]
) -> tuple[GatewayConfig, list[ServerConfig]]:
    """The servers to lint, and the configuration they come from (whose trust lock says
    what a gateway serving them would withhold; a URL or a command is a wrapped server's)."""
    servers = _targets(options, environ)
    if isinstance(servers, GatewayConfig):
        return servers, _chosen(servers, options)
    return GatewayConfig(None, tuple(servers), passthrough=True), servers


def _targets(
    options: argparse.Namespace, environ: Mapping[str, str]
) -> GatewayConfig | list[ServerConfig]:
    target: list[str] = options.target
    if not target:
        path = find_config(Path.cwd(), environ)
        if path is None:
            raise ConfigError(
                "no .mcp.json found (and no target given): give a command after --, a URL, or a config file"
            )
        return _from_config(path, environ)
    first = target[0]
    if first.startswith(("http://", "https://")) and len(target) == 1:
        headers = dict(_header(h) for h in options.header)
        http = HttpTarget(
            first, headers, options.bearer_token_env_var, transport="sse" if options.sse else "http"
        )
        raw: dict[str, Any] = {"url": first}
        if options.bearer_token_env_var:
            raw["bearer_token_env_var"] = options.bearer_token_env_var
        return [ServerConfig(options.name or derive_name(http), http, where=first, raw=raw)]
    if len(target) == 1 and first.endswith(".json"):
        if not Path(first).is_file():
            raise ConfigError(f"{first}: no such file")
        return _from_config(Path(first), environ)
    stdio = StdioTarget(first, tuple(target[1:]))
    raw = {"command": first, "args": list(target[1:])}
    return [ServerConfig(options.name or derive_name(stdio), stdio, where="--", raw=raw)]


def _from_config(path: Path, environ: Mapping[str, str]) -> GatewayConfig:
    config = read_config(path, environ)
    for warning in config.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return config


def _chosen(config: GatewayConfig, options: argparse.Namespace) -> list[ServerConfig]:
    if not options.server:
        return list(config.enabled_servers)
    unknown = sorted(set(options.server) - {s.name for s in config.servers})
    if unknown:
        raise ConfigError(f"{config.path}: no server named {', '.join(unknown)}")
    return [s for s in config.servers if s.name in options.server]


def _header(text: str) -> tuple[str, str]:
    name, colon, value = text.partition(":")
    if not colon or not name.strip():
        raise ConfigError(f"--header {text!r}: expected NAME:VALUE")
    return name.strip(), value.strip()


def describe(target: StdioTarget | HttpTarget) -> str:
    if isinstance(target, HttpTarget):
        return target.url
    return shlex.join([target.command, *target.args])


async def collect(server: ServerConfig, timeout: float, environ: Mapping[str, str]) -> Listing:
    """Start (or reach) one server, greet it as Codex does (a server may list some tools
    only to a client that declares what Codex declares), and read its raw tools/list."""
    target = server.target
    budget = server.repair.schema_max_bytes
    started = time.monotonic()
    logged: list[object] = []
    codex = {**codex_client_options(), "timeout": timeout}
    if isinstance(target, StdioTarget):
        client = Client.stdio(
            [target.command, *target.args],
            env=target.env,
            cwd=target.cwd,
            logging_handler=logged.append,
            **codex,
        )
    else:
        headers = target.resolved_headers(dict(environ))
        if target.transport == "sse":
            client = Client.sse(target.url, headers=headers, **codex)
        else:  # the user's login, as the gateway's child would use it
            auth = child_oauth(target, headers)
            client = Client.http(target.url, headers=headers, auth=auth, **codex)
    try:
        async with asyncio.timeout(timeout), client:
            tools = await raw_tools(client, timeout)
            seconds = time.monotonic() - started
            skills = await client.skill_descriptions()  # after the timing: Codex lists none
        return Listing(
            server.name,
            tools,
            seconds,
            target=describe(target),
            schema_max_bytes=budget,
            speaks_outside_calls=_speaks_outside_calls(server, client, bool(logged)),
            asked_in_calls=_asked_in_calls(server),
            skill_descriptions=skills,
        )
    except TimeoutError:
        error = f"no tools/list within {timeout:g} s"
    except Exception as exc:
        command = target.command if isinstance(target, StdioTarget) else None
        error = normalize_exception(exc, server=server.name, command=command)["message"]
    return Listing(server.name, error=error, target=describe(target), schema_max_bytes=budget)


async def raw_tools(client: Client, timeout: float) -> list[Any]:
    """Every page of tools/list as the server sent it, MAX_PAGES at most (lint and doctor
    judge the items as they are)."""
    tools: list[Any] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page = await client.request(
            "tools/list", {"cursor": cursor} if cursor else {}, timeout=timeout
        )
        listed = page.get("tools")
        tools += listed if isinstance(listed, list) else []
        cursor = page.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            return tools
    return tools


def _speaks_outside_calls(server: ServerConfig, client: Client, logged: bool) -> str | None:
    """Why a stdio server the gateway would share may send what no call claims, if it may."""
    if not isinstance(server.target, StdioTarget) or server.per_session:
        return None
    if logged:
        return "sent log messages"
    if "logging" in client.server_capabilities:
        return "declares logging"
    return None


def _asked_in_calls(server: ServerConfig) -> list[str]:
    """What a gateway that shared this stdio server recorded it sending during calls."""
    if not isinstance(server.target, StdioTarget) or server.per_session:
        return []
    return asked_record.recorded(server)


async def lint(
    servers: Sequence[ServerConfig],
    timeout: float,
    environ: Mapping[str, str],
    config: GatewayConfig | None = None,
) -> LintReport:
    listings = await asyncio.gather(*(collect(s, timeout, environ) for s in servers))
    if config is not None:  # what a gateway serving them would withhold (specs/trust.md)
        from codex_mcp.trust.report import withheld_tools

        listings = [
            replace(listing, withheld=withheld_tools(config, server, listing.tools))
            if listing.error is None
            else listing
            for server, listing in zip(servers, listings, strict=True)
        ]
    return lint_servers(listings)


def _mark(tool: ToolReport) -> str:
    if tool.status == "withheld":
        return "WITHHELD"
    if tool.lost:
        return "LOST"
    if any(f.severity == "warn" for f in tool.findings):
        return "warn"
    return "changed" if tool.status == "changed" else "ok"


def _shown(text: str) -> str:
    """What a server wrote, as a line may show it: control characters escaped."""
    return printable(text, SHOWN_CHARS)


def named(names: Sequence[str]) -> str:
    """The first MAX_NAMED of `names`, then how many more (lint's and doctor's lines)."""
    more = f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else ""
    return f"{', '.join(names[:MAX_NAMED])}{more}"


def render(report: LintReport, out: TextIO) -> None:
    said_of: dict[tuple[str, str, str], list[str]] = {}  # a server finding -> its servers
    for server in report.servers:
        for f in server.findings:
            said_of.setdefault((f.severity, f.rule, f.message), []).append(server.server)
    shared = {said: names for said, names in said_of.items() if len(names) > 1}
    for server in report.servers:
        head = _shown(f"{server.server}  ({server.target})")
        if server.error is not None:
            error = _shown(server.error)
            print(f"{head}\n  LOST     could not list its tools: {error}\n", file=out)
            continue
        print(f"{head}: {len(server.tools)} tool(s) in {server.seconds or 0:.2f} s", file=out)
        if server.skills:
            print(_shown(f"  skills: {', '.join(server.skills)}"), file=out)
        for f in server.findings:
            if (f.severity, f.rule, f.message) in shared:  # said once, below, for them all
                print(f"  {f.severity:<5} {f.rule}: as for several servers (below)", file=out)
            else:
                print(_shown(f"  {f.severity:<5} {f.rule}: {f.message}"), file=out)
        names = [_shown(t.tool) for t in server.tools]
        width = max(map(len, names), default=4)
        for tool, name in zip(server.tools, names, strict=True):
            print(f"  {_mark(tool):<8} {name:<{width}}  {tool.codex_name or '-'}", file=out)
        for f, tools in repeated_findings(server.tools):  # a kind once, naming its tools
            print(_shown(f"  {f.severity:<5} {f.rule} [{named(tools)}]: {f.message}"), file=out)
        print(file=out)
    if shared:
        print("Several servers:", file=out)
        for (severity, rule, message), servers in shared.items():
            print(_shown(f"  {severity:<5} {rule} [{named(servers)}]: {message}"), file=out)
        print(file=out)
    n = report.summary()
    unreachable = f"; {n['unreachable']} server(s) could not be listed" if n["unreachable"] else ""
    print(
        f"{n['tools']} tool(s) on {n['servers']} server(s): {n['kept']} kept as they are, "
        f"{n['changed']} changed by Codex, {n['lost']} lost{unreachable}",
        file=out,
    )


def main(
    argv: Sequence[str] | None = None,
    *,
    out: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    out = out or sys.stdout
    env = os.environ if environ is None else environ
    options = _parser().parse_args(argv)
    try:
        config, servers = _servers(options, env)
    except ConfigError as error:
        print(f"codex-mcp lint: {error}", file=sys.stderr)
        return 2
    if options.schema_max_bytes:
        servers = [
            replace(s, repair=replace(s.repair, schema_max_bytes=options.schema_max_bytes))
            for s in servers
        ]
    report = asyncio.run(lint(servers, options.timeout, env, config))
    plan = fix_plan(report, {s.name: s.raw for s in servers}) if options.fix else None
    if options.json:
        document = report.to_json()
        if plan is not None:
            document["fix"] = {
                "config": plan.config,
                "notes": plan.notes,
                "needsApproval": [asdict(item) for item in plan.needs_approval],
                "approvalAdvice": APPROVAL_ADVICE,
            }
        json.dump(document, out, indent=2)
        out.write("\n")
    else:
        render(report, out)
        if plan is not None:
            if plan.config["mcpServers"]:
                print(
                    "\nGateway config (.mcp.json) that repairs this, served by codex-mcp:", file=out
                )
                json.dump(plan.config, out, indent=2)
                out.write("\n")
                for note in plan.notes:
                    print(f"  note: {one_line(note, 500)}", file=out)
            else:
                print("\nNothing for the gateway to repair.", file=out)
            if plan.needs_approval:
                print("\nNeeds approval in Codex (no readOnlyHint proposed):", file=out)
                tools_of: dict[tuple[str, str], list[str]] = {}  # one line per reason
                for item in plan.needs_approval:
                    tools_of.setdefault((item.server, item.why), []).append(item.tool)
                for (server, why), tools in tools_of.items():
                    print(f"  {server}: {', '.join(tools)}: {why}", file=out)
                print(f"  what you can do: {APPROVAL_ADVICE}", file=out)
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
