"""The per-request `_meta` envelope of 2026-07-28, and which era a message belongs to; pure
functions (specs/mcp-2026-07-28.md, 1.1 and 1.2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .errors import McpError
from .jsonrpc import INVALID_PARAMS
from .log_levels import LOG_LEVEL_RANK, LOG_LEVELS
from .versions import STATELESS_VERSIONS

# Reserved `_meta` keys (basic/index.mdx, "_meta").
PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"
TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"

# Error codes the revision defines (basic/index.mdx, "Error Codes").
HEADER_MISMATCH: Final = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022

# `resultType` values: the core's two, and the tasks extension's.
RESULT_COMPLETE: Final = "complete"
RESULT_INPUT_REQUIRED: Final = "input_required"
RESULT_TASK: Final = "task"


# Methods only the stateless era has: one of these is stateless even without its envelope, so
# it gets "missing _meta" rather than "method not found". (`tasks/get` and
# `tasks/cancel` also exist in 2025-11-25's tasks, so they are decided by the envelope.)
STATELESS_ONLY_METHODS: Final = frozenset(
    {"server/discover", "subscriptions/listen", "tasks/update"}
)
#: Any of these in a request's `_meta` makes it stateless.
ENVELOPE_KEYS: Final = frozenset(
    {PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY}
)


class EnvelopeError(McpError):
    """A request the revision rejects before serving it; on HTTP, a 400 Bad Request."""

    http_status: int = 400


def is_stateless(message: Mapping[str, Any], *, protocol_version_header: str | None = None) -> bool:
    """Whether a request belongs to the 2026-07-28 era (served statelessly).

    Stateless: its `_meta` carries any of the per-request protocol keys (a reserved prefix
    no older client uses; any one of them, so a half-built envelope is stateless and is told
    what it lacks), or its method exists only in the stateless era, or, on HTTP, its
    `MCP-Protocol-Version` header names a stateless revision. Everything else, `initialize`
    included, is legacy. An `initialize` that does carry the envelope is stateless, and
    stateless has no `initialize`: it gets -32601 like any unknown method.

    Runs once per message, so it allocates nothing. Notifications and responses are
    era-neutral: cancellation finds its request by id whatever the era.
    """
    params = message.get("params")
    method = message.get("method")
    if is_stateless_request(method, params if type(params) is dict else None):
        return True
    return protocol_version_header is not None and protocol_version_header in STATELESS_VERSIONS


def is_stateless_request(method: object, params: Mapping[str, Any] | None) -> bool:
    """`is_stateless` for a request already taken apart (the session's per-request test):
    the envelope keys in `params._meta`, or a stateless-only method. Allocates nothing."""
    if params is not None:
        meta = params.get("_meta")
        if type(meta) is dict and not ENVELOPE_KEYS.isdisjoint(meta):
            return True
    return type(method) is str and method in STATELESS_ONLY_METHODS


@dataclass(frozen=True, slots=True)
class RequestMeta:
    """The validated envelope of one stateless request."""

    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    log_level: str | None
    progress_token: str | int | None

    def logs(self, level: str) -> bool:
        """Whether a `notifications/message` at `level` may be sent for this request.

        Never without a requested level: the revision forbids log notifications for a
        request that did not ask for them (server/utilities/logging.mdx).
        """
        if self.log_level is None:
            return False
        return LOG_LEVEL_RANK.get(level, len(LOG_LEVELS)) >= LOG_LEVEL_RANK[self.log_level]

    def supports_elicitation(self, mode: str = "form") -> bool:
        """Whether the client declared elicitation in `mode` ("form" or "url").

        An empty `elicitation` object means form mode only (client/elicitation.mdx).
        """
        declared = self.client_capabilities.get("elicitation")
        if not isinstance(declared, dict):
            return False
        if not declared:
            return mode == "form"
        return mode in declared

    def supports_sampling(self, *, tools: bool = False) -> bool:
        declared = self.client_capabilities.get("sampling")
        return isinstance(declared, dict) and (not tools or "tools" in declared)

    def supports_roots(self) -> bool:
        return isinstance(self.client_capabilities.get("roots"), dict)

    def supports_extension(self, identifier: str) -> bool:
        extensions = self.client_capabilities.get("extensions")
        return isinstance(extensions, dict) and isinstance(extensions.get(identifier), dict)

    def missing(self, required: Mapping[str, Any]) -> dict[str, Any]:
        """The part of `required` (a ClientCapabilities object) this client did not declare."""
        return _missing(required, self.client_capabilities)

    def require(self, required: Mapping[str, Any]) -> None:
        """Raise -32021 naming what is missing unless the client declared all of `required`."""
        missing = self.missing(required)
        if missing:
            raise missing_capability_error(missing)


def _missing(required: Mapping[str, Any], declared: Mapping[str, Any]) -> dict[str, Any]:
    missing: dict[str, Any] = {}
    for name, needed in required.items():
        have = declared.get(name)
        if not isinstance(have, dict):
            missing[name] = needed
            continue
        if name == "elicitation" and not have:
            have = {"form": {}}  # the empty object's meaning
        if isinstance(needed, Mapping) and needed:
            nested = _missing(needed, have)
            if nested:
                missing[name] = nested
    return missing


def parse_request_meta(
    params: object, *, supported: Sequence[str] = STATELESS_VERSIONS
) -> RequestMeta:
    """Validate a stateless request's `params._meta`; raise the error the revision names.

    -32602 (an EnvelopeError: HTTP 400) when `_meta` or a required key is missing or
    malformed, or the log level is unknown; -32022 with `data.supported` and
    `data.requested` when the version is not one of `supported`. `clientInfo` is
    optional (a SHOULD), so its absence is fine.
    """
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        raise EnvelopeError(
            INVALID_PARAMS,
            f"Invalid params: missing _meta; every request carries {PROTOCOL_VERSION_KEY} "
            f"and {CLIENT_CAPABILITIES_KEY} in params._meta",
        )
    absent = [key for key in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY) if key not in meta]
    if absent:
        raise EnvelopeError(
            INVALID_PARAMS, f"Invalid params: _meta is missing {' and '.join(absent)}"
        )
    version = meta[PROTOCOL_VERSION_KEY]
    if not isinstance(version, str):
        raise EnvelopeError(
            INVALID_PARAMS, f"Invalid params: {PROTOCOL_VERSION_KEY} must be a string"
        )
    capabilities = meta[CLIENT_CAPABILITIES_KEY]
    if not isinstance(capabilities, dict):
        raise EnvelopeError(
            INVALID_PARAMS, f"Invalid params: {CLIENT_CAPABILITIES_KEY} must be an object"
        )
    if version not in supported:
        raise unsupported_version_error(version, supported)
    client_info = meta.get(CLIENT_INFO_KEY)
    if client_info is not None and not isinstance(client_info, dict):
        raise EnvelopeError(INVALID_PARAMS, f"Invalid params: {CLIENT_INFO_KEY} must be an object")
    log_level = meta.get(LOG_LEVEL_KEY)
    if log_level is not None and log_level not in LOG_LEVEL_RANK:
        raise EnvelopeError(
            INVALID_PARAMS,
            f"Invalid params: {LOG_LEVEL_KEY} {log_level!r} is not a log level; "
            f"one of {', '.join(LOG_LEVELS)}",
        )
    token = meta.get("progressToken")
    if type(token) is not str and type(token) is not int:
        token = None
    return RequestMeta(
        protocol_version=version,
        client_capabilities=capabilities,
        client_info=client_info,
        log_level=log_level,
        progress_token=token,
    )


def unsupported_version_error(requested: str, supported: Sequence[str]) -> EnvelopeError:
    """-32022, listing what we serve so the client can retry with one of them."""
    return EnvelopeError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        {"supported": list(supported), "requested": requested},
    )


def missing_capability_error(required: Mapping[str, Any]) -> EnvelopeError:
    """-32021; `data.requiredCapabilities` is a ClientCapabilities object, e.g. {"sampling": {}}."""
    names: list[str] = []
    for name, value in required.items():
        if name == "extensions" and isinstance(value, Mapping):
            names.extend(f"extension {identifier}" for identifier in value)
        else:
            names.append(name)
    return EnvelopeError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Missing required client capability: {', '.join(names)}",
        {"requiredCapabilities": dict(required)},
    )
