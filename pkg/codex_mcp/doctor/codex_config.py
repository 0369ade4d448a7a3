"""Codex's own configuration: `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`) and
its `[mcp_servers.*]` entries, checked as Codex checks them (codex-rs/config/src/
mcp_types.rs: `RawMcpServerConfig`, then `TryFrom` into `McpServerConfig`). A value of the
wrong type anywhere makes Codex refuse the whole file, so it is one error here too; keys
Codex does not know are ignored, as serde does.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

#: `DEFAULT_STARTUP_TIMEOUT` in codex-rs/codex-mcp/src/rmcp_client.rs: each of initialize
#: and the first tools/list gets this long.
DEFAULT_STARTUP_TIMEOUT_SEC = 30.0
#: `DEFAULT_TOOL_TIMEOUT`, same file: a call's limit unless `tool_timeout_sec` says.
DEFAULT_TOOL_TIMEOUT_SEC = 300.0
#: Far above any real config.toml; the read stops here.
MAX_CONFIG_BYTES = 1 << 20
CONFIG_FILENAME = "config.toml"


class CodexConfigError(Exception):
    """config.toml cannot be used (one line, saying where and what to do)."""


@dataclass(frozen=True, slots=True)
class StdioEntry:
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    #: Names of variables of Codex's own environment passed on, besides the default ones.
    env_vars: tuple[str, ...] = ()
    cwd: str | None = None


@dataclass(frozen=True, slots=True)
class HttpEntry:
    url: str
    bearer_token_env_var: str | None = None
    http_headers: Mapping[str, str] = field(default_factory=dict)
    #: Header name -> the variable its value is read from.
    env_http_headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CodexServer:
    name: str
    transport: StdioEntry | HttpEntry
    enabled: bool = True
    required: bool = False
    startup_timeout_sec: float | None = None
    tool_timeout_sec: float | None = None
    enabled_tools: tuple[str, ...] | None = None
    disabled_tools: tuple[str, ...] = ()

    @property
    def startup_timeout(self) -> float:
        if self.startup_timeout_sec is None:
            return DEFAULT_STARTUP_TIMEOUT_SEC
        return self.startup_timeout_sec

    @property
    def tool_timeout(self) -> float:
        if self.tool_timeout_sec is None:
            return DEFAULT_TOOL_TIMEOUT_SEC
        return self.tool_timeout_sec


@dataclass(frozen=True, slots=True)
class CodexConfig:
    path: Path
    servers: tuple[CodexServer, ...]


def codex_home(environ: Mapping[str, str]) -> Path:
    """`$CODEX_HOME`, else `~/.codex` (HOME from `environ`)."""
    explicit = environ.get("CODEX_HOME", "").strip()
    if explicit:
        return Path(os.path.expanduser(explicit))
    home = environ.get("HOME") or str(Path.home())
    return Path(home) / ".codex"


def read_codex_config(path: Path) -> CodexConfig:
    document = _parse(path)
    try:
        checked = _Document.model_validate(document)
    except ValidationError as error:
        raise CodexConfigError(f"{path}: {_first_problem(error, document)}{_REFUSED}") from None
    servers = tuple(entry.server(name) for name, entry in checked.mcp_servers.items())
    return CodexConfig(path, servers)


_REFUSED = "; Codex refuses this file too: fix it"


def _parse(path: Path) -> dict[str, Any]:
    # Imported here: the gateway's bounded reader is the one place files are read so.
    from codex_mcp.gateway.config.json_file import JsonFileError, read_bounded

    try:
        data = read_bounded(path, MAX_CONFIG_BYTES)
    except FileNotFoundError:
        raise CodexConfigError(
            f"no Codex config at {path}: give --codex-home DIR or --config FILE"
        ) from None
    except JsonFileError as error:
        raise CodexConfigError(f"{path}: {error}") from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise CodexConfigError(f"{path}: not UTF-8 text{_REFUSED}") from None
    except tomllib.TOMLDecodeError as error:
        raise CodexConfigError(f"{path}: not valid TOML: {error}{_REFUSED}") from None
    except RecursionError:
        raise CodexConfigError(f"{path}: nested too deep to read{_REFUSED}") from None


_WANTED = {
    "model_type": "must be a table",
    "dict_type": "must be a table",
    "string_type": "must be a string",
    "list_type": "must be a list",
    "bool_type": "must be true or false",
    "float_type": "must be a number",
    "int_type": "must be a whole number",
    "greater_than_equal": "must not be negative",
    "finite_number": "must be a finite number",
}


def _has(value: Any, part: Any) -> bool:
    if isinstance(value, dict):
        return isinstance(part, str) and part in value
    return isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value)


def _first_problem(error: ValidationError, document: Any) -> str:
    """`mcp_servers.time.args.1: must be a string`, the path cut to what the file has (a
    union's member names are no keys of it)."""
    problem = error.errors(include_url=False)[0]
    where: list[str] = []
    value = document
    for part in problem["loc"]:
        if not _has(value, part):
            break
        value = value[part]
        where.append(str(part))
    said = _WANTED.get(problem["type"], str(problem["msg"]).removeprefix("Value error, "))
    return f"{'.'.join(where) or 'the file'}: {said}"


Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Names = list[str]


class _EnvVar(BaseModel):
    """`env_vars = [{ name = "X", source = "local" }]`, the table form of a name."""

    model_config = ConfigDict(strict=True, extra="ignore")
    name: str
    source: str | None = None


class _Entry(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    command: str | None = None
    args: Names | None = None
    env: dict[str, str] | None = None
    env_vars: list[str | _EnvVar] | None = None
    cwd: str | None = None
    url: str | None = None
    bearer_token: str | None = None
    bearer_token_env_var: str | None = None
    http_headers: dict[str, str] | None = None
    env_http_headers: dict[str, str] | None = None
    startup_timeout_sec: Seconds | None = None
    startup_timeout_ms: Annotated[int, Field(ge=0)] | None = None
    tool_timeout_sec: Seconds | None = None
    enabled: bool | None = None
    required: bool | None = None
    enabled_tools: Names | None = None
    disabled_tools: Names | None = None

    @model_validator(mode="after")
    def _one_transport(self) -> _Entry:
        """Codex's own rules (`throw_if_set`): one transport, and nothing of the other."""
        if self.command is not None:
            wrong = ("url", "bearer_token_env_var", "bearer_token", "http_headers")
            clash = [key for key in (*wrong, "env_http_headers") if getattr(self, key) is not None]
            if clash:
                raise ValueError(f"{clash[0]} is not supported for stdio (command)")
        elif self.url is not None:
            clash = [
                k
                for k in ("args", "env", "env_vars", "cwd", "bearer_token")
                if getattr(self, k) is not None
            ]
            if clash:
                raise ValueError(f"{clash[0]} is not supported for streamable_http (url)")
        else:
            raise ValueError("invalid transport: give `command` (stdio) or `url` (HTTP)")
        return self

    def server(self, name: str) -> CodexServer:
        transport: StdioEntry | HttpEntry
        if self.command is not None:
            names = tuple(v if isinstance(v, str) else v.name for v in self.env_vars or ())
            transport = StdioEntry(
                self.command, tuple(self.args or ()), dict(self.env or {}), names, self.cwd
            )
        else:
            assert self.url is not None  # _one_transport
            transport = HttpEntry(
                self.url,
                self.bearer_token_env_var,
                dict(self.http_headers or {}),
                dict(self.env_http_headers or {}),
            )
        startup = self.startup_timeout_sec
        if startup is None and self.startup_timeout_ms is not None:
            startup = self.startup_timeout_ms / 1000
        return CodexServer(
            name,
            transport,
            enabled=self.enabled is not False,
            required=self.required is True,
            startup_timeout_sec=startup,
            tool_timeout_sec=self.tool_timeout_sec,
            enabled_tools=tuple(self.enabled_tools) if self.enabled_tools is not None else None,
            disabled_tools=tuple(self.disabled_tools or ()),
        )


class _Document(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    mcp_servers: dict[str, _Entry] = Field(default_factory=dict)
