"""Whose a shared child's unmarked message is: the one client session that ever sent it a
request, while there is one; and what the gateway says when it cannot tell
(specs/gateway.md, "Relaying": Which call)."""

from __future__ import annotations

import logging
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

from codex_mcp.core.context import RequestContext
from codex_mcp.core.errors import McpError
from codex_mcp.core.jsonrpc import INTERNAL_ERROR

from .. import asked_record
from ..children.child import Child

if TYPE_CHECKING:
    from codex_mcp.core.session import ServerSession

log = logging.getLogger("codex_mcp.gateway")

#: The setting that gives each client session a child of its own.
PER_SESSION_FIX = '"per_session": true'


def note_caller(child: Child, ctx: RequestContext) -> None:
    """`ctx`'s session sends `child` a request (called when it is not the child's last
    caller, or not a legacy session's request). A second session, or a 2026-07-28 caller
    (whose requests share no session), ends attribution for the child's life: work that an
    earlier call of another session left in the child may speak during any later call."""
    if child.caller is not None or type(ctx) is not RequestContext:
        child.callers_mixed = True
    child.caller = ctx.peer


def sole_caller(child: Child) -> ServerSession | None:
    """The client session that alone has ever sent `child` a request, if one has: what
    the child says outside a call, or during several of that session's calls, is its."""
    return None if child.callers_mixed else child.caller


def sessions_served(child: Child) -> str:
    """`none`, `one` or `several`: how many client sessions have sent the child requests."""
    if child.callers_mixed:
        return "several"
    return "none" if child.caller is None else "one"


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
    if child.calls:
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
    child.unrouted += 1
    if child.calls:
        child.unrouted_in_calls += 1
        first, why = child.unrouted_in_calls == 1, _during_call(child, config)
        seen = _recorded.setdefault(child, set())
        if kind not in seen and child.cache is not None:
            seen.add(kind)
            asked_record.record(child.server, kind, child.cache.directory)
    else:
        first = child.unrouted - child.unrouted_in_calls == 1
        why = _outside_calls(child, config)
    log.log(
        logging.WARNING if first else logging.DEBUG,
        "%s: %s was given to no client: %s",
        child.name,
        what,
        why,
    )


#: The kinds each child's record has been given in this process (written once each).
_recorded: weakref.WeakKeyDictionary[Child, set[str]] = weakref.WeakKeyDictionary()


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
