"""An entry of config.toml that is our gateway (`codex-mcp`, as `--print-codex-config` writes
it), and the `.mcp.json` behind it: found the way the gateway will find it when Codex starts
it (CODEX_MCP_WRAPPER_CONFIG in its environment, else the nearest .mcp.json upward from its
working directory, else ~/.codex/.mcp.json), and each stdio child's command looked for on the
PATH the gateway passes on, which is the one Codex gave it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from codex_mcp.gateway.config.json_file import ConfigError
from codex_mcp.gateway.config.load import find_config, read_config
from codex_mcp.gateway.config.model import GatewayConfig, StdioTarget

from .codex_launch import NotFound, find_command, not_found

GATEWAY_SCRIPT = "codex-mcp"
GATEWAY_MODULE = "codex_mcp.cli.stdio"


def is_gateway(command: str, args: Sequence[str]) -> bool:
    """`codex-mcp ...`, `python -m codex_mcp.cli.stdio`, or `python .../cmd/mcp` (the three
    launchers `--print-codex-config` writes)."""
    if "--" in args:  # `codex-mcp -- CMD` wraps one server: no .mcp.json
        return False
    if Path(command).name == GATEWAY_SCRIPT:
        return True
    return list(args[:2]) == ["-m", GATEWAY_MODULE] or (
        bool(args) and Path(args[0]).parts[-2:] == ("cmd", "mcp")
    )


@dataclass(frozen=True, slots=True)
class GatewayFiles:
    """What the gateway will serve: its config (None when it finds none) or why it cannot."""

    path: Path | None
    config: GatewayConfig | None = None
    error: str | None = None


def gateway_config(cwd: Path, environment: Mapping[str, str]) -> GatewayFiles:
    """The `.mcp.json` a gateway started in `cwd` with `environment` serves, read."""
    try:
        path = find_config(cwd, environment)
    except ConfigError as error:
        return GatewayFiles(None, error=str(error))
    if path is None:
        return GatewayFiles(None)
    try:
        return GatewayFiles(path, read_config(path, environment))
    except ConfigError as error:
        return GatewayFiles(path, error=str(error))


@dataclass(frozen=True, slots=True)
class UnfoundChild:
    server: str
    command: str
    missing: NotFound


def unfound_children(
    config: GatewayConfig, path: str, near: Sequence[str] = ()
) -> list[UnfoundChild]:
    """The enabled stdio children whose command the gateway, run with this PATH, cannot start
    (`near`: directories to suggest a command from, the gateway's own first)."""
    unfound = []
    for server in config.servers:
        target = server.target
        if not server.enabled or not isinstance(target, StdioTarget):
            continue
        child_path = target.env.get("PATH", path)
        cwd = os.path.expanduser(target.cwd) if target.cwd else None
        if find_command(target.command, child_path, cwd) is None:
            missing = not_found(target.command, child_path, cwd, near)
            unfound.append(UnfoundChild(server.name, target.command, missing))
    return unfound


def warn_unfound_children(path: Path, *, prog: str) -> bool:
    """For `--print-codex-config`: read the .mcp.json the entry will serve (False, after one
    line, when it is unusable) and warn, a line each, about children Codex's PATH lacks."""
    from .codex_launch import codex_path

    try:
        config = read_config(path)
    except ConfigError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return False
    searched = codex_path(os.environ)
    for child in unfound_children(config, searched.value, [str(Path(sys.argv[0]).parent)]):
        print(
            f"{prog}: warning: {path}: {child.server}: {child.missing.problem} "
            f"(PATH: {searched.origin}): {child.missing.fix}",
            file=sys.stderr,
        )
    return True
