"""Client transports: stdio, Streamable HTTP, legacy HTTP+SSE and in-memory."""

from .base import Transport
from .legacy_sse import LegacySseTransport
from .memory import MemoryTransport
from .stdio import StdioTransport
from .streamable_http import StreamableHttpTransport

__all__ = [
    "LegacySseTransport",
    "MemoryTransport",
    "StdioTransport",
    "StreamableHttpTransport",
    "Transport",
]
