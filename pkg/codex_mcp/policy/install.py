"""The policy a server runs with, from its settings: `--policy FILE` and the rules of
`--oauth-tool-scope`; checked before anything starts (one line, and no start)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .config import PolicyConfig, PolicyError, load_policy, tool_scope_rules

if TYPE_CHECKING:
    from ..core.server import ServerCore
    from .decide import Policy


@dataclass(frozen=True, slots=True)
class Checked:
    # The configuration only: checking it must not import the core, which a gateway
    # imports after its children started (gateway/config/early.py).
    config: PolicyConfig

    def install(self, core: ServerCore) -> None:
        """Decide for `core`: a gateway's core has its policy point already (its entries'
        rules), which takes this policy; another gets one when anything could be denied."""
        from .decide import Policy

        install(core, Policy(self.config))


def checked_policy(settings: Any, prog: str) -> Checked:
    path = getattr(settings, "policy", None)
    try:
        config = load_policy(path) if path is not None else PolicyConfig()
    except PolicyError as error:
        raise SystemExit(f"{prog}: {error}") from None
    return Checked(config)


def install(core: ServerCore, policy: Policy) -> None:
    from .point import PolicyPoint

    point = core.extension(PolicyPoint)
    if point is not None:
        point.policy = policy.adding(point.policy.fixed)
    elif not policy.allows_everything:
        core.extend(PolicyPoint(core, policy))


def require_tool_scopes(core: ServerCore, entries: Sequence[str]) -> None:
    """`--oauth-tool-scope` as require rules of `core`'s policy: called by the HTTP app,
    so they hold however the core was made (the CLI, the library, a gateway's)."""
    from .decide import Policy
    from .point import PolicyPoint

    rules = tool_scope_rules(entries)
    if not rules:
        return
    point = core.extension(PolicyPoint)
    if point is None:
        core.extend(PolicyPoint(core, Policy(PolicyConfig(), rules)))
    elif not set(rules) <= set(point.policy.fixed):
        point.policy = point.policy.adding(rules)


def policy_of(core: ServerCore) -> Policy | None:
    """The policy deciding for `core`, if any."""
    from .point import PolicyPoint

    point = core.extension(PolicyPoint)
    return point.policy if point is not None else None
