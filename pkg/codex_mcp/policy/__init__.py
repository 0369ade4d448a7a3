"""One policy point for listing and using tools, resources and prompts (specs/policy.md)."""

from __future__ import annotations

from .config import HookConfig, PolicyConfig, PolicyError, load_policy, parse_policy
from .decide import Policy
from .rules import Caller, Rule, Target, Verdict

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
