"""One policy point for listing and using tools, resources and prompts (specs/policy.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import HookConfig, PolicyConfig, PolicyError, load_policy, parse_policy
from .rules import Caller, Rule, Target, Verdict

if TYPE_CHECKING:
    from .decide import Policy


def __getattr__(name: str) -> Any:
    # Policy needs the core; checking a policy file (config) must not import it: a gateway
    # checks its settings before its children start and imports the core after.
    if name == "Policy":
        from .decide import Policy

        return Policy
    raise AttributeError(name)


__all__ = [
    "Caller",
    "HookConfig",
    "Policy",
    "PolicyConfig",
    "PolicyError",
    "Rule",
    "Target",
    "Verdict",
    "load_policy",
    "parse_policy",
]
