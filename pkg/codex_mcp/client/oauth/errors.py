"""What goes wrong authorizing: a refusal we can explain, or no way to log in here."""

from __future__ import annotations

from ..errors import McpClientError


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
