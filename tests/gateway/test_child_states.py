"""A child's states as a transition table (children/states.py), fed events in process: the
lives a child leads go through, an event its state has no transition for is refused, and a
Child applies its events through the table. No process is started."""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

import pytest
from codex_mcp.core.flow import Flow
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.provider import ListKind
from codex_mcp.gateway.children.child import Child
from codex_mcp.gateway.children.lifetime import Watchdog
from codex_mcp.gateway.children.states import (
    TRANSITIONS,
    Event,
    ImpossibleTransition,
    State,
    next_state,
)
from codex_mcp.gateway.config.env import GatewayEnv
from codex_mcp.gateway.config.model import ServerConfig, StdioTarget
from codex_mcp.gateway.errors import NEEDS_LOGIN


def _run(events: Sequence[Event], state: State = "idle") -> list[State]:
    seen = [state]
    for event in events:
        state = next_state(state, event)
        seen.append(state)
    return seen


@pytest.mark.parametrize(
    ("events", "ends"),
    [
        # Up at once, then stopped with the gateway.
        (["start", "up", "stop"], "stopped"),
        # Dies, restarted after its backoff, up again.
        (["start", "up", "retry", "start", "up"], "ready"),
        # Never starts; restarted until its policy gives up.
        (["start", "failed", "retry", "start", "failed", "give up"], "failed"),
        # Dies once too often: not restarted.
        (["start", "up", "give up"], "failed"),
        # Wants a login; started again once the token store changes.
        (["start", "login needed", "start", "up"], "ready"),
        # Its login was revoked while it was up.
        (["start", "up", "login needed", "start", "up"], "ready"),
        # Stopped for want of use; the next call starts it again.
        (["start", "up", "doze", "start", "up"], "ready"),
        # A call came while it stopped for want of use: started at once, not idle first.
        (["start", "up", "start", "start", "up"], "ready"),
        # A second start of one already starting (a call, SIGHUP) changes nothing.
        (["start", "start", "up"], "ready"),
    ],
)
def test_a_childs_lives_go_through_the_table(events: list[Event], ends: State) -> None:
    assert _run(events)[-1] == ends


@pytest.mark.parametrize(
    ("state", "event"),
    [
        ("idle", "up"),  # up without a start attempt
        ("ready", "up"),
        ("idle", "retry"),  # restarted before it ever ran
        ("restarting", "up"),  # up without starting again
        ("needs login", "retry"),  # no backoff loop without a login
        ("stopped", "start"),  # a stopped child stays stopped
        ("failed", "start"),  # a failed one starts again only by its restart (retry)
        ("idle", "doze"),
    ],
)
def test_an_impossible_event_is_refused(state: State, event: Event) -> None:
    with pytest.raises(ImpossibleTransition, match=f"{state!r} cannot take event {event!r}"):
        next_state(state, event)


def test_every_state_is_reachable_and_every_state_stops() -> None:
    reached: set[State] = {"idle"}
    while True:
        more = {to for (frm, _), to in TRANSITIONS.items() if frm in reached} - reached
        if not more:
            break
        reached |= more
    assert reached == set(get_args(State))
    assert all(next_state(state, "stop") == "stopped" for state in get_args(State))
    assert NEEDS_LOGIN in get_args(State)  # the status tool's word is the state's name


class _Host:
    flow = Flow()

    def child_changed(self, child: Child, kinds: Sequence[ListKind]) -> None:
        pass

    def child_notification(
        self, child: Child, method: str, params: JsonObject, call: object
    ) -> None:
        pass

    async def child_request(
        self, child: Child, method: str, params: JsonObject, call: object
    ) -> JsonObject:
        return {}

    def sole_session(self) -> None:
        return None


def _child() -> Child:
    server = ServerConfig(name="echo", target=StdioTarget(command="true"), where="mcpServers.echo")
    return Child(server, host=_Host(), env=GatewayEnv(), watchdog=Watchdog())


async def test_a_child_applies_its_events_through_the_table() -> None:
    child = _child()
    assert child.state == "idle"
    child._go("start")
    assert child.state == "starting"
    with pytest.raises(ImpossibleTransition):
        child._go("doze")  # refused, and the state is left as it was
    assert child.state == "starting"
    await child.stop()  # never started: nothing to stop but the state
    assert child.state == "stopped"
