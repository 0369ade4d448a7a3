"""A child's states and the events between them, as one table: `next_state` refuses an event
the table lacks, so a supervision bug fails where it happens (specs/gateway.md, "Supervision")."""

from __future__ import annotations

from typing import Final, Literal, get_args

State = Literal["idle", "starting", "ready", "restarting", "failed", "stopped", "needs login"]
Event = Literal["start", "up", "failed", "login needed", "retry", "give up", "doze", "stop"]

_STATES: Final[tuple[State, ...]] = get_args(State)

#: (state, event) -> the state it leads to. What is missing cannot happen.
TRANSITIONS: Final[dict[tuple[State, Event], State]] = {
    # A start attempt: the first, a restart after its backoff, a login that appeared, a call
    # that came while it stopped for want of use (still `ready` while it stops), or a second
    # start of one already starting (a call, SIGHUP).
    ("idle", "start"): "starting",
    ("starting", "start"): "starting",
    ("ready", "start"): "starting",
    ("restarting", "start"): "starting",
    ("needs login", "start"): "starting",
    # How a start attempt ends.
    ("starting", "up"): "ready",
    ("starting", "failed"): "failed",
    ("starting", "login needed"): "needs login",
    # A call found its login gone while it was up: it waits for a new one.
    ("ready", "login needed"): "needs login",
    # It died (or never started): restarted after a backoff, or not (its restart policy).
    ("ready", "retry"): "restarting",
    ("failed", "retry"): "restarting",
    ("ready", "give up"): "failed",
    ("failed", "give up"): "failed",
    # Stopped for want of use (`idle_timeout_sec`): the next call starts it again.
    ("ready", "doze"): "idle",
    **{(state, "stop"): "stopped" for state in _STATES},
}


class ImpossibleTransition(RuntimeError):
    """An event the current state has no transition for: a bug in the supervision."""

    def __init__(self, state: State, event: Event) -> None:
        super().__init__(f"a child in state {state!r} cannot take event {event!r}")
        self.state = state
        self.event = event


def next_state(state: State, event: Event) -> State:
    """The state `event` leads to from `state`; ImpossibleTransition when there is none."""
    try:
        return TRANSITIONS[state, event]
    except KeyError:
        raise ImpossibleTransition(state, event) from None
