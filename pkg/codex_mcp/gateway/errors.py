"""A child's error, or a failure to start or reach it, normalized as the TypeScript wrapper
did (specs/gateway.md, "Errors"). Pure functions: no I/O, no logging."""

from __future__ import annotations

import errno
import os
import re
import shlex
from collections.abc import Mapping
from typing import Any, Final, Literal, TypeGuard

from codex_mcp.core.errors import CodexMcpError, McpError
from codex_mcp.core.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    JsonObject,
)

ErrorKind = Literal["tool_error", "server_error", "spawn_error"]
PASSTHROUGH_ENV = "WRAPPER_ERROR_PASSTHROUGH"

SERVER_ERROR_RANGE = range(-32099, -32000 + 1)
#: The code for failures that are ours, not the child's (spawn, crash): implementation range.
GATEWAY_ERROR = -32000
REQUEST_TIMEOUT = -32001  # as the MCP SDKs use it

_LABELS = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
}
_NOT_RETRYABLE = {PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS}
#: Words in an original error that say "try again later".
_TRANSIENT = re.compile(
    r"time(d)?[ -]?out|temporar|unavailable|try again|retry|rate.?limit|too many requests|"
    r"busy|overload|locked|ECONNRESET|ECONNREFUSED|EAGAIN|EPIPE|connection (reset|refused|closed)",
    re.IGNORECASE,
)
_MAX_DETAIL = 300


def passthrough_enabled(environ: Mapping[str, str] | None = None) -> bool:
    value = (os.environ if environ is None else environ).get(PASSTHROUGH_ENV, "")
    return value.strip().lower() in ("1", "true")


def one_line(text: Any, limit: int = _MAX_DETAIL) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _context(server: str, tool: str | None) -> str:
    return f"(server {server!r}, tool {tool!r})" if tool else f"(server {server!r})"


def _message(label: str, detail: str, server: str, tool: str | None) -> str:
    detail = one_line(detail)
    if not detail or detail.lower().rstrip(".") == label.lower():
        text = label
    elif detail.lower().startswith(label.lower()):
        text = detail
    else:
        text = f"{label}: {detail}"
    return f"{text} {_context(server, tool)}"


def _error(
    code: int, message: str, kind: ErrorKind, retryable: bool,
    server: str, tool: str | None, original: Any,
) -> dict[str, Any]:  # fmt: skip
    data = {
        "kind": kind,
        "retryable": retryable,
        "toolName": tool,
        "serverName": server,
        "original": original,
    }
    return {"code": code, "message": message, "data": data}


def _stated_retryable(error: Mapping[str, Any]) -> bool | None:
    data = error.get("data")
    if isinstance(data, dict) and isinstance(data.get("retryable"), bool):
        return bool(data["retryable"])
    return None


def normalize_rpc_error(
    error: Mapping[str, Any],
    *,
    server: str,
    tool: str | None = None,
    passthrough: bool = False,
) -> dict[str, Any]:
    """A child's JSON-RPC error object (`{"code", "message", "data"?}`), normalized. `tool`
    is set when the error answered a `tools/call`."""
    if passthrough:
        return dict(error)
    code, detail = error.get("code"), error.get("message", "")
    kind: ErrorKind = "server_error"
    stated = _stated_retryable(error)
    if not isinstance(code, int) or isinstance(code, bool):
        code, label, retryable = INTERNAL_ERROR, "Internal error", True
        detail = f"malformed error from the server: {detail}"
    elif code in _LABELS:
        label, retryable = _LABELS[code], code not in _NOT_RETRYABLE
        if code == INTERNAL_ERROR and stated is not None:
            retryable = stated
    else:
        kind = "tool_error" if tool is not None else "server_error"
        label = (
            "Server error" if code in SERVER_ERROR_RANGE else ("Tool error" if tool else "Error")
        )
        data = error.get("data")
        said = f"{detail} {data if data is not None else ''}"
        retryable = stated if stated is not None else bool(_TRANSIENT.search(said))
    message = _message(label, detail, server, tool)
    return _error(code, message, kind, retryable, server, tool, dict(error))


def spawn_error(
    cause: BaseException | int | str,
    *,
    server: str,
    command: str,
    tool: str | None = None,
) -> dict[str, Any]:
    """A child that could not be started: an OSError (or its errno), or the client library's
    SpawnError (whose message says "command not found" / "permission denied")."""
    number = cause if isinstance(cause, int) else getattr(cause, "errno", None)
    text = str(cause) if not isinstance(cause, int) else os.strerror(cause)
    why = _cannot_run(number, text)
    if why == NOT_FOUND and os.sep in command:  # a path: PATH was never searched
        detail = f"no such file {command!r}. Check the path"
    elif why == NOT_FOUND:
        detail = f"command not found. Check PATH or use the full path to {command!r}"
    elif why == NOT_EXECUTABLE and number != errno.ENOEXEC and "Exec format" not in text:
        detail = f"permission denied. Check that {command!r} is executable"
    elif why == NOT_EXECUTABLE:
        detail = f"{command!r} is not a program this system can run"
    else:
        detail = text
    original = {"type": type(cause).__name__, "message": text, "errno": number, "command": command}
    return _spawn_error(detail, server, tool, original)


#: Why a command cannot run at all: starting it again changes nothing until the user acts.
NOT_FOUND: Final = "not found"
NOT_EXECUTABLE: Final = "not executable"


def _cannot_run(number: int | None, text: str) -> str | None:
    if number == errno.ENOENT or "command not found" in text or "No such file" in text:
        return NOT_FOUND
    if number in (errno.EACCES, errno.ENOEXEC) or "permission denied" in text.lower():
        return NOT_EXECUTABLE
    if "Exec format error" in text:
        return NOT_EXECUTABLE
    return None


def cannot_run(error: JsonObject | None) -> str | None:
    """NOT_FOUND or NOT_EXECUTABLE when `error` is a spawn error of a command that cannot
    run (no such command, not executable, not a program), else None."""
    data = error.get("data") if error is not None else None
    if not isinstance(data, dict) or data.get("kind") != "spawn_error":
        return None
    original = data.get("original")
    if not isinstance(original, dict) or "command" not in original:
        return None
    number = original.get("errno")
    return _cannot_run(number if isinstance(number, int) else None, str(original.get("message")))


def exited_error(
    returncode: int | None, *, server: str, stderr_tail: str = "", tool: str | None = None
) -> dict[str, Any]:
    """The child exited before it was ready (a spawn error) -- not found by a shell wrapper,
    a crash at import, a bad argument."""
    how = f"exited with code {returncode}" if returncode is not None else "exited"
    last = one_line(stderr_tail.strip().splitlines()[-1]) if stderr_tail.strip() else ""
    if returncode == 127:
        detail = (
            f"command not found (the shell said: {last})"
            if last
            else "command not found. Check PATH"
        )
    else:
        detail = f"{how} before it was ready" + (f": {last}" if last else "")
    original = {"type": "exited", "returncode": returncode, "stderr": stderr_tail[-2000:]}
    return _spawn_error(detail, server, tool, original)


def _spawn_error(
    detail: str, server: str, tool: str | None, original: dict[str, Any]
) -> dict[str, Any]:
    message = _message("Spawn error", detail, server, tool)
    return _error(GATEWAY_ERROR, message, "spawn_error", False, server, tool, original)


def crashed_error(*, server: str, tool: str | None = None, detail: str = "") -> dict[str, Any]:
    """The child died (or its connection broke) with this request in flight: retryable, the
    gateway restarts the child."""
    original = {"type": "connection_closed", "message": detail}
    message = _message(
        "Server error", detail or "the server process exited during the request", server, tool
    )
    return _error(INTERNAL_ERROR, message, "server_error", True, server, tool, original)


def timeout_error(seconds: float, *, server: str, tool: str | None = None) -> dict[str, Any]:
    """No answer in time (the child was sent notifications/cancelled). Not retryable: a slow
    tool is slow, and a retry would run its side effects again."""
    original = {"type": "timeout", "seconds": seconds}
    message = _message("Request timed out", f"no answer within {seconds:g} s", server, tool)
    return _error(REQUEST_TIMEOUT, message, "server_error", False, server, tool, original)


def limit_error(
    limit: int, per_principal: bool = False, *, server: str, tool: str | None = None
) -> dict[str, Any]:
    """A per-session child refused: `max_session_children` of them are running, or
    `max_session_children_per_principal` of this credential's."""
    setting = "max_session_children_per_principal" if per_principal else "max_session_children"
    whose, which = (
        (" for this credential", "one of its sessions") if per_principal else ("", "a session")
    )
    detail = (
        f"too many per-session child servers{whose}: {limit} are running "
        f"(the gateway's {setting}); try again when {which} ends"
    )
    original = {"type": "limit", setting: limit}
    message = _message("Server error", detail, server, tool)
    return _error(GATEWAY_ERROR, message, "server_error", True, server, tool, original)


#: A child's state while its server wants a login the gateway cannot do (no browser here).
NEEDS_LOGIN: Final = "needs login"


def needs_login_error(exc: Exception, *, server: str, tool: str | None = None) -> dict[str, Any]:
    """The client's NeedsLogin (`URL: needs login: run `codex-mcp-client login URL``):
    not retryable until the user runs the command, which `data.login` holds."""
    url = str(getattr(exc, "url", ""))
    original = {"type": type(exc).__name__, "message": str(exc), "url": url}
    message = f"{one_line(exc)} {_context(server, tool)}"
    error = _error(GATEWAY_ERROR, message, "server_error", False, server, tool, original)
    # Quoted for a shell when it must be (a query's `&`); a plain URL reads as it is.
    error["data"]["login"] = f"codex-mcp-client login {shlex.quote(url)}"
    return error


def login_command(error: JsonObject | None) -> str | None:
    """`codex-mcp-client login URL` when `error` says its server needs the user's login."""
    data = error.get("data") if error is not None else None
    command = data.get("login") if isinstance(data, dict) else None
    return command if isinstance(command, str) else None


def raised_by_child(exc: BaseException) -> TypeGuard[CodexMcpError]:
    """`exc` came from a child's client session (the front gets it normalized), not from the
    gateway answering the front itself: an `McpError` of the gateway's names no request of
    ours, one the child answered with names the request it answers."""
    return isinstance(exc, CodexMcpError) and not (isinstance(exc, McpError) and exc.method is None)


def normalize_exception(
    exc: BaseException,
    *,
    server: str,
    tool: str | None = None,
    command: str | None = None,
    passthrough: bool = False,
) -> dict[str, Any]:
    """An exception from the library's client (McpError, SpawnError, ConnectionClosed,
    RequestTimeout, TransportError) or an OSError from starting a child. `passthrough`
    keeps a child's own JSON-RPC error as it is (WRAPPER_ERROR_PASSTHROUGH)."""
    # Imported here: the client pulls in aiohttp (~130 ms), which `codex-mcp` without a
    # gateway config must not pay at startup just for importing this package.
    from codex_mcp.client.errors import ConnectionClosed, RequestTimeout, SpawnError, TransportError
    from codex_mcp.client.oauth.errors import NeedsLogin, OAuthError

    if isinstance(exc, McpError):
        error = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        return normalize_rpc_error(error, server=server, tool=tool, passthrough=passthrough)
    if isinstance(exc, SpawnError | FileNotFoundError | PermissionError) or (
        isinstance(exc, OSError) and command
    ):
        return spawn_error(exc, server=server, command=command or "?", tool=tool)
    if isinstance(exc, RequestTimeout):
        return timeout_error(exc.timeout, server=server, tool=tool)
    if isinstance(exc, NeedsLogin):
        return needs_login_error(exc, server=server, tool=tool)
    original = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, OAuthError):  # a refusal the user can read: metadata, a grant
        message = f"{one_line(exc)} {_context(server, tool)}"
        return _error(GATEWAY_ERROR, message, "server_error", False, server, tool, original)
    if isinstance(exc, ConnectionClosed):
        return crashed_error(server=server, tool=tool, detail=str(exc))
    if isinstance(exc, TransportError):
        message = _message("Server error", str(exc), server, tool)
        return _error(GATEWAY_ERROR, message, "server_error", exc.retryable, server, tool, original)
    return _error(INTERNAL_ERROR, _message("Internal error", str(exc) or type(exc).__name__, server, tool),
                  "server_error", True, server, tool, original)  # fmt: skip
