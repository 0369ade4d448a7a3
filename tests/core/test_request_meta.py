"""The 2026-07-28 per-request `_meta`: which era a message is, and the envelope's errors."""

from __future__ import annotations

from typing import Any

import pytest
from codex_mcp.core.request_meta import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    EnvelopeError,
    is_stateless,
    missing_capability_error,
    parse_request_meta,
)
from codex_mcp.core.versions import V2025_11_25, V2026_07_28

ENVELOPE = {
    PROTOCOL_VERSION_KEY: V2026_07_28,
    CLIENT_INFO_KEY: {"name": "codex-mcp-client", "version": "0.169.0"},
    CLIENT_CAPABILITIES_KEY: {"elicitation": {"form": {}, "url": {}}},
}


def request(method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        message["params"] = params
    return message


@pytest.mark.parametrize(
    "message",
    [
        request("tools/call", {"name": "echo", "_meta": ENVELOPE}),
        request("tools/list", {"_meta": {PROTOCOL_VERSION_KEY: "1900-01-01"}}),
        # Half-built envelopes are stateless, so they are told what they lack.
        request("server/discover", {"_meta": {CLIENT_CAPABILITIES_KEY: {}}}),
        request("tools/list", {"_meta": {CLIENT_INFO_KEY: {"name": "x", "version": "1"}}}),
        request("tools/list", {"_meta": {LOG_LEVEL_KEY: "info"}}),
        # Methods only the stateless era has, even bare.
        request("server/discover"),
        request("subscriptions/listen", {}),
        request("tasks/update", {"taskId": "t"}),
        # `initialize` carrying the envelope is stateless (and has no handler there: -32601).
        request("initialize", {"protocolVersion": V2025_11_25, "_meta": ENVELOPE}),
    ],
)
def test_modern_messages(message: dict[str, Any]) -> None:
    assert is_stateless(message)


@pytest.mark.parametrize(
    "message",
    [
        request("initialize", {"protocolVersion": V2025_11_25, "capabilities": {}}),
        request("tools/call", {"name": "echo", "arguments": {}}),
        # What Codex 0.169 sends after a 2025-06-18 handshake: _meta, but no envelope key.
        request("tools/call", {"name": "echo", "_meta": {"progressToken": 1, "callId": "c"}}),
        request("tools/list"),
        request("ping"),
        # 2025-11-25 tasks share these names; without the envelope they stay legacy.
        request("tasks/get", {"taskId": "t"}),
        request("tasks/cancel", {"taskId": "t"}),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        # Malformed shapes never raise here.
        request("tools/list", ["not", "an", "object"]),
        request("tools/list", {"_meta": "not an object"}),
        {"jsonrpc": "2.0", "id": 1, "method": ["unhashable"]},
    ],
)
def test_legacy_messages(message: dict[str, Any]) -> None:
    assert not is_stateless(message)


def test_the_http_version_header_makes_a_bare_request_modern() -> None:
    bare = request("tools/list")
    assert is_stateless(bare, protocol_version_header=V2026_07_28)
    assert not is_stateless(bare, protocol_version_header=V2025_11_25)
    assert not is_stateless(bare, protocol_version_header="v999.0.0")
    assert not is_stateless(bare, protocol_version_header=None)


def test_parse_a_full_envelope() -> None:
    meta = parse_request_meta({"name": "x", "_meta": {**ENVELOPE, "progressToken": "p1"}})
    assert meta.protocol_version == V2026_07_28
    assert meta.client_info == {"name": "codex-mcp-client", "version": "0.169.0"}
    assert meta.client_capabilities == {"elicitation": {"form": {}, "url": {}}}
    assert meta.progress_token == "p1"
    assert meta.log_level is None


def test_client_info_is_optional() -> None:
    envelope = {PROTOCOL_VERSION_KEY: V2026_07_28, CLIENT_CAPABILITIES_KEY: {}}
    meta = parse_request_meta({"_meta": envelope})
    assert meta.client_info is None
    assert meta.client_capabilities == {}


def assert_envelope_error(params: Any, code: int, *words: str) -> EnvelopeError:
    with pytest.raises(EnvelopeError) as caught:
        parse_request_meta(params)
    error = caught.value
    assert error.code == code
    assert error.http_status == 400
    for word in words:
        assert word in error.message
    return error


@pytest.mark.parametrize("params", [None, {}, {"name": "x"}, {"_meta": None}, {"_meta": []}, []])
def test_missing_meta_is_invalid_params(params: Any) -> None:
    assert_envelope_error(params, -32602, "missing _meta", PROTOCOL_VERSION_KEY)


def test_missing_required_keys_are_named() -> None:
    only_info = {"_meta": {CLIENT_INFO_KEY: {"name": "x", "version": "1"}}}
    assert_envelope_error(only_info, -32602, PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY)
    no_caps = {"_meta": {PROTOCOL_VERSION_KEY: V2026_07_28}}
    error = assert_envelope_error(no_caps, -32602, CLIENT_CAPABILITIES_KEY)
    assert PROTOCOL_VERSION_KEY not in error.message


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        (PROTOCOL_VERSION_KEY, 20260728, ("must be a string",)),
        (CLIENT_CAPABILITIES_KEY, [], ("must be an object",)),
        (CLIENT_INFO_KEY, "codex", ("must be an object",)),
        (LOG_LEVEL_KEY, "verbose", ("'verbose' is not a log level",)),
    ],
)
def test_malformed_values_are_invalid_params(key: str, value: Any, words: tuple[str, ...]) -> None:
    assert_envelope_error({"_meta": {**ENVELOPE, key: value}}, -32602, key, *words)


@pytest.mark.parametrize("version", ["1900-01-01", V2025_11_25, "v999.0.0"])
def test_unsupported_version_lists_what_we_serve(version: str) -> None:
    error = assert_envelope_error(
        {"_meta": {**ENVELOPE, PROTOCOL_VERSION_KEY: version}}, -32022, "Unsupported"
    )
    assert error.to_error() == {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": [V2026_07_28], "requested": version},
    }


def test_unsupported_version_wins_over_fields_it_would_define() -> None:
    envelope = {**ENVELOPE, PROTOCOL_VERSION_KEY: "2099-01-01", LOG_LEVEL_KEY: "verbose"}
    assert_envelope_error({"_meta": envelope}, -32022)


def test_supported_versions_are_the_callers_choice() -> None:
    envelope = {**ENVELOPE, PROTOCOL_VERSION_KEY: "2027-01-01"}
    meta = parse_request_meta({"_meta": envelope}, supported=("2027-01-01", V2026_07_28))
    assert meta.protocol_version == "2027-01-01"


def test_progress_token_must_be_a_string_or_integer() -> None:
    for token, expected in [(7, 7), ("t", "t"), (True, None), (1.5, None), (None, None)]:
        meta = parse_request_meta({"_meta": {**ENVELOPE, "progressToken": token}})
        assert meta.progress_token == expected


def test_no_log_notifications_without_a_requested_level() -> None:
    silent = parse_request_meta({"_meta": ENVELOPE})
    assert not any(silent.logs(level) for level in ("debug", "error", "emergency"))
    warning = parse_request_meta({"_meta": {**ENVELOPE, LOG_LEVEL_KEY: "warning"}})
    assert [warning.logs(level) for level in ("info", "notice", "warning", "error")] == [
        False,
        False,
        True,
        True,
    ]


def meta_with(capabilities: dict[str, Any]) -> Any:
    return parse_request_meta({"_meta": {**ENVELOPE, CLIENT_CAPABILITIES_KEY: capabilities}})


def test_capability_queries() -> None:
    empty_elicitation = meta_with({"elicitation": {}, "sampling": {}, "roots": {}})
    assert empty_elicitation.supports_elicitation("form")
    assert not empty_elicitation.supports_elicitation("url")
    assert empty_elicitation.supports_sampling()
    assert not empty_elicitation.supports_sampling(tools=True)
    assert empty_elicitation.supports_roots()
    url_only = meta_with({"elicitation": {"url": {}}, "sampling": {"tools": {}}})
    assert url_only.supports_elicitation("url")
    assert not url_only.supports_elicitation("form")
    assert url_only.supports_sampling(tools=True)
    assert not url_only.supports_roots()
    tasks = meta_with({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    assert tasks.supports_extension("io.modelcontextprotocol/tasks")
    assert not meta_with({}).supports_extension("io.modelcontextprotocol/tasks")
    assert not meta_with({"elicitation": True}).supports_elicitation()


def test_missing_capability_error_names_what_is_missing() -> None:
    meta = meta_with({"elicitation": {}})
    assert meta.missing({"elicitation": {}}) == {}
    assert meta.missing({"elicitation": {"form": {}}}) == {}
    assert meta.missing({"elicitation": {"url": {}}}) == {"elicitation": {"url": {}}}
    with pytest.raises(EnvelopeError) as caught:
        meta.require({"sampling": {}, "elicitation": {"form": {}}})
    assert caught.value.http_status == 400
    assert caught.value.to_error() == {
        "code": -32021,
        "message": "Missing required client capability: sampling",
        "data": {"requiredCapabilities": {"sampling": {}}},
    }
    meta.require({"elicitation": {}})


def test_missing_extension_is_named_like_the_tasks_extension_spec_shows() -> None:
    error = missing_capability_error({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    assert error.to_error() == {
        "code": -32021,
        "message": "Missing required client capability: extension io.modelcontextprotocol/tasks",
        "data": {"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}},
    }
    partial = meta_with({"extensions": {"com.example/other": {}}})
    assert partial.missing({"extensions": {"io.modelcontextprotocol/tasks": {}}}) == {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    }
