"""What a server handler can do while it serves one request.

A RequestContext talks back to the client through the session that received
the request: progress for the request's progress token, log messages, and
server-to-client requests (sampling, elicitation, roots), each tagged with the
request it belongs to so an HTTP transport can put it on that request's stream.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from .jsonrpc import JsonObject
from .peer import CallOptions, Inbound

if TYPE_CHECKING:
    from .session import ServerSession

LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
LOG_LEVEL_RANK: Final = {name: rank for rank, name in enumerate(LOG_LEVELS)}


class RequestContext(Inbound):
    """The context of one request a server session serves."""

    __slots__ = ()
    peer: ServerSession

    @property
    def session(self) -> ServerSession:
        return self.peer

    @property
    def client_capabilities(self) -> JsonObject:
        return self.session.client_capabilities

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        self.session.log(level, data, logger, related_request_id=self.request_id)

    async def debug(self, data: Any, logger: str | None = None) -> None:
        await self.log("debug", data, logger)

    async def info(self, data: Any, logger: str | None = None) -> None:
        await self.log("info", data, logger)

    async def warning(self, data: Any, logger: str | None = None) -> None:
        await self.log("warning", data, logger)

    async def error(self, data: Any, logger: str | None = None) -> None:
        await self.log("error", data, logger)

    async def request(
        self,
        method: str,
        params: JsonObject | None = None,
        timeout: float | CallOptions | None = None,
    ) -> JsonObject:
        """A server-to-client request tied to this request; returns the client's result.
        Takes a timeout in seconds, or full CallOptions."""
        options = timeout if isinstance(timeout, CallOptions) else CallOptions(timeout=timeout)
        return await super().request(method, params, options)

    async def elicit(
        self, message: str, requested_schema: JsonObject, timeout: float | None = None
    ) -> JsonObject:
        """elicitation/create: returns {"action": "accept"|"decline"|"cancel", "content": {...}}."""
        return await self.request(
            "elicitation/create",
            {"message": message, "requestedSchema": requested_schema},
            timeout,
        )

    async def sample(
        self,
        messages: list[JsonObject] | str,
        max_tokens: int = 1000,
        timeout: float | None = None,
        **options: Any,
    ) -> JsonObject:
        """sampling/createMessage: a plain string becomes one user text message."""
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: JsonObject = {"messages": messages, "maxTokens": max_tokens}
        for key, value in options.items():
            params[_camel(key)] = value
        return await self.request("sampling/createMessage", params, timeout)

    def close_stream(self) -> None:
        """Ask the transport to end this request's response stream now (SSE polling,
        SEP-1699); the client resumes with Last-Event-ID. Transports without streams
        ignore it."""
        close = getattr(self.session.outbound, "close_request_stream", None)
        if close is not None and self.request_id is not None:
            close(self.request_id)

    async def list_roots(self, timeout: float | None = None) -> list[JsonObject]:
        result = await self.request("roots/list", None, timeout)
        roots = result.get("roots", [])
        return roots if isinstance(roots, list) else []


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
