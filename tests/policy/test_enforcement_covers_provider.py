"""The policy stands in front of every way into the served provider that names or lists
what is served: each such Provider method is one of the core's operations (every method
handler of both eras reaches the provider through them, core/extensions.py `Served`), and
the policy intercepts each of them. A method added to Provider must be made an operation the
policy decides on, or be said here to name nothing (lifetime, settings, notifications)."""

from __future__ import annotations

import inspect

from codex_mcp.core.extensions import Extension, Served
from codex_mcp.core.provider import Provider
from codex_mcp.policy.point import PolicyPoint

#: Provider methods that name no tool, resource or prompt a caller could be refused.
_NAMES_NOTHING = {
    "features",
    "add_listener",
    "notify_list_changed",
    "notify_resource_updated",
    "start",
    "stop",
    "aclose",
    "open_session",
    "close_session",
    "closes_sessions",
    "unsubscribe",
    "listen_ended",
    "set_log_level",
    "roots_changed",
}


def test_every_provider_method_is_an_operation_or_names_nothing() -> None:
    public = {
        name
        for name, member in inspect.getmembers(Provider)
        if not name.startswith("_") and (callable(member) or isinstance(member, property))
    }
    assert public - _NAMES_NOTHING == set(Served.__slots__)


def test_the_policy_intercepts_every_operation() -> None:
    for operation in Served.__slots__:
        assert getattr(PolicyPoint, operation) is not getattr(Extension, operation), operation
