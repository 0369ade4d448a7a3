"""Pinning in the gateway (specs/trust.md, "Pinning"): an extension of the gateway's core
whose interceptors stand between the policy and the gateway. Each time what the children
offer changes (the provider's generation), the catalog is reviewed against the trust lock
once: a tool or skill served for the first time is pinned (on-first-use), one that changed
since it was trusted, or is new where pinning is locked, is withheld: left out of every
listing, and a call gets an error result naming the change and `codex-mcp trust`. So a call
costs a comparison of the generation and a set membership test; the lock is read again when
its file changes (`codex-mcp trust --accept`), and clients are told `list_changed` when that
changes what is withheld."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from codex_mcp.core.errors import McpError
from codex_mcp.core.extensions import (
    CallTool,
    Extension,
    GetSkill,
    ListItems,
    ReadDirectory,
    ReadResource,
    Stage,
)
from codex_mcp.core.jsonrpc import INVALID_PARAMS, JsonObject
from codex_mcp.core.log_names import printable
from codex_mcp.core.ready import Ready
from codex_mcp.core.skills import SKILL_FILE
from codex_mcp.gateway.config.model import Pinning
from codex_mcp.gateway.provider import GatewayProvider
from codex_mcp.gateway.status import STATUS_TOOL

from .codex_skills import codex_home
from .lock import (
    LOCK_TIMEOUT,
    LockError,
    LockFile,
    LockState,
    lock_path,
    run_apart,
    skill_pin,
    tool_pin,
)
from .pinning import WITHHELD, Seen, Verdict, judge, reason, recording
from .skills_live import LiveSync

if TYPE_CHECKING:
    from codex_mcp.core.context import RequestContext
    from codex_mcp.core.server import ServerCore
    from codex_mcp.core.session import ServerSession
    from codex_mcp.gateway.children.child import Child

log = logging.getLogger("codex_mcp.gateway")
T = TypeVar("T")
#: An operation on a URI (skills/get, resources/read, resources/directory/read).
UriStep = Callable[[str, "RequestContext"], Awaitable[T]]

#: How often the lock's file is looked at for a change (a stat), as the config's is.
WATCH_SECONDS = 1.0
WHAT_TO_RUN = "run `codex-mcp trust` to review it"


def refusal(why: str) -> JsonObject:
    """A withheld tool's call: an error result naming the change (never its new text)."""
    text = f"{why}; it is withheld until someone reviews the change: {WHAT_TO_RUN}"
    return {"content": [{"type": "text", "text": text}], "isError": True}


class TrustPoint(Extension):
    # Inside the policy (DECIDE): what the policy hides is answered as unknown before
    # anything here could say that it changed.
    stage = Stage.ROUTE

    def __init__(self, core: ServerCore, provider: GatewayProvider) -> None:
        self.core = core
        self.provider = provider
        self.lock = LockFile(lock_path(provider.config))
        #: Why the lock cannot be used (then everything pinned is withheld), or None.
        self.broken: str | None = None
        self.state = self._read_lock()
        #: Served tool name -> why it is withheld; skill folder URI (`.../`) -> why.
        self.withheld: dict[str, str] = {}
        self.withheld_skills: dict[str, str] = {}
        #: The provider's generation last reviewed, the names routed then, and what was judged.
        self._reviewed = -1
        self._routed: frozenset[str] = frozenset()
        self._judged: dict[tuple[str, str, str], Seen] = {}
        self._said: set[tuple[str, str, str, str]] = set()
        self._stamp = self.lock.stamp()
        self._tasks: set[asyncio.Future[Any]] = set()
        self._writes: set[asyncio.Future[None]] = set()
        #: Keeps Codex's skills folder in sync (`gateway.skills_sync`), made when first needed.
        self._live: LiveSync | None = None
        self._watching = False
        #: Whether the call interceptor is in the call's path (while something is withheld,
        #: or a change is not judged yet): else a relayed call passes nothing of ours.
        self._in_path = False
        provider.config_listeners.append(self._config_changed)
        provider.change_listeners.append(self._children_changed)

    @property
    def active(self) -> bool:
        config = self.provider.config
        pinned = any(config.pinning_of(server) != "off" for server in config.servers)
        return pinned or config.skills_sync

    # -- the lock --------------------------------------------------------------------------
    def _read_lock(self) -> LockState:
        """What the lock holds now (nothing, when it is unusable: `broken` says why)."""
        try:
            state, self.broken = self.lock.read(), None
            return state
        except LockError as error:
            if self.broken != str(error):
                log.error(
                    "%s; every pinned tool and skill is withheld until it is fixed or removed "
                    "(`codex-mcp trust` says what is wrong)",
                    error,
                )
            self.broken = str(error)
            return LockState()

    def _children_changed(self) -> None:
        """What a child offers changed: judged at once when the catalog is everyone's (a
        call the check was not in the path of may have used what changed), else before the
        next call (the check folded in)."""
        if not self.active:
            return
        if not self.provider.per_session.servers:
            with contextlib.suppress(RuntimeError):  # no loop yet: judged at the first use
                asyncio.get_running_loop().call_soon(self._review_shared)
        if not self._in_path:
            self.core.refold()

    def _review_shared(self) -> None:
        if self._stale:
            # Without per-session servers the catalog is the same for every session.
            self._review(cast("ServerSession", None))

    @property
    def _needed(self) -> bool:
        """Whether the call check must be in the call's path: something is withheld, a
        change is not judged yet, or a server is locked (a call to a name no listing had
        yet, which the gateway then lists itself, must be judged before it runs)."""
        config = self.provider.config
        locked = any(config.pinning_of(server) == "locked" for server in config.servers)
        return self.active and (bool(self.withheld) or self._stale or locked)

    def _refold_if_needed(self) -> None:
        if self._needed != self._in_path:
            self.core.refold()

    @property
    def _stale(self) -> bool:
        return self._reviewed != self.provider.generation

    def _config_changed(self) -> None:
        path = lock_path(self.provider.config)
        if path != self.lock.path:
            self.lock = LockFile(path)
            self.state = self._read_lock()
        self._reviewed = -1
        self.core.refold()  # pinning may have been switched on or off

    def record(self, judged: list[tuple[Seen, Verdict]]) -> None:
        """Pin the first uses and keep the changes pending: at once here, and in the file
        in the background (under its lock, merged with what another gateway wrote)."""
        edit = recording(judged)
        if self.broken is not None or not edit(self.state):
            return
        write = asyncio.ensure_future(self._write(judged))
        self._writes.add(write)  # finished, not cancelled, when the core stops
        write.add_done_callback(self._writes.discard)

    async def _write(self, judged: list[tuple[Seen, Verdict]]) -> None:
        try:
            merged = await run_apart(self.lock.change, recording(judged))
        except LockError as error:
            log.warning("%s; what was served is trusted for this run only", error)
            return
        self._stamp = self.lock.stamp()  # our own write: nothing for the watcher to tell
        self._adopt(merged)

    def _check_lock(self) -> None:
        """Read the lock again if its file changed (a stat), and adopt what it says."""
        stamp = self.lock.stamp()
        if stamp == self._stamp:
            return
        self._stamp = stamp
        before = self.broken
        state = self._read_lock()
        if self.broken is None or before is None:
            self._adopt(state, told=before != self.broken)

    @property
    def _waiting(self) -> bool:
        """Something waits for `codex-mcp trust` (or for the lock to be fixed)."""
        return bool(self.withheld or self.withheld_skills) or self.broken is not None

    def _watch_while_waiting(self) -> None:
        if self._waiting and not self._watching:
            self._watching = True
            self._spawn(self._watch())

    async def _watch(self) -> None:
        """The lock's file looked at once a second while something waits for it, so an
        accept is served (and told) without a client asking; no timer otherwise (a timer
        pending in the loop costs every loop turn a clock read)."""
        try:
            while self._waiting:
                await asyncio.sleep(WATCH_SECONDS)
                self._check_lock()
        finally:
            self._watching = False

    def _adopt(self, state: LockState, told: bool = False) -> None:
        """`state` is the lock now: if what was judged last would now be withheld otherwise
        (another gateway pinned it differently, or `codex-mcp trust` accepted it), review
        again at the next use and tell the clients."""
        was = self._verdicts()
        self.state = state
        if told or was != self._verdicts():
            self._reviewed = -1
            self._refold_if_needed()
            self.provider.notify_list_changed("tools")
            self.provider.notify_list_changed("resources")
            self._sync_skills()

    def _verdicts(self) -> set[tuple[str, str, str]]:
        return {
            key
            for key, seen in self._judged.items()
            if judge(self.state, self._mode(seen.server), seen) in WITHHELD
        }

    def _mode(self, name: str) -> Pinning:
        config = self.provider.config
        server = config.server(name)
        return config.pinning_of(server) if server is not None else config.pinning

    def _spawn(self, work: Awaitable[None]) -> None:
        self.keep(asyncio.ensure_future(work))

    def keep(self, task: asyncio.Future[None]) -> None:
        """Work of ours running in the background, cancelled when the core stops."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        for task in self._tasks:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._writes:  # what was served first is pinned, however short the run
            await asyncio.wait(self._writes, timeout=LOCK_TIMEOUT + 1)

    # -- the review ------------------------------------------------------------------------
    def _review(self, session: ServerSession) -> None:
        """Judge what the catalog serves now against the lock (once per generation)."""
        self._check_lock()  # what another process wrote meanwhile
        provider = self.provider
        generation = provider.generation
        catalog = provider.catalog(session)
        served = {tool.get("name"): tool for tool in catalog.tools}
        judged: list[tuple[Seen, Verdict]] = []
        withheld: dict[str, str] = {}
        per_child: dict[Child, dict[tuple[str, str], str]] = {}
        for name, (child, own) in catalog.routes.items():
            mine = per_child.setdefault(child, {})
            why = self._judge(Seen(child.name, "tools", own, tool_pin(own, served[name])), judged)
            if why is not None:
                withheld[name] = mine[("tool", own)] = why
        for child, mine in per_child.items():  # its skills' are the skills listing's
            child.withheld = {k: v for k, v in child.withheld.items() if k[0] == "skill"} | mine
        self.withheld = withheld
        self._routed = frozenset(catalog.routes)
        self._reviewed = generation
        self.record(judged)
        self._sync_skills()
        self._refold_if_needed()
        self._watch_while_waiting()

    def _sync_skills(self) -> None:
        if self.provider.config.skills_sync:
            if self._live is None:
                self._live = LiveSync(self, codex_home())
            self._live.poke()

    def _judge(self, seen: Seen, judged: list[tuple[Seen, Verdict]]) -> str | None:
        """Why `seen` is withheld (None: it is served), noting the verdict for the lock."""
        mode = self._mode(seen.server)
        if mode == "off":
            return None
        if self.broken is not None:
            return f"the trust lock is unusable ({self.broken})"
        verdict = judge(self.state, mode, seen)
        judged.append((seen, verdict))
        self._judged[(seen.server, seen.kind, seen.name)] = seen
        if verdict not in WITHHELD:
            return None
        why = reason(self.state, seen, verdict)
        said = (seen.server, seen.kind, seen.name, seen.pin.digest)
        if said not in self._said:  # once per change
            self._said.add(said)
            log.warning("%s: %s: withheld; %s", printable(seen.server), why, WHAT_TO_RUN)
        return why

    # -- tools -----------------------------------------------------------------------------
    def call_tool(self, call_next: CallTool) -> CallTool:
        self._in_path = self._needed
        if not self._in_path:
            return call_next  # nothing withheld, nothing unjudged: a call passes nothing of ours

        def call(name: str, arguments: JsonObject, ctx: RequestContext) -> Awaitable[JsonObject]:
            if name == STATUS_TOOL:  # the gateway's own; reporting starts no child
                return call_next(name, arguments, ctx)
            if self._reviewed != self.provider.generation:
                self._review(ctx.session)
            why = self.withheld.get(name) if self.withheld else None
            if why is not None:
                return Ready(refusal(why))
            if name not in self._routed:
                return self._judged_first(name, arguments, ctx, call_next)
            return call_next(name, arguments, ctx)

        return call

    async def _judged_first(
        self, name: str, arguments: JsonObject, ctx: RequestContext, call_next: CallTool
    ) -> JsonObject:
        """A name the catalog judged had no route for (a tool listed since, or none): the
        listings the call itself would wait for, judged, before the call is let through."""
        await self.provider.list_tools(ctx)
        if name not in self.provider.catalog(ctx.session).routes:
            children = self.provider.children(ctx.session, start=False)
            await asyncio.gather(*(c.listing("tools", None, live=True) for c in children))
        self._review(ctx.session)
        why = self.withheld.get(name)
        if why is not None:
            return refusal(why)
        return await call_next(name, arguments, ctx)

    def list_tools(self, call_next: ListItems) -> ListItems:
        if not self.active:
            return call_next

        async def listing(ctx: RequestContext) -> Sequence[JsonObject]:
            tools = await call_next(ctx)
            self._check_lock()  # a listing sees an accept at once (a stat)
            if self._reviewed != self.provider.generation:
                self._review(ctx.session)
            if not self.withheld:
                return tools  # the provider's own list: the core caches its encoding by it
            return [tool for tool in tools if tool.get("name") not in self.withheld]

        return listing

    # -- skills ----------------------------------------------------------------------------
    def list_skills(self, call_next: ListItems) -> ListItems:
        if not self.active:
            return call_next

        async def listing(ctx: RequestContext) -> Sequence[JsonObject]:
            entries = await call_next(ctx)
            self._check_lock()
            catalog = self.provider.catalog(ctx.session)
            judged: list[tuple[Seen, Verdict]] = []
            kept = []
            for entry in entries:
                uri = entry.get("uri")
                route = catalog.resource_route(uri) if isinstance(uri, str) else None
                if route is None:
                    kept.append(entry)
                    continue
                child, own = route
                path = own.partition("://")[2].removesuffix(f"/{SKILL_FILE}")
                folder = str(uri).removesuffix(SKILL_FILE)
                why = self._judge(Seen(child.name, "skills", path, skill_pin(path, entry)), judged)
                if why is None:
                    self.withheld_skills.pop(folder, None)
                    child.withheld.pop(("skill", path), None)
                    kept.append(entry)
                else:
                    self.withheld_skills[folder] = why
                    child.withheld[("skill", path)] = why
            self.record(judged)
            self._watch_while_waiting()
            return kept

        return listing

    def _skill_guard(self, call_next: UriStep[T]) -> UriStep[T]:
        """A use of a withheld skill's URI (its SKILL.md, a file, a folder) is refused."""
        if not self.active:
            return call_next

        async def guarded(uri: str, ctx: RequestContext) -> T:
            for folder, why in self.withheld_skills.items():
                if uri.startswith(folder) or uri == folder.removesuffix("/"):
                    raise McpError(INVALID_PARAMS, f"{why}; {WHAT_TO_RUN}", {"uri": uri})
            return await call_next(uri, ctx)

        return guarded

    def get_skill(self, call_next: GetSkill) -> GetSkill:
        return self._skill_guard(call_next)

    def read_resource(self, call_next: ReadResource) -> ReadResource:
        return self._skill_guard(call_next)

    def read_directory(self, call_next: ReadDirectory) -> ReadDirectory:
        return self._skill_guard(call_next)


def install(core: ServerCore) -> TrustPoint | None:
    """Pinning for a gateway's core (its provider a GatewayProvider); None for another."""
    provider = core.provider
    if not isinstance(provider, GatewayProvider):
        return None
    point = TrustPoint(core, provider)
    core.extend(point)
    return point
