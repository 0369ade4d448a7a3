"""The server library: define MCP servers in a few typed lines."""

from ..core.context import RequestContext as Context
from ..core.provider import ResourceNotFound
from .app import Server
from .content import (
    Audio,
    Content,
    EmbeddedResource,
    Image,
    ResourceContents,
    ResourceLink,
    Text,
    ToolResult,
)
from .errors import ToolError
from .lowlevel import McpHandler, serve_handler
from .prompts import Message

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
    "serve_handler",
]
