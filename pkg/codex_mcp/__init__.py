"""codex-mcp: a fast, correct Model Context Protocol toolkit for the OpenAI Codex CLI."""

__version__ = "0.1.0"

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
    Server,
    Text,
    ToolError,
    ToolResult,
    serve_handler,
)

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
    "Server",
    "Text",
    "ToolError",
    "ToolResult",
    "__version__",
    "serve_handler",
]
