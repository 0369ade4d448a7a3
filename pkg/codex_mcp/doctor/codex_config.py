"""Codex's own configuration: `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`), with
`--profile NAME`'s `NAME.config.toml` beside it merged over it, as Codex 0.171 layers them;
its `[mcp_servers.*]` entries, checked as Codex checks them (codex-rs/config/src/
mcp_types.rs: `RawMcpServerConfig`, then `TryFrom` into `McpServerConfig`); its sandbox and
approval policy, and the 2026-07-28 feature. A value of the wrong type anywhere makes Codex
refuse the whole file, so it is one error here too; keys Codex does not know are ignored, as
serde does.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from codex_mcp.codex_compat.client import FEATURE_2026, MARKER_2026, discovers_first
from codex_mcp.codex_compat.policy import CODEX_DEFAULTS, Permissions

#: `DEFAULT_STARTUP_TIMEOUT` in codex-rs/codex-mcp/src/rmcp_client.rs: each of initialize
#: and the first tools/list gets this long.
DEFAULT_STARTUP_TIMEOUT_SEC = 30.0
#: `DEFAULT_TOOL_TIMEOUT`, same file: a call's limit unless `tool_timeout_sec` says.
DEFAULT_TOOL_TIMEOUT_SEC = 300.0
#: Far above any real config.toml; the read stops here.
MAX_CONFIG_BYTES = 1 << 20
CONFIG_FILENAME = "config.toml"
#: What `--profile` takes: a plain name (Codex refuses `a/b`), its file `NAME.config.toml`.
PROFILE_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


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
    #: Codex sends `server/discover` (2026-07-28) first, then falls back to `initialize`.
    discovers_first: bool = False
    #: Why Codex refuses to start it, from its entry alone (None: it tries).
    refused: str | None = None

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
    permissions: Permissions = CODEX_DEFAULTS


def codex_home(environ: Mapping[str, str]) -> Path:
    """`$CODEX_HOME`, else `~/.codex` (HOME from `environ`)."""
    explicit = environ.get("CODEX_HOME", "").strip()
    if explicit:
        return Path(os.path.expanduser(explicit))
    home = environ.get("HOME") or str(Path.home())
    return Path(home) / ".codex"


def read_codex_config(path: Path, profile: str | None = None) -> CodexConfig:
    """`path`, with `profile`'s file beside it merged over it (Codex's `--profile`)."""
    document = _parse(path)
    _no_legacy_profile(path, document)
    where = str(path)
    if profile is not None:
        if not PROFILE_NAME.match(profile):
            raise CodexConfigError(f"--profile {profile!r}: give a plain name, such as work")
        legacy = document.get("profiles")
        if isinstance(legacy, dict) and profile in legacy:
            raise CodexConfigError(
                f"{path}: --profile {profile} cannot be used while it has a [profiles.{profile}] "
                f"table (Codex refuses it too): move its settings into {profile}.config.toml"
            )
        layer_path = path.parent / f"{profile}.config.toml"
        if layer_path.exists():
            layer = _parse(layer_path)
            _no_legacy_profile(layer_path, layer)
            document = _merged(document, layer)
            where = f"{path} with {layer_path}"
    try:
        checked = _Document.model_validate(document)
    except ValidationError as error:
        raise CodexConfigError(f"{where}: {_first_problem(error, document)}{_REFUSED}") from None
    feature = checked.features.get(FEATURE_2026) is True
    servers = tuple(entry.server(name, feature) for name, entry in checked.mcp_servers.items())
    origin = "config.toml" if profile is None or where == str(path) else f"{profile}.config.toml"
    said = checked.sandbox_mode is not None or checked.approval_policy is not None
    permissions = Permissions(
        checked.sandbox_mode or CODEX_DEFAULTS.sandbox_mode,
        _approval(checked.approval_policy),
        origin if said else CODEX_DEFAULTS.origin,
    )
    return CodexConfig(path, servers, permissions)


_REFUSED = "; Codex refuses this file too: fix it"


def _no_legacy_profile(path: Path, document: dict[str, Any]) -> None:
    """Codex 0.171 refuses a file that selects a profile: profiles are `--profile` files."""
    if "profile" in document:
        name = document["profile"]
        raise CodexConfigError(
            f"{path}: `profile = {name!r}` is refused by Codex 0.171 (legacy profile selector): "
            f"remove it and give --profile NAME, with NAME.config.toml beside config.toml"
        )


def _merged(base: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    """`layer` over `base`, tables merged key by key (how Codex layers its config files)."""
    out = dict(base)
    for key, value in layer.items():
        below = out.get(key)
        out[key] = (
            _merged(below, value) if isinstance(below, dict) and isinstance(value, dict) else value
        )
    return out


def _approval(policy: str | dict[str, Any] | None) -> str:
    if policy is None:
        return CODEX_DEFAULTS.approval_policy
    return policy if isinstance(policy, str) else "granular"


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

    def server(self, name: str, feature_2026: bool) -> CodexServer:
        """`feature_2026`: `[features] mcp_2026_07_28 = true`, which makes Codex read (and
        take out of the server's environment) the stdio entry's protocol marker."""
        transport: StdioEntry | HttpEntry
        refused = None
        discovers = discovers_first(
            feature_2026, (self.env or {}) if self.command is not None else None
        )
        if self.command is not None:
            names = tuple(v if isinstance(v, str) else v.name for v in self.env_vars or ())
            env = dict(self.env or {})
            marker = env.pop(MARKER_2026, None) if feature_2026 else None
            if marker is not None and not discovers:
                refused = (
                    f"unsupported {MARKER_2026} `{marker}` for stdio MCP server; expected "
                    "`2026-07-28` (Codex starts no server with this entry)"
                )
            transport = StdioEntry(self.command, tuple(self.args or ()), env, names, self.cwd)
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
            discovers_first=discovers,
            refused=refused,
        )


class _Document(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    mcp_servers: dict[str, _Entry] = Field(default_factory=dict)
    #: Codex's features; it refuses a value that is not a boolean for the one read here.
    features: dict[str, Any] = Field(default_factory=dict)
    sandbox_mode: Literal["read-only", "workspace-write", "danger-full-access"] | None = None
    #: A name, or a table (`granular`).
    approval_policy: (
        Literal["untrusted", "on-failure", "on-request", "never"] | dict[str, Any] | None
    ) = None

    @model_validator(mode="after")
    def _feature_is_a_boolean(self) -> _Document:
        if not isinstance(self.features.get(FEATURE_2026, False), bool):
            raise ValueError(f"features.{FEATURE_2026} must be true or false")
        return self
