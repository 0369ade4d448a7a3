"""The gateway as a ServerCore, for any transport; `initialize` bounded (specs/gateway.md,
"Serving": Start)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from codex_mcp import __version__
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.peer import MethodEntry
from codex_mcp.core.ready import Ready
from codex_mcp.core.server import ServerCore
from codex_mcp.policy.config import PolicyConfig
from codex_mcp.policy.decide import Policy
from codex_mcp.policy.gateway import GatewayNames
from codex_mcp.policy.provider import PolicedProvider

from .children.connection import OpenTransport
from .config.env import GatewayEnv
from .config.model import GatewayConfig
from .provider import GatewayProvider

if TYPE_CHECKING:
    from codex_mcp.core.context import RequestContext
    from codex_mcp.core.session import ServerSession

log = logging.getLogger("codex_mcp.gateway")


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
    # Its entries' tool lists are policy rules: listing and calling decide alike.
    policed = PolicedProvider(provider, Policy(PolicyConfig()), GatewayNames(provider))
    provider.config_listeners.append(policed.rebind)  # a reload may bring rules, or drop them
    core = ServerCore(policed, name="codex-mcp", version=__version__, title="codex-mcp gateway")
    core.flow = provider.flow
    answer = core.methods["initialize"].handler

    def initialize(
        session: ServerSession, params: JsonObject, ctx: RequestContext
    ) -> Awaitable[Any]:
        if provider.settled or env.init_timeout <= 0:
            return Ready(answer(session, params, None))
        return _after_start(session, params)

    async def _after_start(session: ServerSession, params: JsonObject) -> Any:
        await provider.wait_started(env.init_timeout)
        return answer(session, params, None)

    core.methods["initialize"] = MethodEntry(initialize)
    provider.tasks_2025.install(core)  # 2025-11-25 tasks: declared while a child offers them
    return core
