"""The 2026-07-28 HTTP routing headers against their body, including the conformance cases."""

from __future__ import annotations

from typing import Any

import pytest
from codex_mcp.core.request_meta import PROTOCOL_VERSION_KEY
from codex_mcp.core.routing_headers import (
    HeaderMismatch,
    ParamHeader,
    check_param_headers,
    check_standard_headers,
    decode_header_value,
    encode_header_value,
    param_headers,
)
from multidict import CIMultiDict

META = {PROTOCOL_VERSION_KEY: "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def call(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}


def headers(**values: str) -> CIMultiDict[str]:
    """Request headers as aiohttp hands them over: names compared case-insensitively."""
    found: CIMultiDict[str] = CIMultiDict({"MCP-Protocol-Version": "2026-07-28"})
    for name, value in values.items():
        found[name.replace("_", "-")] = value
    return found


def mismatch(got: CIMultiDict[str], message: dict[str, Any]) -> str:
    with pytest.raises(HeaderMismatch) as caught:
        check_standard_headers(got, message)
    assert caught.value.code == -32020
    assert caught.value.http_status == 400
    return caught.value.message


def test_consistent_headers_pass() -> None:
    check_standard_headers(headers(Mcp_Method="tools/list"), call("tools/list"))
    check_standard_headers(
        headers(Mcp_Method="tools/call", Mcp_Name="echo"), call("tools/call", name="echo")
    )
    check_standard_headers(
        headers(Mcp_Method="resources/read", Mcp_Name="file:///a.txt"),
        call("resources/read", uri="file:///a.txt"),
    )
    check_standard_headers(
        headers(Mcp_Method="tasks/get", Mcp_Name="t-1"), call("tasks/get", taskId="t-1")
    )


def test_header_names_are_case_insensitive_values_are_not() -> None:
    for name in ("mcp-method", "MCP-METHOD", "Mcp-Method"):
        found = CIMultiDict({"mcp-protocol-version": "2026-07-28", name: "tools/list"})
        check_standard_headers(found, call("tools/list"))
    assert "TOOLS/LIST" in mismatch(headers(Mcp_Method="TOOLS/LIST"), call("tools/list"))


def test_method_header_missing_or_different() -> None:
    assert "Mcp-Method header is missing" in mismatch(headers(), call("tools/list"))
    message = mismatch(headers(Mcp_Method="prompts/list"), call("tools/list"))
    assert message == (
        "Header mismatch: Mcp-Method header value 'prompts/list' "
        "does not match body value 'tools/list'"
    )


def test_name_header_missing_different_or_padded() -> None:
    body = call("tools/call", name="echo", arguments={})
    assert "Mcp-Name header is missing" in mismatch(headers(Mcp_Method="tools/call"), body)
    assert "'wrong_tool_name'" in mismatch(
        headers(Mcp_Method="tools/call", Mcp_Name="wrong_tool_name"), body
    )
    # RFC 9110: optional whitespace around a field value is not part of it.
    check_standard_headers(headers(Mcp_Method=" tools/call ", Mcp_Name="  echo  "), body)


def test_name_header_only_where_the_body_names_something() -> None:
    check_standard_headers(headers(Mcp_Method="tools/list", Mcp_Name="stray"), call("tools/list"))
    nameless = call("tools/call", arguments={})
    check_standard_headers(headers(Mcp_Method="tools/call"), nameless)


def test_protocol_version_header_must_match_the_body() -> None:
    body = call("server/discover")
    body["params"]["_meta"] = {**META, PROTOCOL_VERSION_KEY: "v999.0.0"}
    assert "MCP-Protocol-Version" in mismatch(headers(Mcp_Method="server/discover"), body)
    missing = CIMultiDict({"Mcp-Method": "tools/list"})
    assert "MCP-Protocol-Version header is missing" in mismatch(missing, call("tools/list"))
    # No version in the body: the _meta check answers that one (-32602), not this.
    bare = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}
    check_standard_headers(headers(Mcp_Method="server/discover"), bare)


def test_base64_names_are_decoded_before_comparing() -> None:
    uri = "file:///projets/résumé.txt"
    encoded = encode_header_value(uri)
    assert encoded.startswith("=?base64?") and encoded.endswith("?=")
    check_standard_headers(
        headers(Mcp_Method="resources/read", Mcp_Name=encoded), call("resources/read", uri=uri)
    )


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_encoding_follows_the_spec_table(value: str, encoded: str) -> None:
    assert encode_header_value(value) == encoded
    assert decode_header_value(encoded, "Mcp-Param-X") == value


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("=?base64?SGVsbG8?=", "not valid Base64"),  # padding missing
        ("=?base64?SGVs!!!bG8=?=", "not valid Base64"),
        ("=?base64?/w==?=", "not valid Base64"),  # not UTF-8
        ("caf\u00e9", "invalid characters"),
        ("a\x00b", "invalid characters"),
    ],
)
def test_bad_values_are_a_mismatch(raw: str, problem: str) -> None:
    with pytest.raises(HeaderMismatch, match=problem):
        decode_header_value(raw, "Mcp-Param-Region")


def test_values_without_the_whole_sentinel_are_literal() -> None:
    assert decode_header_value("SGVsbG8=", "X") == "SGVsbG8="
    assert decode_header_value("=?base64?SGVsbG8=", "X") == "=?base64?SGVsbG8="
    assert decode_header_value("SGVsbG8=?=", "X") == "SGVsbG8=?="


SQL_TOOL = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "query": {"type": "string"},
        "limits": {
            "type": "object",
            "properties": {
                "rows": {"type": "integer", "x-mcp-header": "Rows"},
                "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
            },
        },
    },
    "required": ["region", "query"],
}


def test_annotations_are_found_with_their_paths() -> None:
    assert param_headers(SQL_TOOL) == (
        ParamHeader(("region",), "Region", "string"),
        ParamHeader(("limits", "rows"), "Rows", "integer"),
        ParamHeader(("limits", "dry"), "Dry-Run", "boolean"),
    )
    assert param_headers({"type": "object", "properties": {"a": {"type": "string"}}}) == ()
    assert param_headers(None) == ()


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}, "token"),
        ({"properties": {"a": {"type": "string", "x-mcp-header": "Bad Name"}}}, "token"),
        ({"properties": {"a": {"type": "string", "x-mcp-header": "A\r\nB"}}}, "token"),
        (
            {
                "properties": {
                    "a": {"type": "string", "x-mcp-header": "Dup"},
                    "b": {"type": "string", "x-mcp-header": "dup"},
                }
            },
            "twice",
        ),
        ({"properties": {"a": {"type": "number", "x-mcp-header": "N"}}}, "'number'"),
        ({"properties": {"a": {"type": "object", "x-mcp-header": "O"}}}, "'object'"),
        (
            {"properties": {"a": {"type": "array", "items": {"x-mcp-header": "I"}}}},
            "reached via",
        ),
        ({"anyOf": [{"properties": {"a": {"x-mcp-header": "C"}}}]}, "reached via"),
        ({"$defs": {"d": {"properties": {"a": {"x-mcp-header": "D"}}}}}, "reached via"),
        ({"type": "string", "x-mcp-header": "Root"}, "reached via"),
    ],
)
def test_invalid_annotations_are_refused(schema: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        param_headers(schema)


def test_annotations_inside_data_keywords_are_not_annotations() -> None:
    schema = {
        "properties": {"a": {"type": "string", "default": {"x-mcp-header": "NotOne"}}},
        "examples": [{"x-mcp-header": "NorThis"}],
    }
    assert param_headers(schema) == ()


def test_param_headers_checked_against_arguments() -> None:
    annotated = param_headers(SQL_TOOL)
    arguments = {"region": "us-west1", "query": "SELECT 1", "limits": {"rows": 42, "dry": False}}
    sent = headers(Mcp_Param_Region="us-west1", Mcp_Param_Rows="42", Mcp_Param_Dry_Run="false")
    check_param_headers(sent, annotated, arguments)
    # Integers compare as numbers; header names are case-insensitive.
    check_param_headers(
        CIMultiDict(
            {"mcp-param-region": "us-west1", "MCP-PARAM-ROWS": "42.0", "mcp-param-dry-run": "false"}
        ),
        annotated,
        arguments,
    )
    # Absent or null arguments need no header.
    check_param_headers(headers(Mcp_Param_Region="eu"), annotated, {"region": "eu"})
    check_param_headers(headers(), annotated, {"region": None, "limits": None})


@pytest.mark.parametrize(
    ("sent", "problem"),
    [
        ({}, "Mcp-Param-Region header is missing"),
        ({"Mcp-Param-Region": "us-east1"}, "does not match"),
        ({"Mcp-Param-Region": "=?base64?SGVsbG8?="}, "not valid Base64"),
    ],
)
def test_param_header_missing_or_wrong(sent: dict[str, str], problem: str) -> None:
    with pytest.raises(HeaderMismatch, match=problem) as caught:
        check_param_headers(
            headers(**{k.replace("-", "_"): v for k, v in sent.items()}),
            param_headers(SQL_TOOL),
            {"region": "us-west1"},
        )
    assert caught.value.code == -32020


@pytest.mark.parametrize(
    ("header", "value", "same"),
    [
        ("true", True, True),
        ("True", True, False),
        ("1", True, False),
        ("-7", -7, True),
        ("7", 7.0, True),
        ("7.5", 7, False),
        ("seven", 7, False),
        (str(2**60), 2**60, False),  # beyond the safe integer range: never mirrored
        ("Hello", "Hello", True),
        ("=?base64?SGVsbG8=?=", "Hello", True),
    ],
)
def test_value_comparison(header: str, value: Any, same: bool) -> None:
    annotated = (ParamHeader(("v",), "V", "string"),)
    check = lambda: check_param_headers(headers(Mcp_Param_V=header), annotated, {"v": value})  # noqa: E731
    if same:
        check()
    else:
        with pytest.raises(HeaderMismatch):
            check()
