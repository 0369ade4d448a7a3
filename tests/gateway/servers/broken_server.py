"""A deliberately broken MCP server: raw newline-delimited JSON-RPC on stdio, no library.

It misbehaves on purpose so the gateway and `codex-mcp lint` can be tested against what real
servers get wrong. Every behaviour is selectable, by argument or by environment variable (the
variable is the default for its argument, so a `.mcp.json` entry can set it through `env`):

    --tools NAME,NAME,...   (BROKEN_TOOLS)        which tools to list; default: every tool
                                                  (`none`: only the extra and custom ones)
    --slow-list SECONDS     (BROKEN_SLOW_LIST)    delay every tools/list answer
    --slow-init SECONDS     (BROKEN_SLOW_INIT)    delay the initialize answer
    --garbage               (BROKEN_GARBAGE=1)    write non-protocol lines to stdout too
    --stderr-flood BYTES    (BROKEN_STDERR_FLOOD) write BYTES to stderr at start and per request
    --exit-on-start CODE    (BROKEN_EXIT_ON_START) exit at once (a child that never starts)
    --name NAME             (BROKEN_NAME)         serverInfo.name (default "broken")
    --extra-tools N,N,...   (BROKEN_EXTRA_TOOLS)  more well-formed read-only tools, by name
    --custom-tools JSON     (BROKEN_CUSTOM_TOOLS) more tools: a JSON list of definitions, as is

The tools (see TOOLS below): well-formed ones (`echo`, `no_annotations`, `not_read_only`,
`structured`, `tool_error`), broken schemas (`missing_types`, `integer_args`, `ref_args`,
`recursive_ref`, `null_root`, `bad_properties`, `huge_schema`), a snake-case definition in the
style of seed 000 (`snake_case`), awkward names (`dash-name`, `dot.name`, `dot_name`, a name
over 64 characters), and behaviours: `crash` (the process exits mid-call), `slow` (sleeps;
writes `slow: started` to stderr first, so tests can wait on it), `fail` (a JSON-RPC error
with the code it is given), `add_tool` (lists one more tool and sends list_changed),
`background` (schedules work outside any call: a log line and an elicitation carrying its
`message`) and `hold` (does that work while it is in flight, then says how the elicitation
was answered): what a shared child does for one client while serving another;
`stray_answers` first answers an id its client never used, then its own call with the id
written as a string (as the TypeScript SDK echoes it).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

JsonObject = dict[str, Any]

#: The id of the answer `stray_answers` sends to no request of its client's.
STRAY_ID = 987654321
LONG_NAME = "a_tool_whose_name_is_far_too_long_for_codex_to_keep_it_whole_when_qualified"

_write_lock = threading.Lock()
_options: argparse.Namespace


def _send(message: JsonObject) -> None:
    line = json.dumps(message, separators=(",", ":"))
    with _write_lock:
        if _options.garbage:
            sys.stdout.write("this line is not JSON-RPC, a server printed it by mistake\n")
            sys.stdout.write('{"hello": "a JSON object that is no JSON-RPC message"}\n')
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def _log(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def _flood() -> None:
    if _options.stderr_flood > 0:
        chunk = "flood " * 1024
        left = _options.stderr_flood
        while left > 0:
            sys.stderr.write(chunk[:left])
            left -= len(chunk)
        sys.stderr.write("\n")
        sys.stderr.flush()


def _text(text: str, **extra: Any) -> JsonObject:
    return {"content": [{"type": "text", "text": text}], **extra}


def _object(properties: JsonObject, **extra: Any) -> JsonObject:
    return {"type": "object", "properties": properties, **extra}


READ_ONLY = {"readOnlyHint": True}
MESSAGE = _object({"message": {"type": "string"}}, required=["message"])


def _huge_schema() -> JsonObject:
    description = "A deliberately long description of this parameter, repeated to be big. " * 2
    return _object(
        {f"field_{i:02d}": {"type": "string", "description": description} for i in range(40)}
    )


# name -> (definition without name, handler(arguments) -> result or raises RpcError)
Handler = Callable[[JsonObject], JsonObject]


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def _echo(arguments: JsonObject) -> JsonObject:
    return _text(str(arguments.get("message", "")))


def _ran(name: str) -> Handler:
    return lambda _arguments: _text(f"{name} ran")


def _crash(_arguments: JsonObject) -> JsonObject:
    _log("crash: exiting")
    os._exit(3)


def _slow(arguments: JsonObject) -> JsonObject:
    _log("slow: started")
    time.sleep(float(arguments.get("seconds", 5)))
    return _text("slow done")


def _fail(arguments: JsonObject) -> JsonObject:
    code = int(arguments.get("code", -32603))
    raise RpcError(code, str(arguments.get("message", "the tool failed")), {"detail": "x"})


def _structured(_arguments: JsonObject) -> JsonObject:
    return {
        "content": [{"type": "text", "text": "only clients that read text see this"}],
        "structuredContent": {"value": 42},
    }


def _snake_case(_arguments: JsonObject) -> JsonObject:
    return {
        "content": [{"type": "text", "text": "snake"}],
        "structured_content": {"snake": True},
        "is_error": False,
    }


def _tool_error(_arguments: JsonObject) -> JsonObject:
    return _text("the tool reports a failure", isError=True)


_scheduled: list[str] = []
_answers: dict[Any, queue.Queue[JsonObject]] = {}
_ask_ids = itertools.count(1)


def _background(arguments: JsonObject) -> JsonObject:
    _scheduled.append(str(arguments.get("message", "")))
    return _text("scheduled")


def _hold(_arguments: JsonObject) -> JsonObject:
    outcomes = []
    while _scheduled:
        message = _scheduled.pop(0)
        log = {"level": "info", "logger": "background", "data": message}
        _send({"jsonrpc": "2.0", "method": "notifications/message", "params": log})
        outcomes.append(_ask("elicitation/create", {"message": message, "requestedSchema": {}}))
    return _text("; ".join(outcomes) or "nothing scheduled")


def _ask(method: str, params: JsonObject) -> str:
    """A request to the client, on no call's behalf; how it was answered."""
    request_id = f"ask-{next(_ask_ids)}"
    answer: queue.Queue[JsonObject] = queue.Queue()
    _answers[request_id] = answer
    _send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    reply = answer.get(timeout=60)
    if "error" in reply:
        return "error: " + str(reply["error"].get("message"))
    return "answered: " + json.dumps(reply.get("result"))


def _add_tool(_arguments: JsonObject) -> JsonObject:
    definition = {"name": "added", "inputSchema": _object({}), "annotations": READ_ONLY}
    TOOLS["added"] = (definition, _ran("added"))
    _options.verbatim.append(definition)
    _send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    return _text("added")


TOOLS: dict[str, tuple[JsonObject, Handler]] = {
    "echo": (
        {"description": "Echo a message.", "inputSchema": MESSAGE, "annotations": READ_ONLY},
        _echo,
    ),
    "no_annotations": ({"inputSchema": _object({})}, _ran("no_annotations")),
    "not_read_only": (
        {"inputSchema": _object({}), "annotations": {"readOnlyHint": False}},
        _ran("not_read_only"),
    ),
    "structured": (
        {
            "inputSchema": _object({}),
            "outputSchema": _object({"value": {"type": "integer"}}),
            "annotations": READ_ONLY,
        },
        _structured,
    ),
    "tool_error": ({"inputSchema": _object({}), "annotations": READ_ONLY}, _tool_error),
    "missing_types": (
        {
            "inputSchema": _object(
                {
                    "mode": {"enum": ["fast", "slow"]},
                    "level": {"enum": [1, 2, 3]},
                    "options": {"properties": {"depth": {"type": "integer"}}},
                    "tags": {"items": {"type": "string"}},
                    "note": {"description": "free text"},
                }
            ),
            "annotations": READ_ONLY,
        },
        _ran("missing_types"),
    ),
    "integer_args": (
        {
            "inputSchema": _object(
                {"count": {"type": "integer"}, "limit": {"type": ["integer", "null"]}}
            ),
            "annotations": READ_ONLY,
        },
        _ran("integer_args"),
    ),
    "ref_args": (
        {
            "inputSchema": {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"point": {"$ref": "#/$defs/Point"}},
                "$defs": {"Point": _object({"x": {"type": "number"}, "y": {"type": "number"}})},
            },
            "annotations": READ_ONLY,
        },
        _ran("ref_args"),
    ),
    "recursive_ref": (
        {
            "inputSchema": {
                "type": "object",
                "properties": {"tree": {"$ref": "#/definitions/Node"}},
                "definitions": {
                    "Node": _object(
                        {
                            "label": {"type": "string"},
                            "children": {"type": "array", "items": {"$ref": "#/definitions/Node"}},
                        }
                    )
                },
            },
            "annotations": READ_ONLY,
        },
        _ran("recursive_ref"),
    ),
    "null_root": ({"inputSchema": {"type": "null"}, "annotations": READ_ONLY}, _ran("null_root")),
    "bad_properties": (
        {"inputSchema": {"type": "object", "properties": ["a", "b"]}, "annotations": READ_ONLY},
        _ran("bad_properties"),
    ),
    "huge_schema": ({"inputSchema": _huge_schema(), "annotations": READ_ONLY}, _ran("huge_schema")),
    "snake_case": (
        {
            "description": "Defined in the style of seed 000.",
            "input_schema": _object({"message": {"type": "string"}}),
            "output_schema": _object({"snake": {"type": "boolean"}}),
            "annotations": {"read_only_hint": True},
        },
        _snake_case,
    ),
    "dash-name": ({"inputSchema": _object({}), "annotations": READ_ONLY}, _ran("dash-name")),
    "dot.name": ({"inputSchema": _object({}), "annotations": READ_ONLY}, _ran("dot.name")),
    "dot_name": ({"inputSchema": _object({}), "annotations": READ_ONLY}, _ran("dot_name")),
    LONG_NAME: ({"inputSchema": _object({}), "annotations": READ_ONLY}, _ran("long")),
    "crash": ({"inputSchema": _object({}), "annotations": READ_ONLY}, _crash),
    "slow": (
        {"inputSchema": _object({"seconds": {"type": "number"}}), "annotations": READ_ONLY},
        _slow,
    ),
    "fail": (
        {
            "inputSchema": _object({"code": {"type": "number"}, "message": {"type": "string"}}),
            "annotations": READ_ONLY,
        },
        _fail,
    ),
    "add_tool": ({"inputSchema": _object({}), "annotations": READ_ONLY}, _add_tool),
    "background": ({"inputSchema": MESSAGE, "annotations": READ_ONLY}, _background),
    "hold": ({"inputSchema": _object({}), "annotations": READ_ONLY}, _hold),
    "stray_answers": (
        {"inputSchema": _object({}), "annotations": READ_ONLY},
        _ran("stray_answers"),  # answered in _call: it needs its request's id
    ),
}


BUILT_IN = list(TOOLS)


def _listed() -> list[JsonObject]:
    names = _options.tools if _options.tools is not None else list(BUILT_IN)
    listed = [{"name": name, **TOOLS[name][0]} for name in names if name in TOOLS]
    return listed + _options.verbatim


def _call(request_id: Any, params: JsonObject) -> None:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    try:
        if name not in TOOLS:
            raise RpcError(-32602, f"Unknown tool: {name}")
        if name == "stray_answers":  # an answer nobody asked for, then its own id as a string
            _send({"jsonrpc": "2.0", "id": STRAY_ID, "result": _text("for nobody")})
            _send({"jsonrpc": "2.0", "id": str(request_id), "result": _text("mine")})
            return
        result = TOOLS[name][1](arguments)
        _send({"jsonrpc": "2.0", "id": request_id, "result": result})
    except RpcError as error:
        payload: JsonObject = {"code": error.code, "message": error.message}
        if error.data is not None:
            payload["data"] = error.data
        _send({"jsonrpc": "2.0", "id": request_id, "error": payload})


def _handle(message: JsonObject) -> None:
    method, request_id = message.get("method"), message.get("id")
    params = message.get("params") or {}
    if method is None and request_id in _answers:  # the client's answer to _ask
        _answers.pop(request_id).put(message)
        return
    _flood()
    if request_id is None:  # a notification
        return
    if method == "initialize":
        time.sleep(_options.slow_init)
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": _options.name, "version": "0.0.1"},
        }
        _send({"jsonrpc": "2.0", "id": request_id, "result": result})
    elif method == "ping":
        _send({"jsonrpc": "2.0", "id": request_id, "result": {}})
    elif method == "tools/list":
        time.sleep(_options.slow_list)
        _send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": _listed()}})
    elif method == "tools/call":
        # Each call in a thread of its own, so a slow tool does not hold up the others.
        threading.Thread(target=_call, args=(request_id, params), daemon=True).start()
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        _send({"jsonrpc": "2.0", "id": request_id, "error": error})


def _env(name: str, default: str) -> str:
    return os.environ.get(f"BROKEN_{name}", default)


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default=_env("TOOLS", ""))
    parser.add_argument("--slow-list", type=float, default=float(_env("SLOW_LIST", "0")))
    parser.add_argument("--slow-init", type=float, default=float(_env("SLOW_INIT", "0")))
    parser.add_argument(
        "--garbage", action="store_true", default=_env("GARBAGE", "") in ("1", "true")
    )
    parser.add_argument("--stderr-flood", type=int, default=int(_env("STDERR_FLOOD", "0")))
    parser.add_argument("--exit-on-start", type=int, default=None)
    parser.add_argument("--name", default=_env("NAME", "broken"))
    parser.add_argument("--extra-tools", default=_env("EXTRA_TOOLS", ""))
    parser.add_argument("--custom-tools", default=_env("CUSTOM_TOOLS", "[]"))
    options = parser.parse_args(argv)
    options.tools = [t for t in options.tools.split(",") if t] or None
    extra = [
        {"name": name, "inputSchema": _object({}), "annotations": READ_ONLY}
        for name in options.extra_tools.split(",")
        if name
    ]
    # Listed as given, after the selected tools: duplicates and nameless entries included.
    options.verbatim = extra + json.loads(options.custom_tools)
    for definition in options.verbatim:
        name = definition.get("name")
        if isinstance(name, str):
            TOOLS.setdefault(name, (definition, _ran(name)))
    if options.exit_on_start is None and _env("EXIT_ON_START", ""):
        options.exit_on_start = int(_env("EXIT_ON_START", "1"))
    return options


def main(argv: list[str] | None = None) -> None:
    global _options
    _options = _parse(sys.argv[1:] if argv is None else argv)
    if _options.exit_on_start is not None:
        _log(f"broken server: exiting at start with code {_options.exit_on_start}")
        sys.exit(_options.exit_on_start)
    _flood()
    _log("broken server: ready")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            _send(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
            )
            continue
        if isinstance(message, dict):
            _handle(message)


if __name__ == "__main__":
    main()
