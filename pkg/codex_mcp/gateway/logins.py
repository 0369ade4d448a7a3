"""An HTTP server's credentials from the user's logins (`codex-mcp-client login URL`): how the
gateway's children and `codex-mcp lint` reach a server that wants OAuth, and which token
store file a login for it writes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .config.model import HttpTarget, ServerConfig

if TYPE_CHECKING:
    from codex_mcp.client.oauth import OAuth


def child_oauth(target: HttpTarget, headers: dict[str, str]) -> OAuth | None:
    """An HTTP child's OAuth from the user's logins (specs/gateway.md, "OAuth children"); None
    for a child given its own Authorization header."""
    if any(name.lower() == "authorization" for name in headers):
        return None
    from codex_mcp.client.oauth import ClientProfile, OAuth, TokenStore

    config = target.oauth
    profile = ClientProfile(
        client_name="codex-mcp gateway",
        client_id=config.client_id if config else None,
        client_secret=config.client_secret if config else None,
    )
    return OAuth(
        store=TokenStore(),
        profile=profile,
        scopes=config.scopes if config else None,
        fallback=config is not None,  # unasked, only a 401 that points to OAuth metadata
    )


def login_file(server: ServerConfig) -> Path | None:
    """The token store's file that a login for this child writes (`child_oauth` reads it),
    for a child that may use one: watched while the child waits for the user's login."""
    target = server.target
    if not isinstance(target, HttpTarget) or target.transport == "sse":
        return None
    from codex_mcp.client.oauth import TokenStore

    return TokenStore().path(target.url)
