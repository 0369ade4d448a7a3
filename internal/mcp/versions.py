"""MCP protocol revisions and version negotiation."""

from __future__ import annotations

from enum import Enum
from typing import Final

V2024_11_05: Final = "2024-11-05"
V2025_03_26: Final = "2025-03-26"
V2025_06_18: Final = "2025-06-18"
V2025_11_25: Final = "2025-11-25"
# The stateless revision: no handshake, version and capabilities in every request's _meta.
V2026_07_28: Final = "2026-07-28"

# Newest first.
SUPPORTED_VERSIONS: Final = (V2025_11_25, V2025_06_18, V2025_03_26, V2024_11_05)
LATEST_VERSION: Final = SUPPORTED_VERSIONS[0]
# Revisions served per request, without a handshake (the spec's "stateless" era), newest first.
# Kept apart from SUPPORTED_VERSIONS, which is what `initialize` negotiates.
STATELESS_VERSIONS: Final = (V2026_07_28,)
# What a Streamable HTTP request without an MCP-Protocol-Version header is taken to speak.
DEFAULT_HTTP_VERSION: Final = V2025_03_26


class Revision(Enum):
    """The era a request speaks, as its context says (`RequestContext.revision`): asked of
    the context, never guessed from its class or its attributes."""

    #: After an `initialize` handshake (2024-11-05 to 2025-11-25): the session holds the
    #: version, the client's capabilities and its log level; the server may ask the client.
    LEGACY = "legacy"
    #: 2026-07-28: no handshake; each request carries its version, capabilities and log
    #: level in `_meta`; input is asked by input-required rounds or a task.
    STATELESS = "stateless"


def negotiate(requested: object) -> str:
    """Answer the client's version when we support it, else our latest (the spec's rule)."""
    if isinstance(requested, str) and requested in SUPPORTED_VERSIONS:
        return requested
    return LATEST_VERSION


def allows_batches(version: str | None) -> bool:
    """JSON-RPC batches were part of MCP until 2025-06-18 removed them."""
    return version is not None and version < V2025_06_18


def is_supported(version: str) -> bool:
    return version in SUPPORTED_VERSIONS
