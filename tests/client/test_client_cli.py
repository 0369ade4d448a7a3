"""codex-mcp-client end to end, as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from client_helpers import OUR_SERVER, sdk_command

CLI = [sys.executable, "-m", "codex_mcp.client.cli"]


def run(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout)


def test_tools_qualified_over_stdio() -> None:
    proc = run("tools", "--qualify", "ours", "--", *OUR_SERVER)
    assert proc.returncode == 0, proc.stderr
    tools = json.loads(proc.stdout)
    assert {t["qualified_name"] for t in tools} >= {"mcp__ours__echo", "mcp__ours__sleep"}
    assert all(t["server_name"] == "ours" for t in tools)


@pytest.mark.slow
def test_call_by_plain_and_qualified_name() -> None:
    proc = run("call", "echo", '{"message": "hi"}', "--", *OUR_SERVER)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["content"][0]["text"] == "hi"
    proc = run(
        "call", "mcp__ours__echo", '{"message": "q"}', "--qualify", "ours", "--", *OUR_SERVER
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["content"][0]["text"] == "q"


@pytest.mark.slow
def test_tool_error_exits_non_zero_with_the_result_on_stdout() -> None:
    proc = run("call", "fail", '{"message": "bad"}', "--", *sdk_command())
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["isError"] is True
    assert "reported an error" in proc.stderr


@pytest.mark.slow
def test_resources_prompts_read_and_prompt() -> None:
    server = ["--", *sdk_command()]
    resources = run("resources", *server)
    assert resources.returncode == 0, resources.stderr
    assert [r["uri"] for r in json.loads(resources.stdout)] == ["test://greeting"]
    read = run("read", "test://greeting", *server)
    assert json.loads(read.stdout)["contents"][0]["text"] == "hello from the sdk"
    prompts = run("prompts", *server)
    assert [p["name"] for p in json.loads(prompts.stdout)] == ["summarize"]
    prompt = run("prompt", "summarize", '{"text": "abc"}', *server)
    assert "abc" in prompt.stdout


def test_http_url(sdk_http_url: str) -> None:
    proc = run("call", "add", '{"a": 20, "b": 22}', "--url", sdk_http_url, "--compact")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["content"][0]["text"] == "42"
    info = run("info", "--url", sdk_http_url)
    assert json.loads(info.stdout)["serverInfo"]["name"] == "sdk-test-server"


def test_sse_url(sdk_sse_url: str) -> None:
    proc = run("tools", "--url", sdk_sse_url, "--sse")
    assert proc.returncode == 0, proc.stderr
    assert "echo" in {t["name"] for t in json.loads(proc.stdout)}


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["tools"], 2, "no server"),
        (["call", "echo", "[1]", "--", *OUR_SERVER], 2, "must be a JSON object"),
        (["call", "--", *OUR_SERVER], 2, "call needs TOOL"),
        (["tools", "--", "/nonexistent/server"], 1, "command not found"),
        (["call", "nope", "{}", "--", *OUR_SERVER], 1, "Unknown tool"),
        (["tools", "--", sys.executable, "-c", "import sys; sys.exit(4)"], 1, "exited with code 4"),
        (["tools", "--url", "http://127.0.0.1:9/mcp"], 1, "Cannot connect"),
    ],
)
def test_failures_are_clear(args: list[str], code: int, message: str) -> None:
    proc = run(*args)
    assert proc.returncode == code
    assert message in proc.stderr
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) <= 8  # a message, not a traceback


@pytest.mark.slow
def test_mode_chooses_the_protocol_era(launch_http: Any) -> None:
    url = launch_http()
    legacy = run("info", "--url", url, "--compact")
    assert json.loads(legacy.stdout)["protocolVersion"] == "2025-06-18"
    stateless = run("info", "--url", url, "--mode", "modern", "--compact")
    assert stateless.returncode == 0, stateless.stderr
    assert "2026-07-28" in json.loads(stateless.stdout)["supportedVersions"]
    auto = run("info", "--url", url, "--mode", "auto", "--compact")
    assert "2026-07-28" in json.loads(auto.stdout)["supportedVersions"]
    wrong = run("info", "--url", url, "--mode", "newest")
    assert wrong.returncode == 2 and "--mode must be" in wrong.stderr
