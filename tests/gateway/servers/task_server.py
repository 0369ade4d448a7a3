"""A 2025-11-25 task server: raw newline-delimited JSON-RPC on stdio, no library, so that what
it says about its tasks is under the test's control (the gateway's tests of 2025-11-25 tasks).

Tools: `work` (taskSupport "required": sleeps `seconds`, then answers `done: <text>`),
`maybe` (taskSupport "optional"), `plain` (no taskSupport: answers at once), and `ask`
(required: asks the client an elicitation tied to its task, then answers what it was told).
Task ids are small counters ("1", "2"...), so a test can tell whether one leaked through the
gateway. `--ask-first`: `ask` sends its elicitation before its CreateTaskResult (a child
may). `--hostile` makes its task answers malformed: a `status` that is a list, a `ttl` of
a string, an unhashable related-task id in its status notifications.

Progress (2025-11-25: a task's progressToken stays valid until it ends): `work` with
`progress: N` sends N notifications/progress with its call's token while it runs, their
message its `label`; `forge: [...]` first sends one with each of those tokens, and
`ended: true` one with the token of every task that has ended; `after_end: true` sends one
more with its own token after its terminal status (before its tasks/result is answered).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any

JsonObject = dict[str, Any]
RELATED = "io.modelcontextprotocol/related-task"

_lock = threading.Lock()
_ids = itertools.count(1)
_tasks: dict[str, JsonObject] = {}
_results: dict[str, JsonObject] = {}
_done: dict[str, threading.Event] = {}
_answers: dict[int, Any] = {}
_answered: dict[int, threading.Event] = {}
#: The progressToken of each task's call (the gateway's, not the front's).
_tokens: dict[str, Any] = {}
_options: argparse.Namespace

TOOLS = [
    {
        "name": "work",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
        "execution": {"taskSupport": "required"},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "maybe",
        "inputSchema": {"type": "object", "properties": {}},
        "execution": {"taskSupport": "optional"},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "plain",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "ask",
        "inputSchema": {"type": "object", "properties": {}},
        "execution": {"taskSupport": "required"},
        "annotations": {"readOnlyHint": True},
    },
]


def _send(message: JsonObject) -> None:
    with _lock:
        sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
        sys.stdout.flush()


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _snapshot(task_id: str) -> JsonObject:
    task = dict(_tasks[task_id])
    if _options.hostile:
        task["status"] = [task["status"]]
        task["ttl"] = "forever"
    return task


def _set_status(task_id: str, status: str) -> None:
    with _lock:
        task = _tasks[task_id]
        if task["status"] in ("completed", "failed", "cancelled"):
            return
        task["status"] = status
        task["lastUpdatedAt"] = _now()
    params = _snapshot(task_id)
    if _options.hostile:
        params["_meta"] = {RELATED: {"taskId": ["not", "hashable"]}}
    _send({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": params})


def _progress(token: Any, progress: int, message: str) -> None:
    params = {"progressToken": token, "progress": progress, "message": message}
    _send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})


def _ask(task_id: str) -> None:
    """The `ask` tool's elicitation, tied to its task."""
    request_id = 10_000 + int(task_id)
    _answered[request_id] = threading.Event()
    _tasks[task_id]["status"] = "input_required"
    _send(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "elicitation/create",
            "params": {
                "message": "which one?",
                "requestedSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
                "_meta": {RELATED: {"taskId": task_id}},
            },
        }
    )


def _run(task_id: str, name: str, arguments: JsonObject) -> None:
    if name == "ask":
        request_id = 10_000 + int(task_id)
        if not _options.ask_first:
            _ask(task_id)
        _answered[request_id].wait(60)
        text = json.dumps(_answers.get(request_id), sort_keys=True)
        _set_status(task_id, "working")
    else:
        seconds = arguments.get("seconds", 0.2)
        seconds = seconds if isinstance(seconds, int | float) else 0.2
        token, label = _tokens.get(task_id), str(arguments.get("label", ""))
        for forged in arguments.get("forge", []):
            _progress(forged, 1, "forged")
        if arguments.get("ended"):
            for other, status in list(_tasks.items()):
                if status["status"] in ("completed", "failed", "cancelled"):
                    _progress(_tokens.get(other), 1, "of an ended task")
        steps = arguments.get("progress", 0)
        started = time.monotonic()
        sent = 0
        while time.monotonic() < started + seconds or (token is not None and sent < steps):
            if _tasks[task_id]["status"] == "cancelled":
                return
            due = steps * (time.monotonic() - started) / seconds if seconds else steps
            while token is not None and sent < min(steps, due):
                sent += 1
                _progress(token, sent, label)
            time.sleep(0.02)
        text = f"done: {name}"
    result = {"content": [{"type": "text", "text": text}], "_meta": {RELATED: {"taskId": task_id}}}
    _results[task_id] = result
    _set_status(task_id, "completed")
    if arguments.get("after_end") and _tokens.get(task_id) is not None:
        _progress(_tokens[task_id], 1_000, "after its end")
    _done[task_id].set()


def _call(message: JsonObject) -> JsonObject:
    params = message.get("params") or {}
    name = params.get("name")
    arguments = params.get("arguments") or {}
    tool = next((t for t in TOOLS if t["name"] == name), None)
    if tool is None:
        return {"error": {"code": -32602, "message": f"Unknown tool: {name}"}}
    support = tool.get("execution", {}).get("taskSupport")
    task = params.get("task")
    if task is None:
        if support == "required":
            return {"error": {"code": -32601, "message": f"{name} requires task augmentation"}}
        return {"result": {"content": [{"type": "text", "text": f"done: {name}"}]}}
    if support is None:
        return {"error": {"code": -32601, "message": f"{name} does not run as a task"}}
    task_id = str(next(_ids))
    ttl = task.get("ttl", 60_000)
    now = _now()
    _tasks[task_id] = {
        "taskId": task_id,
        "status": "working",
        "createdAt": now,
        "lastUpdatedAt": now,
        "ttl": ttl,
        "pollInterval": 50,
    }
    _done[task_id] = threading.Event()
    meta = params.get("_meta")
    _tokens[task_id] = meta.get("progressToken") if isinstance(meta, dict) else None
    # `ttl` as the child saw it: a test checks what the gateway passed on.
    sys.stderr.write(f"task {task_id} ttl {json.dumps(ttl)}\n")
    sys.stderr.flush()
    if name == "ask" and _options.ask_first:  # asked before its CreateTaskResult is sent
        _ask(task_id)
    threading.Thread(target=_run, args=(task_id, name, arguments), daemon=True).start()
    return {"result": {"task": _snapshot(task_id)}}


def _task_request(method: str, params: JsonObject) -> JsonObject:
    task_id = params.get("taskId")
    if task_id not in _tasks:
        return {"error": {"code": -32602, "message": "Failed to retrieve task: Task not found"}}
    if method == "tasks/get":
        return {"result": _snapshot(task_id)}
    if method == "tasks/cancel":
        if _tasks[task_id]["status"] in ("completed", "failed", "cancelled"):
            return {"error": {"code": -32602, "message": "task already ended"}}
        _set_status(task_id, "cancelled")
        _done[task_id].set()
        return {"result": _snapshot(task_id)}
    # tasks/result: blocks until the task ends
    _done[task_id].wait()
    if _tasks[task_id]["status"] == "cancelled":
        return {"error": {"code": -32603, "message": "the task was cancelled"}}
    return {"result": _results[task_id]}


def _serve(message: JsonObject) -> None:
    method = message.get("method")
    if method is None:  # an answer to our elicitation
        request_id = message.get("id")
        if isinstance(request_id, int) and request_id in _answered:
            _answers[request_id] = message.get("result", message.get("error"))
            _answered[request_id].set()
        return
    if "id" not in message:
        return
    params = message.get("params") or {}
    if method == "initialize":
        answer: JsonObject = {
            "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {
                    "tools": {},
                    "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
                },
                "serverInfo": {"name": "task-server", "version": "1"},
            }
        }
    elif method == "tools/list":
        answer = {"result": {"tools": TOOLS}}
    elif method == "tools/call":
        answer = _call(message)
    elif method in ("tasks/get", "tasks/result", "tasks/cancel"):
        if method == "tasks/result":  # blocks: answered from its own thread
            threading.Thread(
                target=lambda: _send(
                    {"jsonrpc": "2.0", "id": message["id"], **_task_request(method, params)}
                ),
                daemon=True,
            ).start()
            return
        answer = _task_request(method, params)
    elif method == "tasks/list":
        answer = {"result": {"tasks": [_snapshot(t) for t in _tasks]}}
    elif method == "ping":
        answer = {"result": {}}
    else:
        answer = {"error": {"code": -32601, "message": f"Method not found: {method}"}}
    _send({"jsonrpc": "2.0", "id": message["id"], **answer})


def main() -> None:
    global _options
    parser = argparse.ArgumentParser()
    parser.add_argument("--hostile", action="store_true")
    parser.add_argument("--ask-first", action="store_true")
    _options = parser.parse_args()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            _serve(message)


if __name__ == "__main__":
    main()
