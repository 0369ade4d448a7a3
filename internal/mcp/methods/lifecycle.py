from __future__ import annotations

from typing import TYPE_CHECKING

from ..jsonrpc import JsonObject, invalid_params
from ..versions import negotiate
from .table import MethodTable, inline

if TYPE_CHECKING:
    from ..session import ServerSession


def initialize(session: ServerSession, params: JsonObject, _: None) -> JsonObject:
    capabilities = params.get("capabilities", {})
    client_info = params.get("clientInfo", {})
    if not isinstance(capabilities, dict):
        raise invalid_params("'capabilities' must be an object")
    if not isinstance(client_info, dict):
        raise invalid_params("'clientInfo' must be an object")
    # A missing protocolVersion (old Codex-style callers send bare `{}`) gets our latest.
    version = negotiate(params.get("protocolVersion"))
    session.protocol_version = version
    session.client_capabilities = capabilities
    session.client_info = client_info
    session.state_changed()
    core = session.core
    result: JsonObject = {
        "protocolVersion": version,
        "capabilities": core.capabilities(),
        "serverInfo": core.server_info,
    }
    if core.instructions:
        result["instructions"] = core.instructions
    return result


def ping(session: ServerSession, params: JsonObject, _: None) -> JsonObject:
    return {}


METHODS: MethodTable = {"initialize": inline(initialize), "ping": inline(ping)}
