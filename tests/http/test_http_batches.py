"""One batch path, the core's: the same messages get the same answers over stdio and over
HTTP (a real `codex-mcp` subprocess on pipes and a real `codex-mcp-http` on 127.0.0.1)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
from http_process import ROOT, HttpProcess

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-03-26", "capabilities": {}},
}
SLEEP = {"name": "sleep", "arguments": {"seconds": 0.2}}

CASES: dict[str, Any] = {
    "mixed": [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        7,  # not an object: -32600 in the array
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": SLEEP},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},  # id 2 is in flight: -32600
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ],
    "numbers": [1, 2, 3],
    "empty": [],
    "notifications only": [{"jsonrpc": "2.0", "method": "notifications/initialized"}],
    "id null": [{"jsonrpc": "2.0", "id": None, "method": "ping"}],
    "nested": [[{"jsonrpc": "2.0", "id": 3, "method": "ping"}]],
    "lone id null": {"jsonrpc": "2.0", "id": None, "method": "ping"},  # seed 003: never answered
    "lone invalid": {"jsonrpc": "2.0", "id": [1], "method": "ping"},
    "lone number": 42,
}


def _shape(answer: Any) -> Any:
    """What an answer says, without what may legitimately differ (order in an array)."""
    if answer is None:
        return None
    items = answer if isinstance(answer, list) else [answer]
    shaped = sorted(
        (json.dumps(item.get("id")), item.get("error", {}).get("code", 0), "result" in item)
        for item in items
    )
    return ("array" if isinstance(answer, list) else "object", shaped)


@pytest.fixture(scope="module")
def stdio_answers() -> dict[str, Any]:
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "cmd/mcp")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    answers: dict[str, Any] = {}
    process.stdin.write(json.dumps(INIT).encode() + b"\n")
    process.stdin.flush()
    json.loads(process.stdout.readline())
    for name, message in CASES.items():
        # Each case is followed by a ping with a marker id: whatever comes before its
        # answer is the case's answer (or nothing).
        marker = {"jsonrpc": "2.0", "id": f"after {name}", "method": "ping"}
        process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.write(json.dumps(marker).encode() + b"\n")
        process.stdin.flush()
        seen: list[Any] = []
        while True:
            line = json.loads(process.stdout.readline())
            if isinstance(line, dict) and line.get("id") == f"after {name}":
                if name == "mixed":  # the slow call's array comes after the marker
                    seen.append(json.loads(process.stdout.readline()))
                break
            seen.append(line)
        answers[name] = seen[0] if seen else None
    process.stdin.close()
    process.wait(10)
    return answers


@pytest.fixture(scope="module")
def http_server() -> Iterator[HttpProcess]:
    server = HttpProcess()
    yield server
    server.stop()


async def _http_answers(url: str) -> dict[str, Any]:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    answers: dict[str, Any] = {}
    async with aiohttp.ClientSession() as http:
        async with http.post(url, json=INIT, headers=headers) as response:
            headers["Mcp-Session-Id"] = response.headers["Mcp-Session-Id"]
            headers["MCP-Protocol-Version"] = "2025-03-26"
        for name, message in CASES.items():
            async with http.post(url, data=json.dumps(message), headers=headers) as response:
                assert response.status < 500, name
                body = await response.read()
                answers[name] = (response.status, json.loads(body) if body.strip() else None)
    return answers


async def test_the_same_batches_get_the_same_answers_over_stdio_and_http(
    stdio_answers: dict[str, Any], http_server: HttpProcess
) -> None:
    over_http = await _http_answers(http_server.url)
    for name in CASES:
        status, answer = over_http[name]
        assert _shape(answer) == _shape(stdio_answers[name]), name
        # Answers to a batch are an array (200); a lone error about the message is 400;
        # nothing to answer is 202.
        expected = 202 if answer is None else 200 if isinstance(answer, list) else 400
        assert status == expected, (name, status)
    mixed = over_http["mixed"][1]
    assert len(mixed) == 4  # ping, the non-object, the call, the in-flight duplicate
    assert _shape(over_http["numbers"][1]) == ("array", [("null", -32600, False)] * 3)
    assert over_http["empty"][1]["error"]["code"] == -32600
