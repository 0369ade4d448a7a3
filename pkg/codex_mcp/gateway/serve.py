"""The gateway as a ServerCore, for any transport; `initialize` bounded (specs/gateway.md,
"Serving": Start)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING

from codex_mcp import __version__
from codex_mcp.core.extensions import Extension
from codex_mcp.core.server import ServerCore
from codex_mcp.policy.config import PolicyConfig
from codex_mcp.policy.decide import Policy
from codex_mcp.policy.gateway import GatewayNames
from codex_mcp.policy.point import PolicyPoint

from .children.connection import OpenTransport
from .config.env import GatewayEnv
from .config.model import GatewayConfig
from .provider import GatewayProvider

if TYPE_CHECKING:
    from codex_mcp.core.session import ServerSession

log = logging.getLogger("codex_mcp.gateway")


class StartWait(Extension):
    """`initialize` waits (bounded) for the children's first start, so the session's first
    listing has them."""

    def __init__(self, provider: GatewayProvider, timeout: float) -> None:
        self.provider = provider
        self.timeout = timeout

    def ready(self, session: ServerSession) -> Awaitable[None] | None:
        if self.provider.settled or self.timeout <= 0:
            return None
        return self.provider.wait_started(self.timeout)


def build_core(
    config: GatewayConfig,
    env: GatewayEnv | None = None,
    *,
    open_transport: OpenTransport | None = None,
) -> ServerCore:
    """The gateway's server core; `open_transport` reaches the children some other way than
    their entries say (tests: servers in memory)."""
    env = env or GatewayEnv.read()
    for warning in (*config.warnings, *env.warnings):
        log.warning("%s", warning)
    provider = GatewayProvider(config, env, open_transport=open_transport)
    core = ServerCore(provider, name="codex-mcp", version=__version__, title="codex-mcp gateway")
    core.flow = provider.flow
    core.extend(StartWait(provider, env.init_timeout))
    # Its entries' tool lists are policy rules: listing and calling decide alike, and a
    # reload may bring rules or drop them (the point folds its interceptors again).
    core.extend(PolicyPoint(core, Policy(PolicyConfig()), GatewayNames(provider)))
    provider.config_listeners.append(core.refold)
    provider.front_tasks.install(core)  # 2025-11-25 tasks: declared while a child offers them
    return core
