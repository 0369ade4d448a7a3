"""The gateway's part of the command line, for `codex-mcp` and `codex-mcp-http`: a config,
`-- CMD ARGS...`, `lint`, `doctor` and `--print-codex-config` (specs/gateway.md, "The command line").
`intercept` imports only the config reader, so a `codex-mcp` with no config starts as fast
as before."""

from __future__ import annotations

import json
import logging
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..gateway.config.json_file import ConfigError
from ..gateway.config.load import (
    CHILD_ENV,
    CONFIG_ENV,
    display_path,
    find_config,
    load_config,
    passthrough_config,
)
from ..settings import HttpDefaults, env_name

if TYPE_CHECKING:
    from ..core.server import ServerCore
    from ..gateway.config.model import GatewayConfig

PRINT_CONFIG = "--print-codex-config"
SERVE_ENV = env_name("serve")


#: How the gateway is asked for, for --help.
GATEWAY_HELP = (
    "Gateway: with a .mcp.json (CODEX_MCP_WRAPPER_CONFIG, else the nearest .mcp.json upward "
    "from here, else ~/.codex/.mcp.json) every server in it is served as one, each tool "
    "named server__tool; `%(prog)s -- CMD ARGS...` wraps one server; "
    "MCP_WRAPPER_SERVER_NAME=NAME serves only that one."
)
#: `--help`'s first lines: the ways to run each program (its settings follow).
STDIO_USAGE = """codex-mcp [options]               serve MCP on stdio (the gateway: below)
       codex-mcp --print-codex-config    print the entry for ~/.codex/config.toml
       codex-mcp -- CMD [ARGS...]        wrap one server (a gateway of one)
       codex-mcp lint [-- CMD ... | URL | FILE] [--json] [--fix]
                                         how Codex will see a server's tools
       codex-mcp doctor [--json]         what Codex will see of its config.toml
       codex-mcp trust [--accept NAME | --accept-all | --reject [NAME]]
                                         what changed in the servers' tools and skills
                                         since they were trusted (specs/trust.md)
       codex-mcp skills sync [--dry-run] write their skills into Codex's skills folder"""
HTTP_USAGE = """codex-mcp-http [options]            serve MCP over HTTP (the gateway: below)
       codex-mcp-http --print-codex-config [options]
                                           print the entry for ~/.codex/config.toml
       codex-mcp-http -- CMD [ARGS...]     serve one server over HTTP"""


def intercept(argv: list[str], prog: str) -> tuple[list[str], GatewayConfig | None]:
    """The arguments left for the settings, and the gateway config to serve (None: serve
    what the settings say). Exits for `lint`, `--print-codex-config` and a bad config."""
    if prog == "codex-mcp" and argv[:1] == ["lint"]:
        from ..lint.cli import main as lint

        raise SystemExit(lint(argv[1:]))
    if prog == "codex-mcp" and argv[:1] == ["doctor"]:
        from ..doctor.cli import main as doctor

        raise SystemExit(doctor(argv[1:]))
    if prog == "codex-mcp" and argv[:1] == ["trust"]:
        from ..trust.cli import main as trust

        raise SystemExit(trust(argv[1:]))
    if prog == "codex-mcp" and argv[:2] == ["skills", "sync"]:
        from ..trust.skills_cli import main as skills_sync

        raise SystemExit(skills_sync(argv[2:]))
    own, command = _split(argv)
    if PRINT_CONFIG in own:
        own = [arg for arg in own if arg != PRINT_CONFIG]
        if prog == "codex-mcp-http":
            raise SystemExit(print_http_codex_config(own))
        raise SystemExit(print_codex_config(own, command))
    try:
        if command is not None:
            config = passthrough_config(command)
            _exit_unless_runnable(prog, command[0], config.servers[0].name)
            return own, config
        if _serve_given(own):
            return own, None
        if os.environ.get(CHILD_ENV) and not os.environ.get(CONFIG_ENV):
            return own, None  # a gateway's child: its config is its parent's, not ours
        return own, load_config()
    except ConfigError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        raise SystemExit(2) from None


def _exit_unless_runnable(prog: str, command: str, name: str) -> None:
    """`codex-mcp -- CMD`: a CMD that cannot run (not found, not executable) is the one
    server there is; say so and exit (127, 126: a shell's codes) instead of serving none."""
    import errno
    import shutil

    if os.sep in command:
        missing = not os.path.exists(command)
        runnable = not missing and not os.path.isdir(command) and os.access(command, os.X_OK)
    else:
        runnable = shutil.which(command) is not None
        missing = not runnable and shutil.which(command, mode=os.F_OK) is None
    if runnable:
        return
    from ..gateway.errors import spawn_error

    number = errno.ENOENT if missing else errno.EACCES
    print(
        f"{prog}: {spawn_error(number, server=name, command=command)['message']}", file=sys.stderr
    )
    raise SystemExit(127 if missing else 126)


def gateway_core(config: GatewayConfig, max_message_bytes: int | None = None) -> ServerCore:
    """The gateway's core; `DEBUG=1` turns on detailed logs first. `max_message_bytes`
    (the stdio server's setting) caps what a child may send too."""
    import dataclasses

    from ..gateway.config.env import GatewayEnv
    from ..gateway.serve import build_core

    env = GatewayEnv.read()
    if max_message_bytes is not None:
        env = dataclasses.replace(env, max_message_bytes=max_message_bytes)
    if env.debug:
        logging.getLogger().setLevel(logging.DEBUG)
    core = build_core(config, env)
    from ..trust.point import install as pinning

    pinning(core)  # tool definitions and skills pinned (specs/trust.md)
    return core


def _split(argv: list[str]) -> tuple[list[str], list[str] | None]:
    if "--" not in argv:
        return list(argv), None
    at = argv.index("--")
    return list(argv[:at]), list(argv[at + 1 :])


def _serve_given(argv: list[str]) -> bool:
    """`--serve X` (or CODEX_MCP_SERVE) names what to serve: no config discovery then."""
    given = any(arg == "--serve" or arg.startswith("--serve=") for arg in argv)
    return given or any(key.upper() == SERVE_ENV for key in os.environ)


def print_codex_config(own: list[str], command: list[str] | None) -> int:
    """Print the `[mcp_servers.codex-mcp]` entry for Codex's config.toml, and the same as a
    `codex mcp add` command, for this installation and the config it would serve."""
    from ..gateway.config.env import DEFAULT_STARTUP_BUDGET_MS, STARTUP_BUDGET_ENV

    launcher = _launcher()
    args = [*launcher[1:], *own, *(["--", *command] if command is not None else [])]
    env: dict[str, str] = {}
    try:
        found = find_config() if command is None and not _serve_given(own) else None
    except ConfigError as error:
        print(f"codex-mcp: {error}", file=sys.stderr)
        return 2
    note = None
    if found is not None:
        env[CONFIG_ENV] = str(found)
        from ..doctor.gateway_entry import warn_unfound_children

        if not warn_unfound_children(found, prog="codex-mcp"):
            return 2
        note = f"# Serves {display_path(found)}; Codex sees its tools as mcp__codex_mcp."
    lines = [f"command = {json.dumps(launcher[0])}"]
    if args:
        lines.append(f"args = {json.dumps(args)}")
    if env:
        pairs = ", ".join(f"{key} = {json.dumps(value)}" for key, value in env.items())
        lines.append(f"env = {{ {pairs} }}")
    lines += [
        "# Codex's first turn waits for the gateway's tools (slow children included: the",
        "# gateway serves each child's last listing while it starts, and waits up to",
        f"# {STARTUP_BUDGET_ENV}, {DEFAULT_STARTUP_BUDGET_MS // 1000} s, for one it never listed):",
    ]
    add = ["codex", "mcp", "add", "codex-mcp"]
    add += [f"--env={key}={value}" for key, value in env.items()]
    return _print_entry(note, lines, [*add, "--", launcher[0], *args])


def _print_entry(note: str | None, entry: list[str], add: list[str]) -> int:
    """The entry (after a `note`), what Codex needs of every entry, and the `codex mcp add`
    command."""
    lines = [note] if note else []
    lines += ["# Add to ~/.codex/config.toml:", "[mcp_servers.codex-mcp]", *entry]
    lines += [
        "required = true",
        "startup_timeout_sec = 30",
        "",
        "# `codex mcp add` cannot set required and startup_timeout_sec: after it, add those two",
        "# lines to the [mcp_servers.codex-mcp] table it writes in ~/.codex/config.toml.",
        "# Or, with the Codex CLI:",
        shlex.join(add),
    ]
    print("\n".join(lines))
    return 0


def print_http_codex_config(own: list[str]) -> int:
    """`codex-mcp-http --print-codex-config`: the `url =` entry for the server these
    arguments start (Codex connects to it; it does not launch it)."""
    from .options import parse

    settings = parse(HttpDefaults, own, "codex-mcp-http", "")
    host, port, base = settings.host, settings.port, settings.base_path.rstrip("/")
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}{base}/mcp"
    note = f"# Start the server first: codex-mcp-http {shlex.join(own)}".rstrip()
    return _print_entry(
        note, [f"url = {json.dumps(url)}"], ["codex", "mcp", "add", "codex-mcp", "--url", url]
    )


def _launcher() -> list[str]:
    """How to start this codex-mcp again from anywhere: the console script when we were
    started as one, else this Python running the same file."""
    script = Path(sys.argv[0])
    if script.name == "codex-mcp" and script.exists():
        return [str(script.absolute())]
    if script.exists():
        return [sys.executable, str(script.resolve())]
    return [sys.executable, "-m", "codex_mcp.cli.stdio"]
