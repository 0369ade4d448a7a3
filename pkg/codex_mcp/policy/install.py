"""The policy a server runs with, from its settings: `--policy FILE` and the rules of
`--oauth-tool-scope`; checked before anything starts (one line, and no start)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..launch import StartupError
from .config import PolicyConfig, PolicyError, load_policy, tool_scope_rules
from .decide import Policy
from .provider import PolicedProvider

if TYPE_CHECKING:
    from ..core.server import ServerCore


@dataclass(frozen=True, slots=True)
class Checked:
    policy: Policy

    def install(self, core: ServerCore) -> None:
        """Decide for `core`: a gateway's core has its enforcement point already (its
        entries' rules), which takes this policy; another gets one when anything could
        be denied."""
        install(core, self.policy)


def checked_policy(settings: Any, prog: str) -> Checked:
    path = getattr(settings, "policy", None)
    try:
        config = load_policy(path) if path is not None else PolicyConfig()
        fixed = tool_scope_rules(getattr(settings, "oauth_tool_scope", ()) or ())
    except (PolicyError, StartupError) as error:
        raise SystemExit(f"{prog}: {error}") from None
    return Checked(Policy(config, fixed))


def install(core: ServerCore, policy: Policy) -> None:
    provider = core.provider
    if isinstance(provider, PolicedProvider):
        provider.policy = policy
    elif not policy.allows_everything:
        core.provider = PolicedProvider(provider, policy)


def policy_of(core: ServerCore) -> Policy | None:
    """The policy deciding for `core`, if any."""
    provider = core.provider
    return provider.policy if isinstance(provider, PolicedProvider) else None
