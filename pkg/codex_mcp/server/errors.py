"""What the server library raises: a tool's own failure (`ToolError`, public), arguments or
results that do not fit a tool's declaration. All derive from the family root
(`codex_mcp.core.errors`); a protocol error a handler means to answer with is an `McpError`."""

from __future__ import annotations

from codex_mcp.core.errors import CodexMcpError


class ToolError(CodexMcpError):
    """Raise in a tool to report a failure to the model as an isError result, message as is."""


class SignatureMismatch(CodexMcpError, ValueError):
    """Arguments that do not fit the signature; the message names each bad field."""


class OutputSchemaError(CodexMcpError, ValueError):
    pass


class NeedsPydantic(CodexMcpError):
    """The annotation needs pydantic proper."""
