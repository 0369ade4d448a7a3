"""Resource subscriptions carried to the children, and their updates back (specs/gateway.md,
"Subscriptions"). A front follows a resource with `resources/subscribe` (legacy) or a
`subscriptions/listen` (2026-07-28); either way each child URI is followed once, in the way
the child's revision has: `resources/subscribe` for a child we initialized, a listen of our
own for a 2026-07-28-only child. A per-session child's updates reach its owner's listens
only; a shared child's go through the core to whoever follows that URI."""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Final

from codex_mcp.client.errors import McpClientError
from codex_mcp.core.calls import CallOptions
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, JsonObject
from codex_mcp.core.subscriptions import LIST_FLAGS, Subscription

from ..children.child import Child, Owner
from ..children.connection import Connection
from .calls import child_error

log = logging.getLogger("codex_mcp.gateway")

#: Listens the gateway follows at once (each stream is an open request of a front).
MAX_LISTENS: Final = 1024
#: Resource URIs one listen may name.
MAX_LISTEN_URIS: Final = 256
#: URIs followed on one child at once, over every front.
MAX_CHILD_URIS: Final = 1024

Route = tuple[Child, str]
Spawn = Callable[[Awaitable[Any]], None]


class _Listen:
    """What the gateway keeps of one front listen: whose it is, and the child URIs it holds."""

    __slots__ = ("held", "owner")

    def __init__(self, owner: Owner | None) -> None:
        self.owner = owner
        #: (child, its URI, the connection it was subscribed on): a child that restarted
        #: since forgot it, and its count then belongs to newer holders.
        self.held: list[tuple[Child, str, Connection]] = []


class _ChildListen:
    """A child's subscriptions on one of its connections: how many fronts follow each of its
    URIs (each is subscribed on the child once), and for a connection spoken to in
    2026-07-28, its own listen: one request following the lists the child offers to change
    (so its `list_changed` reaches the gateway as a legacy child's does) and every URI held,
    sent again when that filter changes."""

    def __init__(self, name: str, connection: Connection) -> None:
        self.name = name
        self.connection = connection
        self.counts: dict[str, int] = {}
        self.task: asyncio.Task[JsonObject] | None = None
        self.sent: JsonObject | None = None

    def follow(self) -> None:
        wanted = self._filter()
        if wanted == self.sent and self.task is not None and not self.task.done():
            return
        if self.task is not None:
            self.task.cancel()  # the child is told (notifications/cancelled, or stream closed)
            self.task = None
        self.sent = wanted
        if not wanted:
            return
        listen = self.connection.session.request(
            "subscriptions/listen", {"notifications": wanted}, CallOptions()
        )
        self.task = asyncio.ensure_future(listen)
        self.task.add_done_callback(self._ended)

    def _filter(self) -> JsonObject:
        wanted: JsonObject = {}
        for flag, kind in LIST_FLAGS.items():
            offer = self.connection.capabilities.get(kind)
            if isinstance(offer, dict) and offer.get("listChanged"):
                wanted[flag] = True
        if self.counts:
            wanted["resourceSubscriptions"] = sorted(self.counts)
        return wanted

    def _ended(self, task: asyncio.Task[JsonObject]) -> None:
        error = None if task.cancelled() else task.exception()
        if error is not None and not self.connection.session.closed:
            log.info("%s: its subscriptions/listen ended: %s", self.name, error)


class ResourceSubscriptions:
    """Every front subscription the gateway carries to its children."""

    def __init__(self, spawn: Spawn) -> None:
        self._spawn = spawn
        self._listens: dict[Subscription, _Listen] = {}
        #: A per-session owner's open listens (where its children's events go).
        self._by_owner: dict[Owner, set[Subscription]] = {}
        #: Per connection to a child: what fronts follow on it (a restarted child forgot
        #: what the last one held).
        self._on: weakref.WeakKeyDictionary[Connection, _ChildListen] = weakref.WeakKeyDictionary()

    def __len__(self) -> int:
        return len(self._listens)

    def held(self, connection: Connection | None) -> dict[str, int]:
        """How many fronts follow each URI held on `connection`."""
        held = self._on.get(connection) if connection is not None else None
        return dict(held.counts) if held is not None else {}

    # -- one child URI, held by any number of fronts ---------------------------------
    def _held(self, child: Child, connection: Connection) -> _ChildListen:
        held = self._on.get(connection)
        if held is None:
            held = self._on[connection] = _ChildListen(child.name, connection)
        return held

    async def acquire(
        self, child: Child, inner: str, connection: Connection | None = None
    ) -> Connection | None:
        """One more front follows `inner` on `child` (on `connection`, by default its own);
        the first is subscribed on the child. The connection it holds it on; None when the
        child cannot be subscribed to (down, or no `resources.subscribe`)."""
        connection = connection or child.connection
        if connection is None or not _can_subscribe(connection):
            return None
        counts = self._held(child, connection).counts
        count = counts.get(inner, 0)
        if count == 0 and len(counts) >= MAX_CHILD_URIS:
            raise McpError(
                INVALID_REQUEST,
                f"too many resource subscriptions on {child.name!r} (at most {MAX_CHILD_URIS})",
            )
        counts[inner] = count + 1
        if count == 0:
            try:
                await self._send(child, connection, inner, subscribe=True)
            except BaseException:
                if counts.get(inner, 0) > 1:
                    counts[inner] -= 1
                else:
                    counts.pop(inner, None)
                raise
        return connection

    def release(
        self, child: Child, inner: str, connection: Connection | None = None
    ) -> Awaitable[None] | None:
        """One front less follows `inner`; the last one's going unsubscribes on the child
        (returned, to await or run in the background)."""
        connection = connection or child.connection
        held = self._on.get(connection) if connection is not None else None
        count = held.counts.get(inner, 0) if held is not None else 0
        if held is None or connection is None or count == 0:  # never held, or restarted since
            return None
        if count > 1:
            held.counts[inner] = count - 1
            return None
        del held.counts[inner]
        return self._send(child, connection, inner, subscribe=False)

    def follow_child(self, child: Child) -> None:
        """A child spoken to in 2026-07-28 is up (or listed again): its listen follows what
        it offers to change, and the URIs held on it (opened once per connection)."""
        connection = child.connection
        if connection is not None and connection.session.stateless is not None:
            self._held(child, connection).follow()

    async def _send(
        self, child: Child, connection: Connection, inner: str, *, subscribe: bool
    ) -> None:
        session = connection.session
        if session.stateless is not None:  # 2026-07-28 only: no resources/subscribe there
            self._held(child, connection).follow()
            return
        method = "resources/subscribe" if subscribe else "resources/unsubscribe"
        try:
            await session.request(method, {"uri": inner}, CallOptions(child.list_timeout))
        except McpClientError as exc:  # the child's error, as every request's is told
            raise child_error(child, exc, None) from None

    # -- 2026-07-28 listens ------------------------------------------------------------
    async def listen_started(
        self,
        subscription: Subscription,
        owner: Owner | None,
        route_of: Callable[[str], Route | None],
        modern: bool,
    ) -> None:
        """Subscribe on the children serving the listen's URIs (URIs no child serves are
        followed by nobody: nothing will come for them). The listen is held where the
        front's requests to a child go (Child.connection_for: for a 2026-07-28 front, a
        dual-revision child's lane), on the process the front's calls change."""
        if len(subscription.resources) > MAX_LISTEN_URIS:
            raise McpError(
                INVALID_PARAMS,
                f"Invalid params: at most {MAX_LISTEN_URIS} resourceSubscriptions per listen",
            )
        if len(self._listens) >= MAX_LISTENS:
            raise McpError(
                INVALID_REQUEST,
                f"the gateway follows {MAX_LISTENS} listens already; close one and retry",
            )
        entry = self._listens[subscription] = _Listen(owner)
        if owner is not None:
            self._by_owner.setdefault(owner, set()).add(subscription)
        for uri in sorted(subscription.resources):
            route = route_of(uri)
            if route is None:
                continue
            child, inner = route
            try:
                connection = await child.connection_for(modern)
                held = await self.acquire(child, inner, connection) if connection else None
            except McpError as error:  # refused: the listen goes on for the others
                log.info("%s: subscribing to %s failed: %s", child.name, inner, error.message)
                continue
            except Exception as error:
                log.info("%s: subscribing to %s failed: %s", child.name, inner, error)
                continue
            if held is not None:
                entry.held.append((child, inner, held))

    def listen_ended(self, subscription: Subscription) -> None:
        entry = self._listens.pop(subscription, None)
        if entry is None:
            return
        owner = entry.owner
        if owner is not None:
            mine = self._by_owner.get(owner)
            if mine is not None:
                mine.discard(subscription)
                if not mine:
                    del self._by_owner[owner]
        for child, inner, connection in entry.held:
            if connection.session.closed:
                continue  # restarted (or stopped) since: it holds nothing of ours
            going = self.release(child, inner, connection)
            if going is not None:
                self._spawn(_quietly(child, inner, going))

    # -- a per-session child's events, to its owner's listens -----------------------------
    def resource_updated(self, owner: Owner, uri: str) -> None:
        for subscription in list(self._by_owner.get(owner, ())):
            if uri in subscription.resources:
                subscription.notify(
                    "notifications/resources/updated", subscription.tagged({"uri": uri})
                )

    def list_changed(self, owner: Owner, kind: str) -> None:
        for subscription in list(self._by_owner.get(owner, ())):
            if kind in subscription.kinds:
                subscription.notify(f"notifications/{kind}/list_changed", subscription.tagged())


def _can_subscribe(connection: Connection) -> bool:
    resources = connection.capabilities.get("resources")
    return isinstance(resources, dict) and bool(resources.get("subscribe"))


async def _quietly(child: Child, inner: str, going: Awaitable[None]) -> None:
    try:
        await going
    except Exception as error:  # the child is gone or refuses: nothing left to undo
        log.debug("%s: unsubscribing from %s failed: %s", child.name, inner, error)
