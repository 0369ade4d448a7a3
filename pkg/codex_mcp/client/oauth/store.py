"""What a login leaves behind, per MCP server: the tokens, which issuer gave them, and the
client registration at each issuer (a registration is never taken to another one).

`TokenStore` keeps them in one file per server under `$CODEX_MCP_OAUTH_DIR`, else
`$XDG_STATE_HOME/codex-mcp/oauth`, else `~/.local/state/codex-mcp/oauth`: the directory
0700 and each file 0600, written whole (a temporary file renamed over the old one), so a
crash never leaves half a token behind. `MemoryStore` keeps them for the process only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

DIR_ENV = "CODEX_MCP_OAUTH_DIR"
#: Refresh this many seconds before a token expires, not after a request failed with it.
REFRESH_MARGIN = 60.0


@dataclass(slots=True)
class Tokens:
    access_token: str
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = None
    scope: str | None = None

    @classmethod
    def from_response(cls, body: dict[str, Any], previous: Tokens | None = None) -> Tokens:
        expires_in = body.get("expires_in")
        refresh = body.get("refresh_token")
        scope = body.get("scope")
        return cls(
            access_token=str(body["access_token"]),
            token_type=str(body.get("token_type") or "Bearer"),
            expires_at=time.time() + float(expires_in)
            if isinstance(expires_in, int | float)
            else None,
            # A refresh answer without a new refresh token leaves the old one valid.
            refresh_token=refresh
            if isinstance(refresh, str)
            else (previous.refresh_token if previous else None),
            scope=scope if isinstance(scope, str) else (previous.scope if previous else None),
        )

    def expiring(self, margin: float = REFRESH_MARGIN) -> bool:
        return self.expires_at is not None and self.expires_at - margin <= time.time()


@dataclass(slots=True)
class Registration:
    """Our client at one authorization server."""

    client_id: str
    client_secret: str | None = None
    auth_method: str = "none"
    redirect_uri: str | None = None


@dataclass(slots=True)
class ServerAuth:
    """Everything kept for one MCP server."""

    issuer: str | None = None
    tokens: Tokens | None = None
    #: The scopes last asked for (a step-up asks for these and the new ones).
    scopes: tuple[str, ...] = ()
    registrations: dict[str, Registration] = field(default_factory=dict)
    #: The private key (PEM) DPoP-bound tokens are bound to.
    dpop_key: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ServerAuth:
        tokens = data.get("tokens")
        return cls(
            issuer=data.get("issuer"),
            tokens=Tokens(**tokens) if isinstance(tokens, dict) else None,
            scopes=tuple(data.get("scopes") or ()),
            registrations={
                issuer: Registration(**value)
                for issuer, value in (data.get("registrations") or {}).items()
            },
            dpop_key=data.get("dpop_key"),
        )


class Store(Protocol):
    def load(self, server_url: str) -> ServerAuth: ...
    def save(self, server_url: str, auth: ServerAuth) -> None: ...
    def forget(self, server_url: str) -> bool: ...


class MemoryStore:
    def __init__(self) -> None:
        self._kept: dict[str, ServerAuth] = {}

    def load(self, server_url: str) -> ServerAuth:
        return self._kept.get(server_url) or ServerAuth()

    def save(self, server_url: str, auth: ServerAuth) -> None:
        self._kept[server_url] = auth

    def forget(self, server_url: str) -> bool:
        return self._kept.pop(server_url, None) is not None


def default_dir() -> Path:
    explicit = os.environ.get(DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state) if state and os.path.isabs(state) else Path.home() / ".local/state"
    return base / "codex-mcp" / "oauth"


class TokenStore:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or default_dir()

    def path(self, server_url: str) -> Path:
        digest = hashlib.sha256(server_url.encode()).hexdigest()[:24]
        return self.directory / f"{digest}.json"

    def load(self, server_url: str) -> ServerAuth:
        try:
            data = json.loads(self.path(server_url).read_text())
        except (OSError, ValueError):
            return ServerAuth()
        if not isinstance(data, dict) or data.get("server") != server_url:
            return ServerAuth()
        try:
            return ServerAuth.from_json(data)
        except (TypeError, ValueError):
            return ServerAuth()  # written by another version: log in again

    def save(self, server_url: str, auth: ServerAuth) -> None:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = self.path(server_url)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            json.dump({"server": server_url, **auth.to_json()}, file)
        os.replace(temporary, path)

    def forget(self, server_url: str) -> bool:
        with contextlib.suppress(FileNotFoundError):
            self.path(server_url).unlink()
            return True
        return False
