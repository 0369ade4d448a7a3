"""What goes wrong authorizing: a refusal we can explain, or no way to log in here."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from ..errors import TOKEN_ENV, McpClientError

GIVE_TOKEN = f"pass --header 'Authorization: Bearer TOKEN' or set {TOKEN_ENV}"


def shown(value: Any, limit: int = 200) -> str:
    """Outside text as we print it: quoted with control characters escaped, and short."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def in_their_words(said: str | None) -> str:
    """What a refusing server said (its `error_description`, else its body's message), to
    end our message with: escaped and short, as any outside text we print."""
    return f" (it said {shown(said)})" if said else ""


class OAuthError(McpClientError):
    """Authorization failed: metadata that does not check out, a refused grant, a
    redirect that is not the answer to our request."""


class GrantRefused(OAuthError):
    """The token endpoint refused the grant itself (RFC 6749 section 5.2: `invalid_grant`
    and the like): the tokens it was asked about are no good any more."""


class NeedsLogin(OAuthError):
    """The server wants a token and there is none to use without the user."""

    def __init__(self, url: str) -> None:
        super().__init__(f"{url}: needs login: run `codex-mcp-client login {url}`")
        self.url = url


class BearerTokenNeeded(OAuthError):
    """The server refused us (401) and publishes no OAuth metadata (no `resource_metadata`
    in its challenge, none at /.well-known/): it wants a token given to the client, not a
    login."""

    def __init__(self, url: str, said: str | None = None) -> None:
        super().__init__(
            f"{url} wants a bearer token, not an OAuth login{in_their_words(said)}: {GIVE_TOKEN}"
        )
        self.url = url


class NotAnOAuthServer(OAuthError):
    """`login` at a server that publishes no OAuth metadata and has no working default
    endpoints (2025-03-26): there is nothing to log in to."""

    def __init__(self, url: str) -> None:
        super().__init__(
            f"{url} publishes no OAuth metadata (no /.well-known/oauth-protected-resource or "
            f"oauth-authorization-server) and registers no clients: there is no OAuth login "
            f"to do; if it wants a bearer token, {GIVE_TOKEN}"
        )
        self.url = url


class ScopeNeeded(OAuthError):
    """The server refused the token for lack of scope (403 insufficient_scope) and no new
    authorization can be made here (no browser): the login to run, with every scope."""

    def __init__(
        self, url: str, missing: Sequence[str], wanted: Sequence[str], said: str | None = None
    ) -> None:
        # Quoted: the scopes come from the server, the command goes to a shell.
        scopes = " ".join(f"--scope {shlex.quote(scope)}" for scope in wanted)
        named = " ".join(shlex.quote(scope) for scope in missing) or "(unnamed)"
        super().__init__(
            f"{url}: the token lacks scope {named}{in_their_words(said)}: "
            f"run `codex-mcp-client login {shlex.quote(url)} {scopes}`"
        )
        self.url = url
        self.missing = tuple(missing)
        self.wanted = tuple(wanted)
