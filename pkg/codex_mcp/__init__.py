"""codex-mcp: a fast, correct Model Context Protocol toolkit for the OpenAI Codex CLI."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# The server library's names load on first use (PEP 562): every module of ours imports this
# package first, and a command that serves no library server (the gateway, the client, lint)
# need not import it, nor the core under it, before it can start its work. They are the
# names of __all__ (below) but __version__.

if TYPE_CHECKING:
    from .server import (
        Audio,
        Content,
        Context,
        EmbeddedResource,
        Image,
        McpHandler,
        Message,
        ResourceContents,
        ResourceLink,
        ResourceNotFound,
        Server,
        Text,
        ToolError,
        ToolResult,
        serve_handler,
    )


def __getattr__(name: str) -> Any:
    if name not in __all__ or name == "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(".server", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "Audio",
    "Content",
    "Context",
    "EmbeddedResource",
    "Image",
    "McpHandler",
    "Message",
    "ResourceContents",
    "ResourceLink",
    "ResourceNotFound",
    "Server",
    "Text",
    "ToolError",
    "ToolResult",
    "__version__",
    "serve_handler",
]
