"""How the HTTP transport behaves; filled from settings by the CLI, or by hand."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class HttpConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    #: Mount everything under this prefix (for a proxy that serves us at /prefix/mcp).
    base_path: str = ""
    #: No session ids: every request is self-contained (for replicas behind a load balancer).
    stateless: bool = False
    session_ttl: float = 30 * 60.0
    max_sessions: int = 10_000
    #: Host header values accepted (host or host:port). Empty: loopback names when bound to
    #: loopback, anything otherwise. "*" accepts any host.
    allowed_hosts: list[str] = field(default_factory=list)
    #: Origins accepted (scheme://host[:port]). Empty: loopback origins. "*" accepts any.
    allowed_origins: list[str] = field(default_factory=list)
    #: X-Forwarded-Host values a trusted reverse proxy may send; a request carrying one of
    #: these passes the Host check, and an Origin naming one passes the Origin check.
    forwarded_hosts: list[str] = field(default_factory=list)
    #: Accepted bearer tokens; empty means no authentication.
    bearer_tokens: list[str] = field(default_factory=list)
    max_body_bytes: int = 16 * 1024 * 1024
    keepalive_interval: float = 15.0
    #: SSE events kept per session for Last-Event-ID resumption.
    replay_events: int = 256
    shutdown_timeout: float = 10.0
    #: Answer POSTs with JSON even when the call sends notifications (they go to the GET stream).
    json_only: bool = False

    @property
    def prefix(self) -> str:
        return "/" + self.base_path.strip("/") if self.base_path.strip("/") else ""
