"""Inbound: the context of one incoming request, on either side of a connection."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from .calls import DEFAULT_OPTIONS, PROGRESS, CallOptions
from .jsonrpc import JsonObject, RequestId

if TYPE_CHECKING:
    from .deferred import Deferred
    from .peer import JsonRpcPeer


class Inbound:
    """The context of one incoming request: which request it is, and a way back to the
    peer tied to it. Sessions subclass it with their protocol's helpers."""

    __slots__ = (
        "_last_progress",
        "cancelled",
        "meta",
        "method",
        "params",
        "peer",
        "related_request_id",
        "request_id",
        "task",
    )

    def __init__(
        self,
        peer: JsonRpcPeer,
        request_id: RequestId | None,
        method: str,
        meta: JsonObject | None,
        related_request_id: Hashable | None = None,
        params: JsonObject | None = None,
    ) -> None:
        self.peer = peer
        self.request_id = request_id
        self.method = method
        self.meta = meta
        #: The request's params as received (read them; never write them).
        self.params = params
        #: Set when the peer cancels this request; a handler in a thread can poll it.
        self.cancelled = False
        #: What the answer comes from: the request's task, or the Deferred its handler
        #: returned (None when it is answered on the spot). Cancelling it stops the request.
        self.task: asyncio.Task[Any] | Deferred | None = None
        #: The request of ours whose stream carried this one (a client learns which of its
        #: calls a server request belongs to); None when the transport cannot tell.
        self.related_request_id = related_request_id
        self._last_progress: float | None = None

    @property
    def progress_token(self) -> str | int | None:
        meta = self.meta
        return meta.get("progressToken") if meta else None

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send notifications/progress if the peer asked for it; progress must increase."""
        token = self.progress_token
        if token is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(f"progress must increase: {progress} after {self._last_progress}")
        self._last_progress = progress
        params: JsonObject = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self.peer.notify(PROGRESS, params, self.request_id)
        await asyncio.sleep(0)  # let the transport flush while a long handler keeps going

    async def request(
        self, method: str, params: JsonObject | None = None, options: CallOptions | None = None
    ) -> JsonObject:
        """Send a request to the peer on behalf of this one."""
        options = options or DEFAULT_OPTIONS
        if options.related_request_id is None and self.request_id is not None:
            options = dataclasses.replace(options, related_request_id=self.request_id)
        return await self.peer.request(method, params, options)

    def notify(self, method: str, params: JsonObject | None = None) -> None:
        self.peer.notify(method, params, self.request_id)
