"""Finding and loading the gateway's `.mcp.json` (the TypeScript wrapper's discovery:
specs/gateway.md, "Where it is read from"); a bad file is one ConfigError line."""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .json_file import ConfigError

if TYPE_CHECKING:
    from .model import GatewayConfig


# The config model and parser are imported when a file is read: `codex-mcp` looks for a
# .mcp.json at every start, and most starts find none.

CONFIG_ENV = "CODEX_MCP_WRAPPER_CONFIG"
SERVER_NAME_ENV = "MCP_WRAPPER_SERVER_NAME"
#: Set in the environment of the gateway's children: a `codex-mcp` started by a gateway does
#: not look for a config (it would find its parent's and start itself again, endlessly). Its
#: value tells one started process from another (`<gateway pid>-<n>`): what a child starts
#: inherits it, so the gateway knows whose an orphan is (children/reaper.py).
CHILD_ENV = "CODEX_MCP_GATEWAY_CHILD"
_started = itertools.count(1)
CONFIG_FILENAME = ".mcp.json"


def child_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """A stdio child's environment: ours, without what selects our config (a child that is
    a codex-mcp would serve it again), with the entry's own `env` over it, marked as a
    gateway's child with a tag of its own."""
    inherited = {
        key: value for key, value in os.environ.items() if key not in (CONFIG_ENV, SERVER_NAME_ENV)
    }
    return {**inherited, **extra, CHILD_ENV: f"{os.getpid()}-{next(_started)}"}


def display_path(path: Path, home: Path | None = None) -> str:
    """`~/.codex/.mcp.json` rather than `/home/me/.codex/.mcp.json`, for messages."""
    home = home or Path.home()
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


def find_config(
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Path | None:
    """The config file to use, in the TypeScript wrapper's order, or None when there is none."""
    env = os.environ if environ is None else environ
    explicit = env.get(CONFIG_ENV, "").strip()
    if explicit:
        path = Path(os.path.expanduser(explicit))
        if not path.is_absolute():
            path = ((cwd or Path.cwd()) / path).resolve()
        if not path.is_file():
            raise ConfigError(f"{CONFIG_ENV} points to {path}, which is not a file")
        return path
    directory = (cwd or Path.cwd()).resolve()
    for folder in (directory, *directory.parents):
        candidate = folder / CONFIG_FILENAME
        if candidate.is_file():
            return candidate
    fallback = _home(env) / ".codex" / CONFIG_FILENAME
    return fallback if fallback.is_file() else None


def read_config(path: Path, environ: Mapping[str, str] | None = None) -> GatewayConfig:
    """Parse one file (no discovery)."""
    env = os.environ if environ is None else environ
    source = display_path(path, _home(env))
    from .json_file import (
        MAX_CONFIG_BYTES,
        MAX_CONFIG_DEPTH,
        JsonFileError,
        parse_json,
        read_bounded,
    )

    try:
        data = read_bounded(path, MAX_CONFIG_BYTES)
        text = data.decode("utf-8-sig")  # a BOM from a Windows editor is fine
        document = parse_json(text, max_depth=MAX_CONFIG_DEPTH)
    except FileNotFoundError:
        raise ConfigError(f"{source}: cannot read it: no such file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: not UTF-8 text") from None
    except JsonFileError as error:
        raise ConfigError(f"{source}: {error}") from None
    from .parse import parse_document

    return parse_document(document, source, path=path, environ=env)


def load_config(
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> GatewayConfig | None:
    """Discover, read and narrow to `MCP_WRAPPER_SERVER_NAME`. None when no file is found."""
    env = os.environ if environ is None else environ
    path = find_config(cwd, env)
    if path is None:
        return None
    return select_server(read_config(path, env), env.get(SERVER_NAME_ENV, "").strip())


def select_server(config: GatewayConfig, name: str) -> GatewayConfig:
    """Only the named server (single-server mode; no name: every one); an unknown name is a
    ConfigError."""
    if not name:
        return config
    server = config.server(name)
    if server is None:
        source = display_path(config.path) if config.path else "the config"
        known = ", ".join(s.name for s in config.servers) or "none"
        raise ConfigError(f"{source}: {SERVER_NAME_ENV}={name!r} names no server (known: {known})")
    return replace(config, servers=(replace(server, enabled=True),))


def passthrough_config(command: Sequence[str]) -> GatewayConfig:
    """`codex-mcp -- <server> <args...>`: one stdio child, no file."""
    from .model import GatewayConfig, ServerConfig, StdioTarget
    from .parse import derive_name

    if not command:
        raise ConfigError("nothing after --: give the server command to wrap")
    target = StdioTarget(command=command[0], args=tuple(command[1:]))
    server = ServerConfig(name=derive_name(target), target=target, where="--")
    return GatewayConfig(path=None, servers=(server,), passthrough=True)


def _home(environ: Mapping[str, str]) -> Path:
    return Path(environ["HOME"]) if environ.get("HOME") else Path.home()
