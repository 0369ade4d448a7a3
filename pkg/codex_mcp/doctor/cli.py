"""`codex-mcp doctor`: start every MCP server of Codex's config.toml as Codex would and show
what Codex will show the model, and what it will lose and why.

    codex-mcp doctor                      # $CODEX_HOME/config.toml, else ~/.codex/config.toml
    codex-mcp doctor --profile work       # with work.config.toml over it, as `codex --profile`
    codex-mcp doctor --config FILE --json

Exit status: 0 nothing lost, 1 a server Codex cannot use or a tool it would lose, 2 a usage
mistake or a config.toml Codex would refuse (one line saying what to do).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from codex_mcp.codex_compat import CODEX_CLI_VERSION

from .codex_config import (
    CONFIG_FILENAME,
    CodexConfig,
    CodexConfigError,
    CodexServer,
    StdioEntry,
    codex_home,
    read_codex_config,
)
from .codex_launch import codex_path, find_command, server_environment
from .gateway_entry import gateway_config, is_gateway, unfound_children
from .report import SRC_GATEWAY, DoctorFinding, DoctorReport, build_report, name_problem
from .startup import Started, start_like_codex

PROG = "codex-mcp doctor"
#: Waited beyond a server's startup timeout, to tell slow (and by how much) from never.
EXTRA_WAIT_SEC = 10.0
#: Servers started at once (each is timed from its own start): a config of thousands of
#: entries must not start thousands of processes.
MAX_STARTING = 8


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=f"Start each MCP server of Codex's config.toml as Codex {CODEX_CLI_VERSION} "
        "would, and show what Codex will show the model and what it will lose and why.",
        epilog="Exit status: 0 nothing lost, 1 something lost, 2 usage or config error.",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--codex-home", metavar="DIR", help="Codex's home (default: $CODEX_HOME, else ~/.codex)"
    )
    where.add_argument("--config", metavar="FILE", help="a config.toml to read instead")
    parser.add_argument(
        "--profile",
        metavar="NAME",
        help="as Codex's --profile: NAME.config.toml beside the config, merged over it",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--server", action="append", metavar="NAME", help="only this server (repeatable)"
    )
    parser.add_argument(
        "--path",
        metavar="PATH",
        help="the PATH Codex is started with (default: this shell's, without an active virtualenv)",
    )
    parser.add_argument(
        "--max-wait",
        type=float,
        metavar="SECONDS",
        help=f"the longest to wait for one server (default: its startup timeout + {EXTRA_WAIT_SEC:g} s)",
    )
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    out: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    out = out or sys.stdout
    env = dict(os.environ if environ is None else environ)
    options = _parser().parse_args(argv)
    if options.max_wait is not None and not options.max_wait > 0:
        return _usage("--max-wait must be a positive number of seconds")
    if options.config:
        path = Path(options.config)
    else:
        home = Path(options.codex_home) if options.codex_home else codex_home(env)
        path = home / CONFIG_FILENAME
    try:
        config = read_codex_config(path, options.profile)
    except CodexConfigError as error:
        return _usage(str(error))
    servers = list(config.servers)
    if options.server:
        unknown = sorted(set(options.server) - {s.name for s in servers})
        if unknown:
            return _usage(f"{path}: no [mcp_servers] entry named {', '.join(unknown)}")
        servers = [s for s in servers if s.name in options.server]
    chosen = codex_path(env, options.path)
    # What the client logs about a server (its exit, stray output) is in the report already.
    logging.getLogger("codex_mcp").addHandler(logging.NullHandler())
    report = asyncio.run(
        _doctor(config, servers, env, chosen.value, chosen.origin, options.max_wait)
    )
    from ..trust.report import synced_skills  # what `codex-mcp skills sync` wrote there

    report.mcp_skills = synced_skills(path.parent)
    if options.json:
        json.dump(report.to_json(), out, indent=2)
        out.write("\n")
    else:
        from .render import render

        render(report, out)
    return report.exit_code


def _usage(message: str) -> int:
    print(f"{PROG}: {message}", file=sys.stderr)
    return 2


async def _doctor(
    config: CodexConfig,
    servers: Sequence[CodexServer],
    environ: Mapping[str, str],
    path: str,
    origin: str,
    max_wait: float | None,
) -> DoctorReport:
    extra: dict[str, list[DoctorFinding]] = {}
    startable = []
    gateways = frozenset(s.name for s in servers if _is_gateway(s))
    for server in servers:
        refused = name_problem(server.name)
        if refused is not None:
            extra[server.name] = [refused]
        elif server.enabled:
            extra[server.name] = _gateway_findings(server, environ, path)
            startable.append(server)

    starting = asyncio.Semaphore(MAX_STARTING)

    async def start(server: CodexServer) -> Started:
        wait = max_wait if max_wait is not None else server.startup_timeout + EXTRA_WAIT_SEC
        async with starting:
            gateway = server.name in gateways
            return await start_like_codex(server, environ, path, wait, gateway=gateway)

    results = await asyncio.gather(*(start(s) for s in startable))
    started = {s.name: r for s, r in zip(startable, results, strict=True)}
    return build_report(
        str(config.path),
        path,
        origin,
        servers,
        started,
        extra,
        permissions=config.permissions,
        gateways=gateways,
    )


def _is_gateway(server: CodexServer) -> bool:
    entry = server.transport
    return isinstance(entry, StdioEntry) and is_gateway(entry.command, entry.args)


def _gateway_findings(
    server: CodexServer, environ: Mapping[str, str], path: str
) -> list[DoctorFinding]:
    """For our gateway: the .mcp.json it will serve, and children Codex's PATH will not find."""
    entry = server.transport
    if not isinstance(entry, StdioEntry) or not _is_gateway(server):
        return []
    env = server_environment(environ, path, entry.env_vars, entry.env)
    cwd = Path(os.path.expanduser(entry.cwd)) if entry.cwd else Path.cwd()
    files = gateway_config(cwd, env)
    gateway = find_command(entry.command, env.get("PATH"), cwd)
    near = [str(Path(gateway).parent)] if gateway else []
    if files.error is not None:
        message = f"the gateway's config cannot be used: {files.error}; the gateway will not start"
        return [
            DoctorFinding(
                "lost",
                "gateway-config",
                message,
                SRC_GATEWAY,
                "fix the file (`codex-mcp lint` reads it too)",
            )
        ]
    if files.config is None:
        message = "the gateway finds no .mcp.json from here: it serves only its built-in tools"
        fix = f'set env = {{ CODEX_MCP_WRAPPER_CONFIG = "/path/to/.mcp.json" }} in [mcp_servers.{server.name}]'
        return [DoctorFinding("info", "gateway-config", message, SRC_GATEWAY, fix)]
    return [
        DoctorFinding(
            "lost",
            "gateway-child-not-found",
            f"child {child.server!r} of {files.path}: {child.missing.problem}; the gateway "
            "serves none of its tools",
            SRC_GATEWAY,
            f"in the .mcp.json, {child.missing.fix}",
            children=(child.server,),
        )
        for child in unfound_children(files.config, env.get("PATH", ""), near)
    ]
