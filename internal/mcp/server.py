"""ServerCore: what every session of one server shares (specs/design.md, "Sessions and the
server")."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .extensions import Extension, Served, overrides
from .flow import Flow
from .jsonrpc import JsonObject
from .methods import DEFAULT_METHODS, direct
from .methods.pagination import EncodedPages
from .methods.stateless import STATELESS_ENTRY, STATELESS_ONLY, claim_for, claim_stateless
from .peer import Claim, MethodEntry, MethodTable
from .provider import Provider
from .ready import Ready
from .request_meta import TASKS_EXTENSION
from .request_state import DEFAULT_TTL_SECONDS, RequestStateCodec, generate_key
from .session import Outbound, ServerSession, StatelessSession
from .skills import SKILLS_EXTENSION, skills_settings
from .subscriptions import SubscriptionHub
from .tasks import TaskRecord, TaskStore

if TYPE_CHECKING:
    from .context import RequestContext
    from .routing_headers import ParamHeader

CacheScope = Literal["public", "private"]
#: Makes the server's lifespan: entered once when the server starts, exited when it stops;
#: what it yields is `lifespan_context`, which every request's context reaches.
Lifespan = Callable[[], AbstractAsyncContextManager[Any]]

log = logging.getLogger("codex_mcp.server")
E = TypeVar("E", bound=Extension)


class ServerCore:
    """A server, free of transports: stdio serves one session with it, HTTP many.

    ```python
    core = ServerCore(provider, name="demo", version="1.0")
    await core.start()                      # the provider's lifespan begins
    session = core.open_session(outbound)   # one per connection
    session.receive(message)                # ... answers go to outbound.send
    await session.aclose()                  # the session's teardown, awaited
    await core.aclose()                     # every session, then the provider, stopped
    ```
    """

    def __init__(
        self,
        provider: Provider,
        *,
        name: str,
        version: str,
        title: str | None = None,
        instructions: str | None = None,
        page_size: int = 1000,
        server_info_extra: JsonObject | None = None,
        request_state_keys: Sequence[bytes | str] | None = None,
        request_state_ttl: float = DEFAULT_TTL_SECONDS,
        cache_ttl_ms: int = 0,
        cache_scope: CacheScope = "private",
        lifespan: Lifespan | None = None,
    ) -> None:
        self.provider = provider
        self.lifespan = lifespan
        #: What the lifespan yielded (None without one, or before the server starts).
        self.lifespan_context: Any = None
        self._lifespan_exit = contextlib.AsyncExitStack()
        self.server_info: JsonObject = {"name": name, "version": version}
        if title:
            self.server_info["title"] = title
        if server_info_extra:
            self.server_info.update(server_info_extra)
        self.instructions = instructions
        self.page_size = page_size
        #: What extends this core (`extend`), and whether it is composed (it serves).
        self._extensions: list[Extension] = []
        self._composed = False
        #: The extensions told of sessions opening and ending.
        self._watchers: list[Extension] = []
        #: The method table the sessions dispatch by (composed from the extensions).
        self._methods: MethodTable = {**DEFAULT_METHODS, **STATELESS_ONLY}
        #: Methods not in the table: direct tool calls (methods/direct.py).
        self.fallback_handler: Any = direct.direct_tool_call
        #: The 2026-07-28 era's requests, chosen per request (see methods/stateless.py).
        self.stateless_claim: Claim = claim_stateless
        #: Serves every request of a stateless HTTP exchange (StatelessSession).
        self.stateless_entry: MethodEntry = STATELESS_ENTRY
        #: The provider's operations as every method handler reaches them (extensions.py).
        self.served = Served(provider, ())
        #: Cache hints of stateless lists, reads and discover (a resource may set its own).
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope: CacheScope = cache_scope
        self.request_state_keys: Sequence[bytes | str] = list(request_state_keys or [])
        self.request_state_ttl = request_state_ttl
        self._request_states: RequestStateCodec | None = None
        self.subscriptions = SubscriptionHub()
        #: Paused while a transport's writer is over its bound (flow.py).
        self.flow = Flow()
        #: Where provider events go when replicas share the sessions (a shared store):
        #: it reaches every session and listener of every replica, so this process's own
        #: delivery (`deliver_to_sessions`, `deliver_to_listeners`) is not used. None: this
        #: process's sessions and listeners are all there is.
        self.relay: Callable[[str, str | None], None] | None = None
        #: Accepts a requestState nonce once across replicas (a shared replay cache):
        #: awaited with (nonce, expiry in epoch seconds), False for a replay. None: the
        #: codec's own, per-process cache.
        self.shared_nonces: Callable[[str, float], Awaitable[bool]] | None = None
        self.tasks = TaskStore()
        self.tasks.add_listener(self._on_task_changed)
        #: What stateless requests share over HTTP, where no connection holds them.
        self.stateless_state: dict[Hashable, Any] = {}
        self.stateless_cleanup = contextlib.AsyncExitStack()
        self._background: set[asyncio.Task[Any]] = set()
        self._param_headers: dict[str, tuple[object, tuple[ParamHeader, ...]]] = {}
        #: tools/list pages, encoded once per listing (emptied by any provider event).
        self.encoded_tools = EncodedPages()
        #: The listing `param_headers` last indexed by name, and that index.
        self._tools_by_name: tuple[object, dict[str, JsonObject]] | None = None
        self._sessions: weakref.WeakSet[ServerSession] = weakref.WeakSet()
        self._teardowns: set[asyncio.Task[None]] = set()
        self._started = False
        self._stopped = False
        #: The loop the server runs on (set by `start`): provider events raised in another
        #: thread (a sync tool runs in a worker thread) are handed to it.
        self._loop: asyncio.AbstractEventLoop | None = None
        provider.add_listener(self._on_provider_event)

    # -- extensions (extensions.py) ----------------------------------------------
    def extend(self, extension: Extension) -> None:
        """Declare an extension; before the core serves (start, or its first session)."""
        if self._composed:
            raise RuntimeError(
                f"{type(extension).__name__}: this server core is serving already; declare "
                "its extensions before it starts or opens a session"
            )
        self._extensions.append(extension)

    def extension(self, kind: type[E]) -> E | None:
        """The extension of type `kind` declared on this core, if any."""
        return next((e for e in self._extensions if isinstance(e, kind)), None)

    @property
    def methods(self) -> Mapping[str, MethodEntry]:
        """The method table (read-only: methods come from extensions, `extend`)."""
        return MappingProxyType(self._methods)

    def compose(self) -> None:
        """Build what the sessions dispatch by from the extensions, once (idempotent):
        their methods, `initialize` with their answers and waits, every entry wrapped by
        their `request`, then the operations folded (`refold`)."""
        if self._composed:
            return
        ordered = self._ordered()
        table = dict(self._methods)
        for extension in ordered:
            for name, entry in extension.methods().items():
                if name in table and name not in extension.replaces:
                    raise ValueError(
                        f"{type(extension).__name__} adds the method {name!r}, which this "
                        "server serves already (declare it in `replaces` to take it over)"
                    )
                table[name] = entry
        table["initialize"] = _initialize_entry(table["initialize"], ordered)
        wrappers = [e for e in ordered if overrides(e, "request")]

        def wrapped(entry: MethodEntry, method: str | None) -> MethodEntry:
            for extension in wrappers:
                entry = extension.request(method, entry)
            return entry

        if wrappers:
            stateless = self.stateless_entry = wrapped(STATELESS_ENTRY, None)
            self.stateless_claim = claim_for(stateless)
            table = {
                name: stateless if entry is STATELESS_ENTRY else wrapped(entry, name)
                for name, entry in table.items()
            }
            self.fallback_handler = wrapped(MethodEntry(self.fallback_handler), None).handler
        self._methods = table
        hooks = ("session_opened", "session_ended", "stateless_opened")
        self._watchers = [e for e in ordered if any(overrides(e, hook) for hook in hooks)]
        self._composed = True  # only now: a mistake above leaves nothing half composed
        self.refold()

    def refold(self) -> None:
        """Fold the extensions' operation interceptors around the provider again (one of them
        now adds or drops one); the requests in flight keep the steps they started with."""
        self.served = Served(self.provider, self._ordered() if self._composed else ())

    def _ordered(self) -> list[Extension]:
        return sorted(self._extensions, key=lambda extension: extension.stage)

    # -- lifespan --------------------------------------------------------------
    async def start(self) -> None:
        """Compose, enter the lifespan, start the provider, then the extensions (which may
        refuse the start); idempotent. Transports call it before serving."""
        self._loop = asyncio.get_running_loop()
        self.compose()
        if not self._started:
            self._started = True
            if self.lifespan is not None:
                self.lifespan_context = await self._lifespan_exit.enter_async_context(
                    self.lifespan()
                )
            await self.provider.start()
            for extension in self._ordered():
                await extension.start()

    async def aclose(self) -> None:
        """End every session, wait for their teardown, then stop the provider."""
        self.end_subscriptions()
        self.tasks.cancel_all()
        for session in list(self._sessions):
            session.close()
        for task in list(self._background):
            task.cancel()
        if self._teardowns:
            await asyncio.gather(*list(self._teardowns), return_exceptions=True)
        try:
            await self.stateless_cleanup.aclose()
        except Exception:
            log.exception("the stateless scope's cleanup failed")
        if not self._stopped:
            self._stopped = True
            try:
                await self.provider.stop()
            finally:
                for extension in self._extensions:
                    try:
                        await extension.aclose()
                    except Exception:
                        log.exception("the extension %s failed while closing", extension)
                try:  # last: what the lifespan holds outlives every session and the provider
                    await self._lifespan_exit.aclose()
                except Exception:
                    log.exception("the server's lifespan failed while exiting")

    # -- sessions --------------------------------------------------------------
    def open_session(self, outbound: Outbound, session_id: str | None = None) -> ServerSession:
        self.compose()
        session = ServerSession(self, outbound, session_id)
        self._sessions.add(session)
        self.provider.open_session(session)
        for watcher in self._watchers:
            watcher.session_opened(session)
        return session

    def end_session(self, session: ServerSession) -> asyncio.Task[None] | None:
        """Called by a closing session: forget it and start its teardown (None: there
        is nothing to tear down)."""
        self._sessions.discard(session)
        for watcher in self._watchers:
            watcher.session_ended(session)
        if not session.has_cleanup and not self.provider.closes_sessions():
            return None
        try:
            task = asyncio.get_running_loop().create_task(self._teardown(session))
        except RuntimeError:  # no loop (a session closed at interpreter exit): nothing to run
            return None
        self._teardowns.add(task)
        task.add_done_callback(self._teardowns.discard)
        return task

    async def _teardown(self, session: ServerSession) -> None:
        try:
            await self.provider.close_session(session)
        except Exception:
            log.exception("closing a session in the provider failed", extra=session.log_extra)
        try:
            await session.run_cleanup()
        except Exception:
            log.exception("a session's cleanup failed", extra=session.log_extra)

    @property
    def sessions(self) -> list[ServerSession]:
        return list(self._sessions)

    def open_stateless(
        self,
        outbound: Outbound,
        *,
        principal: str | None = None,
        routing_headers: Mapping[str, str] | None = None,
    ) -> StatelessSession:
        """A peer for one stateless HTTP exchange (not a session: the core keeps no track)."""
        self.compose()
        for watcher in self._watchers:
            watcher.stateless_opened()
        return StatelessSession(
            self, outbound, principal=principal, routing_headers=routing_headers
        )

    def start_soon(self, work: Awaitable[Any]) -> None:
        """Run something server-wide in the background; cancelled when the server stops."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def end_subscriptions(self) -> None:
        """Answer every open subscriptions/listen (shutting down, or stdin closed)."""
        self.subscriptions.close_all()

    def roots_changed(self, session: ServerSession) -> None:
        try:
            self.provider.roots_changed(session)
        except Exception:
            log.exception("the provider failed on roots_changed", extra=session.log_extra)

    # -- what the server offers ------------------------------------------------
    def capabilities(self) -> JsonObject:
        features = self.provider.features
        caps: JsonObject = {"logging": {}}
        if "tools" in features:
            caps["tools"] = {"listChanged": True}
        if "resources" in features:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if "prompts" in features:
            caps["prompts"] = {"listChanged": True}
        if "completions" in features:
            caps["completions"] = {}
        if "skills" in features:  # both eras: the extension rides on the resources capability
            caps["extensions"] = {SKILLS_EXTENSION: skills_settings(features)}
        return caps

    def stateless_capabilities(self) -> JsonObject:
        """What server/discover declares: the legacy set, plus the tasks extension."""
        caps = self.capabilities()
        return {**caps, "extensions": {**caps.get("extensions", {}), TASKS_EXTENSION: {}}}

    @property
    def request_states(self) -> RequestStateCodec:
        """Signs and checks the requestState of input-required rounds. Without configured
        keys, a random key of this process: a round then cannot finish on another one."""
        if self._request_states is None:
            keys = self.request_state_keys or [generate_key()]
            self._request_states = RequestStateCodec(keys, ttl_seconds=self.request_state_ttl)
        return self._request_states

    @property
    def request_state_key_is_ephemeral(self) -> bool:
        """No keys were given: this process signs with a random key only it holds."""
        return not self.request_state_keys

    async def param_headers(self, tool: str, ctx: RequestContext) -> tuple[ParamHeader, ...]:
        """The `x-mcp-header` arguments of a tool (cached per definition; the listing is
        indexed by name once per listing, not searched per call)."""
        listing = await self.served.list_tools(ctx)
        indexed = self._tools_by_name
        if indexed is None or indexed[0] is not listing:
            by_name: dict[str, JsonObject] = {}
            for entry in listing:
                name = entry.get("name")
                if type(name) is str:
                    by_name.setdefault(name, entry)  # the first of a name, as a search finds
            indexed = self._tools_by_name = (listing, by_name)
        definition = indexed[1].get(tool)
        if definition is None:
            return ()
        schema = definition.get("inputSchema")
        cached = self._param_headers.get(tool)
        if cached is not None and cached[0] is schema:
            return cached[1]
        # Only a 2026-07-28 call over HTTP has these headers: stdio never loads their module.
        from .routing_headers import param_headers

        try:
            found = param_headers(schema)
        except ValueError as exc:
            log.warning("tool %s: %s; its Mcp-Param headers are not checked", tool, exc)
            found = ()
        self._param_headers[tool] = (schema, found)
        return found

    def _on_task_changed(self, record: TaskRecord) -> None:
        self.subscriptions.task_changed(record.id, record.detailed)

    def _on_provider_event(self, kind: str, uri: str | None) -> None:
        loop = self._loop
        if loop is not None and not _running_in(loop):
            # Raised in another thread (a sync tool): sessions and streams live on the loop.
            # The thread waits until the loop has sent it, so a call's list_changed leaves
            # before the call's answer whatever the loop's scheduling (specs/mcp-2026-07-28.md,
            # "Ordering": on 3.14 the answer can otherwise overtake it).
            delivered: concurrent.futures.Future[None] = concurrent.futures.Future()

            def deliver() -> None:
                try:
                    self._on_provider_event(kind, uri)
                finally:
                    delivered.set_result(None)

            try:
                loop.call_soon_threadsafe(deliver)
            except RuntimeError:  # the loop closed: nobody to tell
                return
            if loop.is_running():  # a stopped loop runs it when (if) it runs again
                with contextlib.suppress(concurrent.futures.TimeoutError):
                    delivered.result(_HANDOFF_WAIT_SECONDS)
            return
        self.encoded_tools.clear()  # a listing may have changed where it is kept
        self._tools_by_name = None
        if self.relay is not None:
            self.relay(kind, uri)
            return
        self.deliver_to_listeners(kind, uri)
        self.deliver_to_sessions(kind, uri)

    def deliver_to_listeners(self, kind: str, uri: str | None) -> None:
        """A provider event, to this process's subscriptions/listen streams."""
        if kind == "resource_updated":
            if uri is not None:
                self.subscriptions.resource_updated(uri)
        else:
            self.subscriptions.list_changed(kind)

    def deliver_to_sessions(self, kind: str, uri: str | None) -> None:
        """A provider event, to this process's legacy sessions that follow it."""
        for session in list(self._sessions):
            if session.closed:
                continue
            if kind == "resource_updated":
                if uri in session.subscriptions:
                    session.notify("notifications/resources/updated", {"uri": uri})
            elif session.initialized:
                session.list_changed(kind)


def _initialize_entry(entry: MethodEntry, extensions: Sequence[Extension]) -> MethodEntry:
    """`initialize` with what the extensions add to its answer and what it waits for."""
    contributors = [e for e in extensions if overrides(e, "initialize")]
    gates = [e for e in extensions if overrides(e, "ready")]
    if not contributors and not gates:
        return entry
    if not entry.inline:
        raise ValueError("extensions add to an initialize answered on the spot (inline) only")
    handler = entry.handler

    def answer(session: ServerSession, params: JsonObject, _: Any = None) -> JsonObject:
        result: JsonObject = handler(session, params, None)
        for extension in contributors:
            result = extension.initialize(session, params, result)
        return result

    if not gates:
        return MethodEntry(answer, inline=True)

    def initialize(session: ServerSession, params: JsonObject, ctx: Any) -> Any:
        waits = [w for extension in gates if (w := extension.ready(session)) is not None]
        if not waits:
            return Ready(answer(session, params))
        return _answer_after(waits, answer, session, params)

    return MethodEntry(initialize)


async def _answer_after(
    waits: list[Awaitable[None]],
    answer: Callable[[ServerSession, JsonObject], JsonObject],
    session: ServerSession,
    params: JsonObject,
) -> JsonObject:
    for wait in waits:
        await wait
    return answer(session, params)


#: How long a thread raising a provider event waits for the loop to send it: a loop turn,
#: unless the loop is stalled, and then the event still goes out, only maybe after the answer.
_HANDOFF_WAIT_SECONDS = 5.0


def _running_in(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:  # no loop runs in this thread
        return False


__all__ = ["ServerCore"]
