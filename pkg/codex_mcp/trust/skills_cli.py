"""`codex-mcp skills sync`: the skills of the servers the gateway serves (or of one server,
`--url URL` or `-- CMD`), written into Codex's skills folder (specs/trust.md, "Skills into
Codex"). The gateway runs in this process, with the policy given, and is asked as a client
asks it; nothing about the servers is taken from anywhere else."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from codex_mcp.client import Client
from codex_mcp.gateway.config.env import GatewayEnv
from codex_mcp.gateway.config.json_file import ConfigError
from codex_mcp.gateway.config.model import GatewayConfig, HttpTarget, ServerConfig
from codex_mcp.gateway.config.parse import derive_name
from codex_mcp.gateway.serve import build_core

from .cli import config_for
from .codex_skills import DestinationError, Report, SkillsFolder, codex_home
from .lock import LockError, LockFile, LockState, lock_path
from .pinning import recording
from .skills_sync import Gathered, Source, gather, locator

if TYPE_CHECKING:
    from codex_mcp.policy.install import Checked

#: States a child leaves on its own; a sync waits for them to end (bounded).
_SETTLING = ("starting", "restarting")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codex-mcp skills sync",
        description="Write the skills the gateway's servers serve (MCP skills, SEP-2640) into "
        "Codex's skills folder, $CODEX_HOME/skills/codex-mcp, each named server:skill; remove "
        "the ones written before that are no longer served. A skill that changed since it was "
        "trusted waits for `codex-mcp trust`. The configuration is found as the gateway finds "
        "it, or give --config FILE, --url URL, or -- CMD for one server.",
        epilog="Exit status: 0 all written, 1 a skill was withheld, skipped or left alone, 2 an "
        "unusable configuration, lock or skills folder.",
    )
    parser.add_argument("command", nargs="*", help="after --: one server's command")
    parser.add_argument(
        "--config", type=Path, help="the .mcp.json (default: found as the gateway finds it)"
    )
    parser.add_argument("--url", help="one Streamable HTTP server instead of a configuration")
    parser.add_argument(
        "--bearer-token-env-var", metavar="VAR", help="with --url: send the token in this variable"
    )
    parser.add_argument(
        "--policy", type=Path, help="the policy file the gateway runs with (--policy of codex-mcp)"
    )
    parser.add_argument(
        "--codex-home", type=Path, help="Codex's home (default: $CODEX_HOME, else ~/.codex)"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="say what would be done; write nothing"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="seconds to wait for the servers to start (default: 30)",
    )
    return parser


def main(argv: list[str]) -> int:
    options = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="codex-mcp skills sync: %(message)s")
    try:
        config = _config(options)
    except ConfigError as error:
        print(f"codex-mcp skills sync: {error}", file=sys.stderr)
        return 2
    policy = None
    if options.policy is not None:
        from codex_mcp.policy.install import checked_policy

        policy = checked_policy(options, "codex-mcp skills sync")
    home = options.codex_home or codex_home()
    try:
        report = asyncio.run(
            sync(config, home, policy=policy, dry_run=options.dry_run, timeout=options.timeout)
        )
    except (LockError, DestinationError) as error:
        print(f"codex-mcp skills sync: {error}", file=sys.stderr)
        return 2
    print(
        f"Codex skills folder: {SkillsFolder(home).shown}{' (dry run: nothing written)' if options.dry_run else ''}"
    )
    for line in report.lines:
        print(line)
    return 1 if report.problems else 0


def _config(options: argparse.Namespace) -> GatewayConfig:
    if options.url is None:
        return config_for(options.command, options.config)
    if options.command or options.config:
        raise ConfigError("give one of --url, --config and -- CMD")
    target = HttpTarget(options.url, bearer_token_env_var=options.bearer_token_env_var)
    server = ServerConfig(derive_name(target), target, where="--url")
    return GatewayConfig(path=None, servers=(server,), passthrough=True)


async def sync(
    config: GatewayConfig,
    home: Path,
    *,
    policy: Checked | None = None,
    dry_run: bool,
    timeout: float,
) -> Report:
    """One sync: the gateway started here, its skills gathered as a client sees them, the
    lock updated (not on a dry run), Codex's folder written."""
    lock = LockFile(lock_path(config))
    state = lock.read()  # an unusable lock: nothing is written (LockError)
    folder = SkillsFolder(home)
    gathered, down = await _gathered(config, state, policy, timeout)
    if not dry_run:
        lock.change(recording(gathered.judged))
    report = folder.sync(gathered.bundles, gathered.keep, keep_servers=down, dry_run=dry_run)
    for line in gathered.skipped:
        report.say(line, True)
    return report


async def _gathered(
    config: GatewayConfig, state: LockState, policy: Checked | None, timeout: float
) -> tuple[Gathered, set[str]]:
    env = dataclasses.replace(GatewayEnv.read(), summary=False)
    core = build_core(config, env)
    if policy is not None:
        policy.install(core)
    await core.start()
    try:
        async with Client.memory(core) as client:
            states = await _settled(client, timeout)
            up = {name for name, each in states.items() if each == "ready"}
            gathered = await gather([Source(client, locator(config, up))], config, state)
    finally:
        await core.aclose()
    configured = {server.name for server in config.servers}
    return gathered, configured - up


async def _settled(client: Client, timeout: float) -> dict[str, str]:
    """Each server's state once none is still starting (or `timeout` has passed)."""
    deadline = time.monotonic() + timeout
    while True:
        result = await client.call_tool("gateway_status")
        servers = (result.structured_content or {}).get("servers", [])
        states = {str(s.get("name")): str(s.get("state")) for s in servers if isinstance(s, dict)}
        if not any(state in _SETTLING for state in states.values()) or time.monotonic() > deadline:
            return states
        await asyncio.sleep(0.1)
