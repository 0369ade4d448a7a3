"""The gateway's configuration, typed: what `parse` builds from a `.mcp.json`. Durations are
seconds (floats) as in Codex's `config.toml`; None: the gateway-wide default (`WRAPPER_*`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from codex_mcp.codex_compat.config import RepairConfig, ToolSettings

Transport = Literal["stdio", "http", "sse"]
RestartPolicy = Literal["on-failure", "always", "never"]
#: How tool definitions and skills are pinned (specs/trust.md): recorded the first time they
#: are served and withheld once changed; nothing served that the lock lacks; no pinning.
Pinning = Literal["on-first-use", "locked", "off"]
PINNING_MODES: tuple[Pinning, ...] = ("on-first-use", "locked", "off")


@dataclass(frozen=True, slots=True)
class StdioTarget:
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None


@dataclass(frozen=True, slots=True)
class OAuthConfig:
    """An HTTP child's `"oauth": {...}`: a pre-registered client and the scopes to ask for
    (all optional; the tokens themselves come from `codex-mcp-client login URL`)."""

    client_id: str | None = None
    client_secret: str | None = None
    scopes: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class HttpTarget:
    url: str
    #: Headers to send, already expanded (`${VAR}`), plus `Authorization: Bearer ...` when
    #: `bearer_token_env_var` named a variable that is set.
    headers: dict[str, str] = field(default_factory=dict)
    #: The variable holding the bearer token (read again at connect time by `resolved_headers`).
    bearer_token_env_var: str | None = None
    #: Header name -> environment variable holding its value (Codex's `env_http_headers`).
    env_headers: dict[str, str] = field(default_factory=dict)
    transport: Literal["http", "sse"] = "http"
    #: Set by `"oauth"`; an HTTP child without it still uses a login's tokens when it
    #: answers 401 with resource metadata.
    oauth: OAuthConfig | None = None

    def resolved_headers(self, environ: dict[str, str]) -> dict[str, str]:
        """The headers to send now: the static ones, the env-sourced ones, the bearer token."""
        headers = dict(self.headers)
        for name, variable in self.env_headers.items():
            if environ.get(variable):
                headers[name] = environ[variable]
        if self.bearer_token_env_var and environ.get(self.bearer_token_env_var):
            headers["Authorization"] = f"Bearer {environ[self.bearer_token_env_var]}"
        return headers


@dataclass(frozen=True, slots=True)
class RestartConfig:
    policy: RestartPolicy = "on-failure"
    max_restarts: int | None = None  # None: no limit
    backoff_initial_sec: float = 0.5
    backoff_max_sec: float = 30.0


@dataclass(frozen=True, slots=True)
class ServerConfig:
    name: str
    target: StdioTarget | HttpTarget
    #: Where in the file this entry is (`mcpServers.time`), for messages.
    where: str
    enabled: bool = True
    #: Over HTTP: one child per client session instead of one shared by all.
    per_session: bool = False
    startup_timeout_sec: float | None = None
    tools_list_timeout_sec: float | None = None
    tool_timeout_sec: float | None = None
    #: What a shared child is told its client can do (sampling, elicitation, roots); None:
    #: what Codex declares (codex_compat/client.py). Per-session children get their client's.
    client_capabilities: dict[str, Any] | None = None
    #: Started at its first call (its kept listing is served until then), not with the gateway.
    lazy: bool = False
    #: Stopped after this many seconds without a call (started again by the next one).
    idle_timeout_sec: float | None = None
    restart: RestartConfig = field(default_factory=RestartConfig)
    repair: RepairConfig = field(default_factory=RepairConfig)
    #: Codex-style allow/deny lists of the child's tool names (applied as policy rules:
    #: policy/config.py entry_rules, so a listing and a call agree).
    enabled_tools: tuple[str, ...] | None = None
    disabled_tools: tuple[str, ...] = ()
    tools: dict[str, ToolSettings] = field(default_factory=dict)
    #: This server's pinning (None: the gateway's `pinning`).
    pinning: Pinning | None = None
    #: The entry as written (variables not expanded), to print it back (`lint --fix`).
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def transport(self) -> Transport:
        return "stdio" if isinstance(self.target, StdioTarget) else self.target.transport

    def tool_settings(self, tool_name: str) -> ToolSettings | None:
        return self.tools.get(tool_name)


@dataclass(frozen=True, slots=True)
class GatewayConfig:
    #: The file it came from (None for a passthrough command).
    path: Path | None
    servers: tuple[ServerConfig, ...]
    #: Over HTTP, the most per-session children alive at once (None: derived from the
    #: machine, sessions.default_session_children).
    max_session_children: int | None = None
    #: The most of them one principal (credential) may hold (None: half the cap).
    max_session_children_per_principal: int | None = None
    #: A 2026-07-28 caller's per-session children stop after this long unused (None: 300).
    principal_idle_sec: float | None = None
    #: Things worth a log line that are not errors (unknown keys, unset variables).
    warnings: tuple[str, ...] = ()
    #: `codex-mcp -- <server> <args...>`: one child, served under its own tool names.
    passthrough: bool = False
    #: Every server's pinning unless its entry says otherwise (specs/trust.md).
    pinning: Pinning = "on-first-use"
    #: The trust lock, when the file names one (`gateway.lock_file`, relative to the file's
    #: folder: a team commits it); None: one in the state directory (trust/lock.py).
    lock_file: Path | None = None
    #: The gateway writes the skills it serves into Codex's skills folder while it runs.
    skills_sync: bool = False

    def pinning_of(self, server: ServerConfig) -> Pinning:
        return server.pinning or self.pinning

    def server(self, name: str) -> ServerConfig | None:
        return next((s for s in self.servers if s.name == name), None)

    @property
    def enabled_servers(self) -> tuple[ServerConfig, ...]:
        return tuple(s for s in self.servers if s.enabled)
