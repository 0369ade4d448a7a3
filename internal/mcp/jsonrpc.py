"""JSON-RPC 2.0 envelopes: error codes, message classification and encoding; messages stay
plain dicts (decision 2)."""

from __future__ import annotations

from typing import Any, Final

import orjson

from .errors import McpError

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

RequestId = str | int
JsonObject = dict[str, Any]


def invalid_params(message: str, data: Any = None) -> McpError:
    return McpError(INVALID_PARAMS, message, data)


def result_response(request_id: RequestId | None, result: Any) -> JsonObject:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(
    request_id: RequestId | None, code: int, message: str, data: Any = None
) -> JsonObject:
    error: JsonObject = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def notification(method: str, params: JsonObject | None = None) -> JsonObject:
    message: JsonObject = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def request(request_id: RequestId, method: str, params: JsonObject | None = None) -> JsonObject:
    message: JsonObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def is_valid_id(value: Any) -> bool:
    kind = type(value)
    if kind is str or kind is int:  # the usual ids, checked first: this runs per message
        return True
    # bool is an int subclass, but true/false are not valid ids (true would alias id 1).
    return isinstance(value, str | int) and not isinstance(value, bool)


def response_id(value: Any) -> RequestId | None:
    """The id of a response, for correlation with a request we sent; None when it cannot
    name one. We mint integer ids; a peer that echoes 7 as "7" still correlates (as the
    TypeScript SDK does), while true, 1.0, lists and objects never do."""
    if type(value) is int:
        return value
    if type(value) is str:
        return int(value) if value.isascii() and value.isdigit() and len(value) < 20 else value
    return None


def error_from_wire(error: Any) -> McpError:
    """A peer's `error` member as a McpError, whatever shape it came in: a code that is
    not an integer, or an error that is not an object, becomes -32603 naming what came."""
    if type(error) is not dict:
        return McpError(INTERNAL_ERROR, f"malformed error response: {_preview(error)}")
    code = error.get("code")
    message = error.get("message")
    text = message if type(message) is str else _preview(message) if message is not None else ""
    if type(code) is not int:
        return McpError(
            INTERNAL_ERROR,
            f"malformed error response (code {_preview(code)}): {text}".rstrip(": "),
            error.get("data"),
        )
    return McpError(code, text, error.get("data"))


def _preview(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def decode(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse one JSON text; raises McpError(PARSE_ERROR) on malformed input."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise McpError(PARSE_ERROR, f"Parse error: {exc}") from None


def encode(message: Any) -> bytes:
    return orjson.dumps(message)
