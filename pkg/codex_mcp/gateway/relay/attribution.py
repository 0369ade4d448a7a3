"""Which front request a child's message belongs to: the one its connection names (its
stream, progress token or related task), else for a stdio child with one call in flight,
that call when it can only be that call's; whose a shared child's unmarked message is (the
one client session that ever sent it a request, while there is one); and what the gateway
says when it cannot tell (specs/gateway.md, "Relaying": Which call)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import TYPE_CHECKING

from codex_mcp.core.context import RequestContext
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import INTERNAL_ERROR, JsonObject
from codex_mcp.core.versions import Revision

from .. import asked_record
from ..children.child import Child
from ..children.inflight import Callers, Entry, InFlight

if TYPE_CHECKING:
    from codex_mcp.core.session import ServerSession

log = logging.getLogger("codex_mcp.gateway")

#: The setting that gives each client session a child of its own.
PER_SESSION_FIX = '"per_session": true'


def note_caller(callers: Callers, ctx: RequestContext) -> None:
    """`ctx`'s session sends the child a request (called when it is not the child's last
    caller, or not a legacy session's request). A second session, or a 2026-07-28 caller
    (whose requests share no session), ends attribution for the child's life: work that an
    earlier call of another session left in the child may speak during any later call."""
    if callers.last is not None or ctx.revision is not Revision.LEGACY:
        callers.mixed = True
    callers.last = ctx.peer


def entry_for(
    child: Child,
    inflight: InFlight,
    origin: Hashable,
    params: JsonObject | None,
    sole_session: Callable[[], ServerSession | None],
) -> Entry | None:
    """The in-flight request a message the child sent on this connection belongs to, when
    that can be told. Over stdio nothing marks an SDK server's question: while one call is in
    flight it is that call's if the child is the call's client's alone (per-session), if
    one session alone has ever used it, or if the gateway serves one session (stdio)."""
    entry = inflight.entry_for(origin, params)
    if entry is not None or not child.is_stdio or len(inflight.calls) != 1:
        return entry
    only = next(iter(inflight.calls.values()))
    ctx = only.ctx
    if child.owner is not None or child.callers.sole is ctx.peer or ctx.session is sole_session():
        return only
    return None


def sessions_served(callers: Callers) -> str:
    """`none`, `one` or `several`: how many client sessions have sent the child requests."""
    if callers.mixed:
        return "several"
    return "none" if callers.last is None else "one"


def _entry(child: Child, config: Path | None) -> str:
    where = f"in {config}" if config is not None else "in the .mcp.json"
    return f'its entry {where} ("mcpServers" > "{child.name}")'


def _during_call(child: Child, config: Path | None) -> str:
    return (
        f"{child.name!r} sent it during a call, but a stdio pipe does not say which call "
        "(the official SDKs' servers mark none: no progress token, no related request), and "
        "more than one client session uses this shared child, so no call can be proven its "
        f"own. Set {PER_SESSION_FIX} in {_entry(child, config)}: each session then gets a "
        "child of its own, whose every message is that session's"
    )


def _outside_calls(child: Child, config: Path | None) -> str:
    return (
        f"{child.name!r} sent it outside any call, and a shared child is every client "
        "session's, so it is given to none. If it works for one client outside its calls, set "
        f"{PER_SESSION_FIX} in {_entry(child, config)}"
    )


def refusal(child: Child, method: str) -> McpError:
    """The error a shared child's unattributed request gets. Short, the fix first: the child
    usually turns it into its call's error, which is cut to one line on the way back."""
    if child.in_flight:
        fix = f"set {PER_SESSION_FIX} in the .mcp.json entry of {child.name!r}"
        why = "it asked during a call its stdio pipe does not name, and several sessions use it"
    else:
        fix = f"if {child.name!r} asks one client outside its calls, set {PER_SESSION_FIX}"
        why = "it asked outside any call; a shared child is every session's"
    return McpError(
        INTERNAL_ERROR, f"{method}: the gateway cannot tell which client this is for: {fix} ({why})"
    )


def unrouted(child: Child, kind: str, what: str, config: Path | None) -> None:
    """A shared child sent `what` (of `kind`: a client method, or "logging") that no call
    claims: counted (gateway_status), the first during calls and the first outside them
    logged as a warning with the fix, and each kind seen during calls recorded for
    `codex-mcp lint` (asked_record)."""
    callers = child.callers
    callers.unrouted += 1
    if child.in_flight:
        callers.unrouted_in_calls += 1
        first, why = callers.unrouted_in_calls == 1, _during_call(child, config)
        if kind not in callers.recorded and child.cache is not None:
            callers.recorded.add(kind)
            asked_record.record(child.server, kind, child.cache.directory)
    else:
        first = callers.unrouted - callers.unrouted_in_calls == 1
        why = _outside_calls(child, config)
    log.log(
        logging.WARNING if first else logging.DEBUG,
        "%s: %s was given to no client: %s",
        child.name,
        what,
        why,
    )


def advice(unrouted: int, in_calls: int) -> str | None:
    """gateway_status's advice for a shared child with unattributed messages."""
    if in_calls:
        return (
            f"{in_calls} request(s) or log message(s) it sent during calls could not be tied "
            "to their call (a stdio pipe does not say which, and several client sessions use "
            f"it): set {PER_SESSION_FIX} in its .mcp.json entry"
        )
    if unrouted:
        return (
            f"{unrouted} request(s) or log message(s) it sent outside any call were given to "
            f"no client: if it works for one client outside its calls, set {PER_SESSION_FIX} "
            "in its .mcp.json entry"
        )
    return None
