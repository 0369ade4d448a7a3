"""What a server handler can do while it serves one request: progress, logs and
server-to-client requests, each tied to that request (specs/design.md, "The peer")."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .elicitation import checked_elicitation
from .jsonrpc import JsonObject
from .peer import CallOptions, Inbound
from .versions import Revision

if TYPE_CHECKING:
    from .session import ServerSession

#: The scopes of the caller's OAuth grant, set by the HTTP transport in the request's own
#: task, which the handler's task copies (decision 47); None off HTTP OAuth.
CALLER_SCOPES: Final[ContextVar[frozenset[str] | None]] = ContextVar(
    "codex_mcp_caller_scopes", default=None
)
#: The OAuth subject of the request's token, set beside CALLER_SCOPES; None without OAuth.
CALLER_SUBJECT: Final[ContextVar[str | None]] = ContextVar("codex_mcp_caller_subject", default=None)


class RequestContext(Inbound):
    """The context of one request a server session serves."""

    __slots__ = ()
    peer: ServerSession
    #: The era of this request: the context class says it (StatelessContext's is STATELESS).
    revision: ClassVar[Revision] = Revision.LEGACY

    @property
    def session(self) -> ServerSession:
        return self.peer

    @property
    def client_capabilities(self) -> JsonObject:
        return self.session.client_capabilities

    @property
    def task_request(self) -> Any:
        """2025-11-25: the `task` of a task-augmented tools/call, as sent (None: a plain
        call, or another request). A 2026-07-28 call may become a task otherwise
        (`can_create_task`)."""
        params = self.params
        return params.get("task") if params is not None and self.method == "tools/call" else None

    @property
    def caller_scopes(self) -> frozenset[str] | None:
        """The scopes of the caller's OAuth grant for this request; None when the caller
        did not authenticate with OAuth (CALLER_SCOPES)."""
        return CALLER_SCOPES.get()

    @property
    def lifespan_context(self) -> Any:
        """What the server's lifespan yielded (`Server(lifespan=...)`): the things every
        request shares, such as one HTTP client for all the server's tools."""
        return self.session.core.lifespan_context

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

    async def ask(
        self, method: str, params: JsonObject, timeout: float | None = None, key: str | None = None
    ) -> JsonObject:
        """Ask the client for input (elicitation, sampling, roots). A legacy session sends
        the request and waits for the answer; a 2026-07-28 request answers with an
        input-required result instead (see StatelessContext), where `key` names the input
        request (automatic keys otherwise)."""
        return await self.request(method, params, timeout)

    async def elicit(
        self,
        message: str,
        requested_schema: JsonObject,
        timeout: float | None = None,
        *,
        key: str | None = None,
    ) -> JsonObject:
        """elicitation/create: returns {"action": "accept"|"decline"|"cancel", "content": {...}},
        accepted content checked against `requested_schema` (ElicitationMismatch if not)."""
        answer = await self.ask(
            "elicitation/create",
            {"message": message, "requestedSchema": requested_schema},
            timeout,
            key,
        )
        return checked_elicitation(answer, requested_schema)

    async def sample(
        self,
        messages: list[JsonObject] | str,
        max_tokens: int = 1000,
        timeout: float | None = None,
        *,
        key: str | None = None,
        **options: Any,
    ) -> JsonObject:
        """sampling/createMessage: a plain string becomes one user text message."""
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: JsonObject = {"messages": messages, "maxTokens": max_tokens}
        for name, value in options.items():
            params[_camel(name)] = value
        return await self.ask("sampling/createMessage", params, timeout, key)

    def close_stream(self) -> None:
        """Ask the transport to end this request's response stream now (SSE polling,
        SEP-1699); the client resumes with Last-Event-ID. Transports without streams
        ignore it."""
        close = getattr(self.session.outbound, "close_request_stream", None)
        if close is not None and self.request_id is not None:
            close(self.request_id)

    async def list_roots(
        self, timeout: float | None = None, *, key: str | None = None
    ) -> list[JsonObject]:
        result = await self.ask("roots/list", {}, timeout, key)
        roots = result.get("roots", [])
        return roots if isinstance(roots, list) else []

    # -- what only the 2026-07-28 era does; harmless no-ops for a legacy session ----------
    @property
    def round(self) -> int:
        """Which run of the handler this is: 1, or n for the (n-1)th input-required retry."""
        return 1

    async def once(self, name: str, compute: Callable[[], Any]) -> Any:
        """`compute()` (awaited if it returns an awaitable), run once per request: a
        2026-07-28 handler is re-run from the top on every input-required retry, and its
        value (JSON) is carried to the retries instead of being computed again."""
        value = compute()
        return await value if inspect.isawaitable(value) else value

    @property
    def can_create_task(self) -> bool:
        """Whether this call may become a task (a 2026-07-28 tools/call whose client
        declared the tasks extension)."""
        return False

    @property
    def in_task(self) -> bool:
        """Whether the handler now runs as a task (its request was answered with the
        task handle)."""
        return False

    def run_as_task(
        self, work: Coroutine[Any, Any, JsonObject], *, required: bool = False
    ) -> Awaitable[JsonObject]:
        """`work` (a tool call's coroutine), run as a task when this call may become one
        (see StatelessContext); `required`: a call that cannot do without a task. A legacy
        session has no tasks: the work runs in the request."""
        return work

    async def start_task(self) -> None:
        """Turn this call into a task here (when it may become one): the client gets the
        task handle now, and the rest runs as the task. Input asked before this point is
        asked on the call itself; after it, through the task."""

    def set_cache_hints(self, ttl_ms: int | None = None, scope: str | None = None) -> None:
        """How long (ms) and for whom ("public"/"private") a client may cache this
        request's result; used by 2026-07-28 lists and reads."""


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
