"""Pinning in the gateway (specs/trust.md, "Pinning"): an extension of the gateway's core
whose interceptors stand between the policy and the gateway. What each child serves is
judged against the trust lock once per listing it makes (each per-session child by its own):
a tool or skill served for the first time is pinned (on-first-use), one that changed since it
was trusted, or is new where pinning is locked, is withheld: left out of every listing, and a
call gets an error result naming the change and `codex-mcp trust`. A new connection to a
child is held until its tools are judged (gate.py), so no call reaches a process whose
definitions were not compared; a skill's file is served only as its pin says it is. The lock
is read again when its file changes (`codex-mcp trust --accept`), and clients are told
`list_changed` when that changes what is withheld."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

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
from .gate import Gate
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
from .pinning import (
    WHAT_TO_RUN,
    WITHHELD,
    Seen,
    Verdict,
    file_verdict,
    judge,
    reason,
    recording,
    refusal,
)
from .skills_live import LiveSync

if TYPE_CHECKING:
    from codex_mcp.core.context import RequestContext
    from codex_mcp.core.server import ServerCore
    from codex_mcp.gateway.children.child import Child
    from codex_mcp.gateway.children.connection import Connection
    from codex_mcp.gateway.children.tools import ToolEntry
    from codex_mcp.gateway.routing.catalog import Catalog

log = logging.getLogger("codex_mcp.gateway")
T = TypeVar("T")
#: An operation on a URI (skills/get, resources/read, resources/directory/read).
UriStep = Callable[[str, "RequestContext"], Awaitable[T]]

#: How often the lock's file is looked at for a change (a stat), as the config's is.
WATCH_SECONDS = 1.0
#: The URIs of skills' files (SEP-2640): a read of one is judged by its skill's pin.
SKILL_SCHEME = "skill://"


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
        #: Each child's served tools as last judged: the listing, the lock's epoch then, and
        #: its own name -> why, for those withheld.
        self._tools: weakref.WeakKeyDictionary[
            Child, tuple[list[ToolEntry], int, dict[str, str]]
        ] = weakref.WeakKeyDictionary()
        #: Bumped when what the lock says of something judged changes.
        self._epoch = 0
        #: The children anything was judged of (what `gateway_status` shows is theirs).
        self._children: weakref.WeakSet[Child] = weakref.WeakSet()
        #: The connections held until their tools are judged, or holding a changed one back.
        self.gates: weakref.WeakSet[Gate] = weakref.WeakSet()
        #: The provider's generation when every shared child was last judged.
        self._reviewed = -1
        #: The last definition judged per (server, kind, name), and the digest last said
        #: withheld: one each per name, however often a child changes what it serves.
        self._judged: dict[tuple[str, str, str], Seen] = {}
        self._said: dict[tuple[str, str, str], str] = {}
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
        provider.connect_listeners.append(self._connected)

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

    def _config_changed(self) -> None:
        path = lock_path(self.provider.config)
        if path != self.lock.path:
            self.lock = LockFile(path)
            self.state = self._read_lock()
        self._epoch += 1
        self._reviewed = -1
        for gate in list(self.gates):
            gate.judge()
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
        return (
            self.broken is not None
            or any(child.withheld for child in self._children)
            or any(gate.withheld for gate in self.gates)
        )

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
        """`state` is the lock now: if what was judged would now be withheld otherwise
        (another gateway pinned it differently, or `codex-mcp trust` accepted it), judge
        again and tell the clients."""
        was = self._verdicts()
        self.state = state
        if told or was != self._verdicts():
            self._epoch += 1
            self._reviewed = -1
            for gate in list(self.gates):
                gate.judge()
            self._refold_if_needed()
            self.provider.notify_list_changed("tools")
            self.provider.notify_list_changed("resources")
            self._sync_skills()

    def _verdicts(self) -> set[tuple[str, str, str, str]]:
        return {
            (*key, seen.pin.digest)
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

    # -- judging -----------------------------------------------------------------------------
    def judge(self, seen: Seen, judged: list[tuple[Seen, Verdict]]) -> str | None:
        """Why `seen` is withheld (None: it is served), noting the verdict for the lock."""
        mode = self._mode(seen.server)
        if mode == "off":
            return None
        if self.broken is not None:
            return f"the trust lock is unusable ({self.broken})"
        verdict = judge(self.state, mode, seen)
        judged.append((seen, verdict))
        key = (seen.server, seen.kind, seen.name)
        self._judged[key] = seen
        if verdict not in WITHHELD:
            return None
        why = reason(self.state, seen, verdict)
        if self._said.get(key) != seen.pin.digest:  # once per change
            self._said[key] = seen.pin.digest
            log.warning("%s: %s: withheld; %s", printable(seen.server), why, WHAT_TO_RUN)
        return why

    def tool_verdict(self, child: Child) -> dict[str, str]:
        """The tools `child` serves now that are withheld (its own name -> why): judged once
        per listing it makes (and again when the lock changes what it says of them)."""
        tools = child.current_tools
        kept = self._tools.get(child)
        if kept is not None and kept[0] is tools and kept[1] == self._epoch:
            return kept[2]
        judged: list[tuple[Seen, Verdict]] = []
        withheld = {}
        for entry in tools:
            seen = Seen(child.name, "tools", entry.name, tool_pin(entry.name, entry.definition))
            why = self.judge(seen, judged)
            if why is not None:
                withheld[entry.name] = why
        self._tools[child] = (tools, self._epoch, withheld)
        self._children.add(child)
        skills = {key: why for key, why in child.withheld.items() if key[0] == "skill"}
        child.withheld = skills | {("tool", name): why for name, why in withheld.items()}
        self.record(judged)
        return withheld

    def _withheld_in(self, catalog: Catalog) -> dict[str, str]:
        """The tools of a session's catalog that are withheld (served name -> why)."""
        verdicts = {child: self.tool_verdict(child) for child in catalog.namespaces.values()}
        return {
            name: why
            for name, (child, own) in catalog.routes.items()
            if (why := verdicts[child].get(own)) is not None
        }

    def _children_changed(self) -> None:
        """What a child offers changed: a connection held for the child's own listing is
        judged now; shared children are judged at once (a call the check was not in the
        path of may use what changed), per-session ones at their session's next use."""
        if not self.active:
            return
        for gate in list(self.gates):
            if gate.own and gate.pins is None:
                child = gate.child
                if child.connection is gate.connection and child.lists["tools"] is not None:
                    gate.listed(child.tools)
        with contextlib.suppress(RuntimeError):  # no loop yet: judged at the first use
            asyncio.get_running_loop().call_soon(self._review_shared)
        if not self._in_path:
            self.core.refold()

    def _review_shared(self) -> None:
        provider = self.provider
        if self._reviewed == provider.generation:
            return
        for child in provider.shared:
            self.tool_verdict(child)
        self._reviewed = provider.generation
        self._settle()

    def _settle(self) -> None:
        self._sync_skills()
        self._refold_if_needed()
        self._watch_while_waiting()

    def _connected(self, child: Child, connection: Connection, own: bool) -> None:
        """A new connection to `child` (`own`: its tools are the child's own listing):
        held until they are judged."""
        if self.active and self._mode(child.name) != "off":
            self.gates.add(Gate(self, child, connection, own))

    @property
    def _needed(self) -> bool:
        """Whether the call check must be in the call's path: per-session children (each
        session's own), the lock unusable, a change not judged yet, or something withheld."""
        if not self.active:
            return False
        provider = self.provider
        if provider.per_session.servers or self.broken is not None:
            return True
        if self._reviewed != provider.generation:
            return True
        return any(kept[2] for child in provider.shared if (kept := self._tools.get(child)))

    def _refold_if_needed(self) -> None:
        if self._needed != self._in_path:
            self.core.refold()

    def _sync_skills(self) -> None:
        if self.provider.config.skills_sync:
            if self._live is None:
                self._live = LiveSync(self, codex_home())
            self._live.poke()

    # -- tools -----------------------------------------------------------------------------
    def call_tool(self, call_next: CallTool) -> CallTool:
        self._in_path = self._needed
        if not self._in_path:
            return call_next  # nothing withheld, nothing unjudged: a call passes nothing of ours

        def call(name: str, arguments: JsonObject, ctx: RequestContext) -> Awaitable[JsonObject]:
            if name == STATUS_TOOL:  # the gateway's own; reporting starts no child
                return call_next(name, arguments, ctx)
            self._review_shared()
            route = self.provider.catalog(ctx.session).routes.get(name)
            if route is not None:
                why = self.tool_verdict(route[0]).get(route[1])
                if why is not None:
                    return Ready(refusal(why))
            # A name not listed yet goes on: the connection that would run it decides (gate.py).
            return call_next(name, arguments, ctx)

        return call

    def list_tools(self, call_next: ListItems) -> ListItems:
        if not self.active:
            return call_next

        async def listing(ctx: RequestContext) -> Sequence[JsonObject]:
            tools = await call_next(ctx)
            self._check_lock()  # a listing sees an accept at once (a stat)
            withheld = self._withheld_in(self.provider.catalog(ctx.session))
            if not self.provider.per_session.servers:
                self._reviewed = self.provider.generation  # the catalog is every shared child
            self._settle()
            if not withheld:
                return tools  # the provider's own list: the core caches its encoding by it
            return [tool for tool in tools if tool.get("name") not in withheld]

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
                path = _path(own).removesuffix(f"/{SKILL_FILE}")
                why = self.judge(Seen(child.name, "skills", path, skill_pin(path, entry)), judged)
                self._children.add(child)
                if why is None:
                    child.withheld.pop(("skill", path), None)
                    kept.append(entry)
                else:
                    child.withheld[("skill", path)] = why
            self.record(judged)
            self._watch_while_waiting()
            return kept

        return listing

    def _skill_route(self, uri: str, ctx: RequestContext) -> tuple[Child, str] | None:
        """The child serving one of our URIs and its own URI, when pinning judges it; a use
        of a skill a listing withheld (its SKILL.md, a file, a folder) is refused."""
        route = self.provider.catalog(ctx.session).resource_route(uri)
        if route is None or self._mode(route[0].name) == "off":
            return None
        child, own = route
        rest = _path(own)
        for (kind, path), why in child.withheld.items():
            if kind == "skill" and (rest == path or rest.startswith(f"{path}/")):
                raise McpError(INVALID_PARAMS, f"{why}; {WHAT_TO_RUN}", {"uri": uri})
        return route

    def get_skill(self, call_next: GetSkill) -> GetSkill:
        if not self.active:
            return call_next

        async def get(uri: str, ctx: RequestContext) -> JsonObject:
            route = self._skill_route(uri, ctx)
            entry = await call_next(uri, ctx)
            if route is not None:  # judged as a listing's entry is
                child, own = route
                path = _path(own).removesuffix(f"/{SKILL_FILE}")
                judged: list[tuple[Seen, Verdict]] = []
                why = self.judge(Seen(child.name, "skills", path, skill_pin(path, entry)), judged)
                self.record(judged)
                if why is not None:
                    raise McpError(INVALID_PARAMS, f"{why}; {WHAT_TO_RUN}", {"uri": uri})
            return entry

        return get

    def read_resource(self, call_next: ReadResource) -> ReadResource:
        if not self.active:
            return call_next

        async def read(uri: str, ctx: RequestContext) -> list[JsonObject]:
            route = self._skill_route(uri, ctx)
            contents = await call_next(uri, ctx)
            if route is None:
                return contents
            child, own = route
            # A skill's file is served as its pin says it is, whatever listed it or not.
            why = None
            if own.startswith(SKILL_SCHEME):
                mode = self._mode(child.name)
                if self.broken is not None:
                    why = f"the trust lock is unusable ({self.broken})"
                else:
                    data = [_bytes(item) for item in contents]
                    why = file_verdict(self.state, mode, child.name, _path(own), data)
            if why is not None:
                raise McpError(INVALID_PARAMS, f"{why}; {WHAT_TO_RUN}", {"uri": uri})
            return contents

        return read

    def read_directory(self, call_next: ReadDirectory) -> ReadDirectory:
        if not self.active:
            return call_next

        async def read(uri: str, ctx: RequestContext) -> Sequence[JsonObject]:
            self._skill_route(uri, ctx)
            return await call_next(uri, ctx)

        return read


def _bytes(item: JsonObject) -> bytes:
    """What a read's content item holds, as bytes (a blob that is not base64: none)."""
    if isinstance(item.get("text"), str):
        return str(item["text"]).encode("utf-8")
    try:
        return base64.b64decode(str(item.get("blob", "")), validate=True)
    except (binascii.Error, ValueError):
        return b""


def _path(uri: str) -> str:
    """A child's URI without its scheme: `skill://acme/x.md` -> `acme/x.md`."""
    return uri.partition("://")[2]


def install(core: ServerCore) -> TrustPoint | None:
    """Pinning for a gateway's core (its provider a GatewayProvider); None for another."""
    provider = core.provider
    if not isinstance(provider, GatewayProvider):
        return None
    point = TrustPoint(core, provider)
    core.extend(point)
    return point
