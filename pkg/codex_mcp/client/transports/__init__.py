"""Client transports, each loaded on first use: the stdio transport alone never imports
aiohttp (specs/client.md, "Transports")."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY = {
    "LegacySseTransport": ".legacy_sse",
    "MemoryTransport": ".memory",
    "StdioTransport": ".stdio",
    "StreamableHttpTransport": ".streamable_http",
    "Transport": ".base",
}

if TYPE_CHECKING:
    from .base import Transport
    from .legacy_sse import LegacySseTransport
    from .memory import MemoryTransport
    from .stdio import StdioTransport
    from .streamable_http import StreamableHttpTransport


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "LegacySseTransport",
    "MemoryTransport",
    "StdioTransport",
    "StreamableHttpTransport",
    "Transport",
]
