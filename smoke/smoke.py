"""Smoke test for a fresh install: starts the stdio and HTTP servers itself and checks them.

    python smoke/smoke.py

Prints one PASS/FAIL line per step and exits non-zero if any step failed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "smoke", "version": "1"},
    },
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
CALL = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"message": "smoke"}},
}


def command(script: str, cmd_dir: str) -> list[str]:
    """The installed console script next to this Python, else `python cmd/<dir>`."""
    installed = Path(sys.executable).parent / script
    if installed.exists():
        return [str(installed)]
    found = shutil.which(script)
    return [found] if found else [sys.executable, str(ROOT / "cmd" / cmd_dir)]


class Results:
    def __init__(self) -> None:
        self.failed = 0
        self.passed = 0

    def step(self, name: str, check: Callable[[], str]) -> bool:
        try:
            detail = check()
        except Exception as exc:  # a smoke step reports, it never crashes the run
            self.failed += 1
            print(f"FAIL  {name}: {type(exc).__name__}: {exc}", flush=True)
            return False
        self.passed += 1
        print(f"PASS  {name}{': ' + detail if detail else ''}", flush=True)
        return True


def expect_echo(reply: dict[str, Any]) -> str:
    text = reply["result"]["content"][0]["text"]
    if text != "smoke":
        raise AssertionError(f"echo answered {text!r}")
    return "echo answered 'smoke'"


def stdio_steps(results: Results) -> None:
    process = subprocess.Popen(
        command("codex-mcp", "mcp"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None

    def exchange(message: dict[str, Any]) -> dict[str, Any]:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()
        return json.loads(process.stdout.readline())  # type: ignore[no-any-return]

    try:

        def initialize() -> str:
            reply = exchange(INITIALIZE)
            info = reply["result"]["serverInfo"]
            process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')  # type: ignore[union-attr]
            return (
                f"{info['name']} {info['version']}, protocol {reply['result']['protocolVersion']}"
            )

        if results.step("stdio initialize", initialize):
            results.step("stdio tools/list", lambda: _tools(exchange(LIST)))
            results.step("stdio tools/call echo", lambda: expect_echo(exchange(CALL)))
    finally:
        process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
    results.step("stdio clean exit on EOF", lambda: _exit_code(process.returncode))


def _tools(reply: dict[str, Any]) -> str:
    names = [tool["name"] for tool in reply["result"]["tools"]]
    if "echo" not in names:
        raise AssertionError(f"no echo tool in {names}")
    return ", ".join(names)


def _exit_code(code: int | None) -> str:
    if code != 0:
        raise AssertionError(f"exit code {code}")
    return "exit 0"


def http_steps(results: Results) -> None:
    process = subprocess.Popen(
        [*command("codex-mcp-http", "http"), "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    try:
        url = ""
        deadline = time.monotonic() + 20
        while not url and time.monotonic() < deadline:
            found = re.search(r"listening on (http://\S+)", process.stderr.readline())
            url = found.group(1) if found else ""
        if not results.step("http server starts", lambda: url or _raise("no 'listening on' line")):
            return
        session: dict[str, str] = {}

        def post(message: dict[str, Any]) -> dict[str, Any]:
            headers = {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **session,
            }
            request = urllib.request.Request(
                url, data=json.dumps(message).encode(), headers=headers, method="POST"
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                if "Mcp-Session-Id" in response.headers:
                    session["Mcp-Session-Id"] = response.headers["Mcp-Session-Id"]
                return json.loads(response.read())  # type: ignore[no-any-return]

        def initialize() -> str:
            reply = post(INITIALIZE)
            if "Mcp-Session-Id" not in session:
                raise AssertionError("no Mcp-Session-Id header")
            return f"session {session['Mcp-Session-Id'][:8]}..., protocol {reply['result']['protocolVersion']}"

        if results.step("POST /mcp initialize", initialize):
            results.step("POST /mcp tools/list", lambda: _tools(post(LIST)))
            results.step("POST /mcp tools/call echo", lambda: expect_echo(post(CALL)))

        def single_event() -> str:
            query = urllib.parse.urlencode({"request": json.dumps(CALL)})
            base = url.rsplit("/mcp", 1)[0]
            with urllib.request.urlopen(f"{base}/mcp/sse?{query}", timeout=10) as response:
                body = response.read().decode()
            events = [line[5:].strip() for line in body.splitlines() if line.startswith("data:")]
            if len(events) != 1:
                raise AssertionError(f"expected one event, got {len(events)}")
            return expect_echo(json.loads(events[0])) + " in one SSE event"

        results.step("GET /mcp/sse?request= tools/call echo", single_event)
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
    results.step("http clean exit on SIGTERM", lambda: _exit_code(process.returncode))


def _raise(message: str) -> str:
    raise AssertionError(message)


def main() -> int:
    results = Results()
    print("codex-mcp smoke test: stdio", flush=True)
    stdio_steps(results)
    print("codex-mcp smoke test: HTTP", flush=True)
    http_steps(results)
    print(f"smoke: {results.passed} passed, {results.failed} failed", flush=True)
    return 1 if results.failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
