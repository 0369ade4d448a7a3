"""The shapes a JSON-RPC peer's users name: where messages go (`Outbound`), how one of our
requests is sent (`CallOptions`), and how an incoming method is served (`MethodEntry`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .jsonrpc import JsonObject, RequestId

if TYPE_CHECKING:
    from .inbound import Inbound

CANCELLED = "notifications/cancelled"
PROGRESS = "notifications/progress"

#: Called with the params of each notifications/progress for one of our requests.
ProgressCallback = Callable[[JsonObject], object]
#: on_answer(result, error): the answer to one of our requests (error None: it succeeded).
AnswerCallback = Callable[[JsonObject | None, Exception | None], object]


class Outbound(Protocol):
    """Where a peer's messages go. `related` names the request a message belongs to (the
    response to it, or progress, logs and requests made while serving it) so a transport
    with several streams can put it on that request's stream; for a reply to a message that
    had no usable id (an invalid message, a batch) it is the `origin` the transport passed
    to `receive`. Server transports queue and return None: the hot path never awaits.
    A transport whose writes are asynchronous (a client's HTTP POST) returns an awaitable,
    which raises if the message could not be delivered."""

    def send(
        self, message: JsonObject | list[JsonObject], related: Hashable | None = None
    ) -> Awaitable[None] | None: ...


@dataclass(frozen=True, slots=True)
class CallOptions:
    """How to send one request of ours."""

    #: Seconds to wait for the answer; then the request is abandoned (see cancel_on_abandon).
    timeout: float | None = None
    #: Receives notifications/progress for this request (a progressToken is added for it).
    on_progress: ProgressCallback | None = None
    #: `_meta` to send with the request (a relay forwards its caller's here).
    meta: JsonObject | None = None
    #: Tell the peer with notifications/cancelled when we stop waiting (timeout, cancelled).
    cancel_on_abandon: bool = True
    #: The incoming request this one is made on behalf of (routes it onto that request's stream).
    related_request_id: RequestId | None = None
    #: Send under this id (from `peer.new_request_id()`) instead of a fresh one, so the caller
    #: knows it beforehand: a relay ties the peer's requests that name it back to its caller.
    request_id: RequestId | None = None


DEFAULT_OPTIONS = CallOptions()


#: A handler of an incoming request. Concurrent handlers take (peer, params, ctx) and return
#: an awaitable, or Ready(result) when they could answer without waiting; inline handlers
#: take (peer, params, None), return the result and must never wait.
Handler = Callable[[Any, JsonObject, Any], Any]


@dataclass(frozen=True, slots=True)
class MethodEntry:
    handler: Handler
    #: Answered on the spot: no task, never held up by a slow call.
    inline: bool = False
    #: The context class for requests this entry serves (default: the peer's own).
    context_class: type[Inbound] | None = None


MethodTable = dict[str, MethodEntry]

#: Picks, for a peer that serves two protocol eras, the entry serving a request of the
#: other era: called with (method, the request's `_meta`) for every request that carries
#: `_meta`, it returns that entry, or None to leave the request to the method table.
Claim = Callable[[str, JsonObject], MethodEntry | None]
