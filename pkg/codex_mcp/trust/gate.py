"""A connection to a child held until what it serves is compared with the trust lock
(specs/trust.md, "Pinning": Where a call is decided). Every new process of a child (its
start, a restart, a start after an idle stop or a lazy one's first), a child's second
connection (its lane) and an HTTP session the client re-established (a restarted server)
is one: until its tool listing is judged, no front request's `tools/call` reaches it (the
relay's hot path is closed on it, and a call waits here, bounded by the child's start
timeout); then a call to a tool it serves changed is refused as a withheld one is, and one to
a tool it does not list is refused too. A connection that withholds nothing is let go: the
relay's calls pass nothing of ours from then on."""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING

from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import INVALID_PARAMS, JsonObject
from codex_mcp.gateway.children.tools import ToolEntry, prepare_tools
from codex_mcp.gateway.errors import crashed_error

from .lock import Pin, tool_pin
from .pinning import Seen, Verdict, refusal

if TYPE_CHECKING:
    from codex_mcp.gateway.children.child import Child
    from codex_mcp.gateway.children.connection import Connection

    from .point import TrustPoint


class Gate:
    def __init__(self, point: TrustPoint, child: Child, connection: Connection, own: bool) -> None:
        self.point = point
        self.child = child
        self._connection = weakref.ref(connection)
        #: Its tools as this connection lists them (None: not judged yet), and those withheld.
        self.pins: dict[str, Pin] | None = None
        self.withheld: dict[str, str] = {}
        #: Whether the child's own listing is this connection's (else: listed here).
        self.own = own
        self._vetted = asyncio.get_running_loop().create_future()
        held = connection.gate  # a session re-established while still held: its own
        self._direct: bool = held._direct if isinstance(held, Gate) else connection.direct
        connection.direct = False  # no call on the relay's hot path before it is judged
        connection.gate = self
        if not own:
            point.keep(asyncio.ensure_future(self._list(connection)))

    @property
    def connection(self) -> Connection | None:
        return self._connection()

    async def _list(self, connection: Connection) -> None:
        """A connection whose tools the child does not list (a lane): listed here."""
        try:
            items = await connection.list_all("tools/list", "tools", self.child.startup_timeout)
        except Exception as error:  # the connection closed, or the child cannot list
            if not self._vetted.done():
                self._vetted.set_exception(error)
                self._vetted.exception()  # seen: a call that waits is told
            return
        self.listed(prepare_tools(self.child.server, items))

    def listed(self, tools: list[ToolEntry]) -> None:
        """Its tools, as the gateway would serve them: judged now."""
        self.pins = {entry.name: tool_pin(entry.name, entry.definition) for entry in tools}
        self.judge()
        if not self._vetted.done():
            self._vetted.set_result(None)

    def judge(self) -> None:
        """Against the lock as it is now (again when it changes); let go once it withholds
        nothing."""
        if self.pins is None:
            return
        judged: list[tuple[Seen, Verdict]] = []
        name = self.child.name
        self.withheld = {
            tool: why
            for tool, pin in self.pins.items()
            if (why := self.point.judge(Seen(name, "tools", tool, pin), judged)) is not None
        }
        self.point.record(judged)
        if not self.withheld:
            self.release()

    def release(self) -> None:
        connection = self.connection
        if connection is not None and connection.gate is self:
            connection.gate = None
            connection.direct = self._direct
        self.point.gates.discard(self)

    async def __call__(self, method: str, params: JsonObject) -> JsonObject | None:
        """None: the request may go to the child; else the answer it gets instead."""
        if method != "tools/call":
            return None
        if self.pins is None:
            timeout = self.child.startup_timeout
            try:
                async with asyncio.timeout(timeout):
                    await asyncio.shield(self._vetted)
            except Exception as failed:  # not listed in time, or not at all: try again
                detail = (
                    f"its tool definitions were not compared with the trust lock within "
                    f"{timeout:g} s of its start; try again"
                    if isinstance(failed, TimeoutError)
                    else "its tools could not be listed to compare them with the trust lock; "
                    "try again"
                )
                error = crashed_error(server=self.child.name, tool=None, detail=detail)
                raise McpError(error["code"], error["message"], error["data"]) from None
        pins = self.pins or {}
        tool = params.get("name")
        why = self.withheld.get(tool) if isinstance(tool, str) else None
        if why is not None:
            return refusal(why)
        if tool not in pins:  # not one it lists: its definition was never compared
            raise McpError(INVALID_PARAMS, f"Unknown tool: {tool}")
        return None
