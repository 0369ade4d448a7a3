"""The gateway over stdio, as Codex runs it: `codex-mcp` with a .mcp.json, a real subprocess,
real children (mcp-server-time, server-everything, server-filesystem, our examples server,
the broken server), called with our client."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import time
from pathlib import Path

import pytest
from codex_mcp.client import Client, McpError

from .gateway_helpers import (
    BROKEN,
    CMD_MCP,
    EVERYTHING,
    EXAMPLES,
    FILESYSTEM,
    MISSING_NPM,
    PY,
    TIME,
    Lines,
    gateway,
    gateway_env,
    status,
    stdio,
    until,
    write_config,
)


@pytest.mark.interop
async def test_real_children_aggregated_named_and_callable(tmp_path: Path) -> None:
    if not TIME.exists():
        pytest.skip("pip install mcp-server-time (a dev extra)")
    if not (EVERYTHING.exists() and FILESYSTEM.exists()):
        pytest.skip(MISSING_NPM)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "note.txt").write_text("hello from the filesystem")
    config = write_config(
        tmp_path,
        {
            "time": stdio(TIME),
            "everything": stdio(EVERYTHING),
            "files": stdio(FILESYSTEM, str(shared)),
            "examples": stdio(EXAMPLES),
            "broken-one": stdio(BROKEN, "--tools", "echo,null_root,snake_case,dash-name"),
        },
    )
    async with gateway(config) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        prefixes = {name.split("__")[0] for name in tools if "__" in name}
        assert prefixes == {"time", "everything", "files", "examples", "broken_one"}
        assert "gateway_status" in tools
        assert all(len(name) <= 64 and name.replace("_", "").isalnum() for name in tools)
        # Repaired so Codex keeps them: a null root became an object, snake case camel case.
        assert tools["broken_one__null_root"].input_schema["type"] == "object"
        assert tools["broken_one__snake_case"].annotations == {"readOnlyHint": True}
        assert "broken_one__dash_name" in tools

        now = await client.call_tool("time__get_current_time", {"timezone": "UTC"})
        assert now.structured_content and now.structured_content["timezone"] == "UTC"
        echoed = await client.call_tool("everything__echo", {"message": "via the gateway"})
        assert "via the gateway" in echoed.text
        listed = await client.call_tool("files__read_text_file", {"path": str(shared / "note.txt")})
        assert "hello from the filesystem" in listed.text
        added = await client.call_tool("examples__add", {"a": 2, "b": 3})
        assert added.structured_content == {"result": 5}
        assert (await client.call_tool("broken_one__echo", {"message": "hi"})).text == "hi"
        snake = await client.call_tool("broken_one__snake_case", {})
        assert snake.structured_content == {"snake": True} and not snake.is_error

        # Resources and prompts come through too, each under its server's name.
        resources = [r.uri for r in await client.list_resources(all_pages=True)]
        assert "test://examples/static-text" in resources
        text = await client.read_resource("test://examples/static-text")
        assert text.contents[0]["uri"] == "test://examples/static-text"
        assert "static text resource" in text.contents[0]["text"]
        prompts = [p.name for p in await client.list_prompts(all_pages=True)]
        assert "examples__test_prompt_with_arguments" in prompts
        prompt = await client.get_prompt(
            "examples__test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}
        )
        assert "arg1='a'" in prompt.messages[0]["content"]["text"]
        completion = await client.complete(
            {"type": "ref/prompt", "name": "examples__test_prompt_with_arguments"}, "arg1", "par"
        )
        assert completion.values == ["paris", "park", "party"]


async def test_errors_are_normalized_unless_passthrough(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"db": stdio(BROKEN, "--tools", "fail")})
    async with gateway(config) as client:
        with pytest.raises(McpError) as caught:
            await client.call_tool(
                "db__fail", {"code": -32603, "message": "database is locked"}, retries=0
            )
        error = caught.value
        assert error.code == -32603
        assert error.message == "Internal error: database is locked (server 'db', tool 'fail')"
        assert error.data["kind"] == "server_error" and error.data["retryable"] is True
        assert error.data["serverName"] == "db" and error.data["toolName"] == "fail"
        assert error.data["original"]["message"] == "database is locked"
        with pytest.raises(McpError) as caught:
            await client.call_tool("db__fail", {"code": -32010, "message": "quota"}, retries=0)
        assert caught.value.data["kind"] == "tool_error"
    async with gateway(config, env={"WRAPPER_ERROR_PASSTHROUGH": "true"}) as client:
        with pytest.raises(McpError) as caught:
            await client.call_tool("db__fail", {"code": -32010, "message": "quota"}, retries=0)
        assert (caught.value.code, caught.value.message) == (-32010, "quota")
        assert caught.value.data == {"detail": "x"}


async def test_a_child_that_never_starts_is_reported_not_fatal(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "gone": {"command": "no-such-mcp-server-anywhere", "restart": "never"},
            "dies": stdio(BROKEN, "--exit-on-start", "3", restart="never"),
            "ok": stdio(BROKEN, "--tools", "echo"),
        },
    )
    async with gateway(config) as client:
        names = [tool.name for tool in await client.list_tools()]
        assert names == ["ok__echo", "gateway_status"]
        servers = await status(client)
        assert servers["gone"]["state"] == "not found"
        assert "command not found" in servers["gone"]["last_error"]
        assert servers["dies"]["state"] == "failed"
        assert "exited with code 3 before it was ready" in servers["dies"]["last_error"]
        assert "exiting at start with code 3" in servers["dies"]["last_error"]
        assert servers["ok"]["state"] == "ready" and servers["ok"]["tools"] == 1
        with pytest.raises(McpError) as caught:
            await client.call_tool("gone__anything", {}, retries=0)
        assert caught.value.data["kind"] == "spawn_error"
        assert "Spawn error: command not found" in caught.value.message
        assert (await client.call_tool("ok__echo", {"message": "still here"})).text == "still here"


async def test_a_child_whose_command_is_missing_is_not_retried(tmp_path: Path) -> None:
    """Under the default restart policy: starting it again cannot help, so it is said once
    (summary, status) and left alone, where it used to restart every few seconds."""
    config = write_config(
        tmp_path,
        {
            "gone": {"command": "no-such-mcp-server-anywhere"},
            "ok": stdio(BROKEN, "--tools", "echo"),
        },
    )
    errlog = Lines()
    async with gateway(config, errlog=errlog) as client:
        await errlog.wait_for(r"gone: not restarted: its command is not found")
        summary = await errlog.wait_for(r"^Started 1 child server\(s\): ok; 1 not started: ")
        assert "gone (Spawn error: command not found" in summary, summary
        servers = await status(client)
        assert servers["gone"]["state"] == "not found", servers["gone"]
        assert servers["gone"]["restarts"] == 0
        assert (await client.call_tool("ok__echo", {"message": "here"})).text == "here"
    assert not any("gone: restarting" in line for line in errlog.lines), errlog.text()


async def test_no_summary_of_children_stopped_before_they_started(tmp_path: Path) -> None:
    """Closed while a child still starts: no summary calling the stopping children 'not
    started' (it read "Started 0 child server(s): -; 2 not started: good (ready), slow
    (stopped)")."""
    # `good` is slow to stop (it ignores SIGTERM: it takes the SIGKILL a second later), so
    # `slow` has stopped first, which woke the summary waiting for the first starts.
    slow_to_stop = f"trap '' TERM; {shlex.join(BROKEN)} --tools echo; sleep 5"
    config = write_config(
        tmp_path,
        {"good": stdio(["sh", "-c", slow_to_stop]), "slow": stdio(BROKEN, "--slow-init", "30")},
    )
    errlog = Lines()
    env = {"WRAPPER_INIT_TIMEOUT_MS": "0", "WRAPPER_STARTUP_BUDGET_MS": "0"}
    async with gateway(config, errlog=errlog, env=env) as client:
        await until(lambda: _ready(client, "good"))
    assert not any(line.startswith("Started") for line in errlog.lines), errlog.text()


async def _ready(client: Client, name: str) -> bool:
    return bool((await status(client))[name]["state"] == "ready")


async def test_summary_line_debug_logs_and_silence(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, {"a": stdio(BROKEN, "--tools", "echo"), "b": stdio(BROKEN, "--tools", "echo")}
    )
    errlog = Lines()
    async with gateway(config, errlog=errlog, env={"DEBUG": "1"}) as client:
        await client.list_tools()
        assert await errlog.wait_for(r"^Started 2 child server\(s\): a, b$")
        await errlog.wait_for(r"broken server: ready")  # children's stderr, with DEBUG=1
    for silence in ({"WRAPPER_SUMMARY": "0"}, {"WRAPPER_NO_SUMMARY": "1"}):
        process = subprocess.run(
            [PY, CMD_MCP],
            input=b"",
            env=gateway_env(config, WRAPPER_INIT_TIMEOUT_MS="0", **silence),
            capture_output=True,
            timeout=60,
        )
        assert b"Started" not in process.stderr and process.stdout == b""


async def test_initialize_answers_within_the_init_timeout(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {"slow": stdio(BROKEN, "--slow-init", "30"), "quick": stdio(BROKEN, "--tools", "echo")},
    )
    client = gateway(config, env={"WRAPPER_INIT_TIMEOUT_MS": "1000"})
    started = time.monotonic()
    async with client:
        took = time.monotonic() - started
        assert took < 10, took  # a 30 s child did not hold the handshake
        assert client.server_capabilities["tools"] == {"listChanged": True}
        servers = await status(client)
        assert servers["slow"]["state"] == "starting"


@pytest.mark.slow
async def test_a_slow_child_is_skipped_then_announced(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {"slow": stdio(BROKEN, "--tools", "echo", "--slow-list", "3"),
         "quick": stdio(BROKEN, "--tools", "echo")},
    )  # fmt: skip
    changed = asyncio.Event()

    def on_notification(method: str, _params: object) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    client = gateway(config, env={"WRAPPER_TOOLS_LIST_TIMEOUT_MS": "500"})
    client.session.notification_handlers.append(on_notification)
    async with client:
        started = time.monotonic()
        first = [tool.name for tool in await client.list_tools(cache=False)]
        assert time.monotonic() - started < 2.5
        assert first == ["quick__echo", "gateway_status"]
        await asyncio.wait_for(changed.wait(), 20)  # the slow listing arrived
        again = [tool.name for tool in await client.list_tools(cache=False)]
        assert again == ["slow__echo", "quick__echo", "gateway_status"]


async def test_garbage_on_stdout_and_a_stderr_flood_do_not_matter(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {"noisy": stdio(BROKEN, "--tools", "echo", "--garbage", "--stderr-flood", "3000000")},
    )
    async with gateway(config) as client:
        assert [tool.name for tool in await client.list_tools()] == [
            "noisy__echo",
            "gateway_status",
        ]
        for index in range(5):
            result = await client.call_tool("noisy__echo", {"message": f"m{index}"})
            assert result.text == f"m{index}"


async def test_list_changed_is_passed_on_and_the_new_tool_served(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"dyn": stdio(BROKEN, "--tools", "add_tool")})
    changed = asyncio.Event()
    client = gateway(config)
    client.session.notification_handlers.append(
        lambda method, _p: method == "notifications/tools/list_changed" and changed.set()
    )
    async with client:
        assert "dyn__added" not in [t.name for t in await client.list_tools()]
        await client.call_tool("dyn__add_tool", {})
        await asyncio.wait_for(changed.wait(), 10)
        assert "dyn__added" in [t.name for t in await client.list_tools()]
        assert (await client.call_tool("dyn__added", {})).text == "added ran"


async def test_per_tool_settings_and_single_server_mode(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "brk": stdio(
                BROKEN,
                "--tools",
                "echo,no_annotations,not_read_only",
                tools={
                    "no_annotations": {"readOnlyHint": True, "rename": "plain"},
                    "not_read_only": {"hidden": True},
                    "echo": {"description": "Say it back."},
                },
            ),
            "other": stdio(BROKEN, "--tools", "echo"),
        },
    )
    async with gateway(config, env={"MCP_WRAPPER_SERVER_NAME": "brk"}) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert set(tools) == {"brk__echo", "brk__plain", "gateway_status"}
        assert tools["brk__plain"].annotations == {"readOnlyHint": True}
        assert tools["brk__echo"].description == "Say it back."
        assert (await client.call_tool("brk__plain", {})).text == "no_annotations ran"


@pytest.mark.slow
async def test_per_child_timeouts(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "hasty": stdio(BROKEN, "--tools", "slow,echo", tool_timeout_sec=0.5),
            "silent": stdio(BROKEN, "--slow-init", "30", startup_timeout_sec=0.5, restart="never"),
        },
    )
    async with gateway(config) as client:
        started = time.monotonic()
        with pytest.raises(McpError) as caught:
            await client.call_tool("hasty__slow", {"seconds": 30}, retries=0)
        assert time.monotonic() - started < 5
        assert caught.value.code == -32001
        assert (
            caught.value.message
            == "Request timed out: no answer within 0.5 s (server 'hasty', tool 'slow')"
        )
        assert caught.value.data["retryable"] is False
        assert (await client.call_tool("hasty__echo", {"message": "fine"})).text == "fine"
        servers = await status(client)
        assert servers["silent"]["state"] == "failed"
        assert servers["silent"]["last_error"] == (
            "Spawn error: no answer to initialize within 0.5 s (server 'silent')"
        )


async def test_a_per_session_child_over_stdio_starts_when_first_needed(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"lazy": stdio(BROKEN, "--tools", "echo", per_session=True)})
    async with gateway(config, env={"WRAPPER_SUMMARY": "1"}) as client:
        assert (await status(client))["lazy"]["state"] == "not started"
        assert [t.name for t in await client.list_tools()] == ["lazy__echo", "gateway_status"]
        assert (await status(client))["lazy"]["state"] == "ready"
