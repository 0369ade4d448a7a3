"""OAuth 2.1 for the MCP client, as the MCP authorization spec has it (specs/oauth.md)."""

from __future__ import annotations

from .assertions import IdJagExchange, StaticAssertion
from .browser import LoopbackAuthorizer
from .challenge import Challenge, parse_challenge
from .errors import (
    BearerTokenNeeded,
    GrantRefused,
    NeedsLogin,
    NotAnOAuthServer,
    OAuthError,
    ScopeNeeded,
)
from .flow import Authorizer, OAuth
from .registration import ClientProfile
from .store import MemoryStore, Registration, ServerAuth, Store, Tokens, TokenStore
from .token_endpoint import SigningKey

__all__ = [
    "Authorizer",
    "BearerTokenNeeded",
    "Challenge",
    "ClientProfile",
    "GrantRefused",
    "IdJagExchange",
    "LoopbackAuthorizer",
    "MemoryStore",
    "NeedsLogin",
    "NotAnOAuthServer",
    "OAuth",
    "OAuthError",
    "Registration",
    "ScopeNeeded",
    "ServerAuth",
    "SigningKey",
    "StaticAssertion",
    "Store",
    "TokenStore",
    "Tokens",
    "parse_challenge",
]
