"""The gateway's `.mcp.json` as hostile input: malformed, huge, nested 100,000 deep, a wrong
type at every level, values no process can be started with; read at start and again on every
change or SIGHUP.

What must hold: a bad file is one located line (at start: the gateway exits with it; on
reload: the running servers are kept and the line is logged), never a traceback; the watcher
survives every bad file and applies the next good one; a file or SIGHUP that changes nothing
reloads nothing and tells no client anything; a storm of SIGHUPs costs at most one reload at a
time and a real change in it is still applied. Real files, a real gateway subprocess, real
children."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client
from codex_mcp.gateway.config.json_file import ConfigError
from codex_mcp.gateway.config.load import read_config
from codex_mcp.gateway.config.parse import parse_document

from .gateway_helpers import (
    BROKEN,
    CMD_MCP,
    PY,
    Lines,
    gateway,
    gateway_env,
    status,
    stdio,
    until,
    write_config,
)

DEEP = 100_000
#: Larger than any .mcp.json the reader takes.
HUGE = 8 * 1024 * 1024

#: Every setting the reader knows, at every level, once: each value is replaced in turn.
FULL: dict[str, Any] = {
    "mcpServers": {
        "a": {
            "command": "x", "args": ["1"], "env": {"K": "v"}, "cwd": "d", "type": "stdio",
            "name": "n", "enabled": True, "lazy": True, "per_session": False,
            "idle_timeout_sec": 1, "startup_timeout_sec": 1, "tools_list_timeout_sec": 1,
            "tool_timeout_sec": 1,
            "restart": {"policy": "always", "max_restarts": 2, "backoff_initial_sec": 1,
                        "backoff_max_sec": 2},
            "repair": {"fix_shapes": True, "schema_max_bytes": 100},
            "tool_input_schema_max_bytes": 100,
            "enabled_tools": ["a"], "disabled_tools": ["b"],
            "tools": {"t": {"hidden": False, "rename": "r", "description": "d",
                            "annotations": {"readOnlyHint": True, "title": "x"}}},
            "client_capabilities": {"sampling": {}}, "pinning": "locked",
        },
        "b": {
            "url": "http://127.0.0.1:1/mcp", "headers": {"H": "v"},
            "bearer_token_env_var": "V", "env_http_headers": {"A": "B"},
            "oauth": {"client_id": "c", "client_secret": "s", "scopes": ["x"]},
        },
    },
    "gateway": {"max_session_children": 3, "max_session_children_per_principal": 1,
                "principal_idle_sec": 2, "pinning": "off", "lock_file": "lock.json",
                "skills_sync": True},
}  # fmt: skip

#: What a hostile or careless writer puts where something else belongs. The big numbers and
#: the non-finite ones are written as JSON text (json.dumps cannot say NaN in strict JSON).
WRONG: list[Any] = [[], "x", "", 1, 0, -1, 1.5, True, None, {}, [1], ["x"], {"k": 1}, {"k": []}]
WRONG_TEXT = ["NaN", "Infinity", "-Infinity", "1e400", "9" * 400, "9" * 5000]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _replaced(path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    document = copy.deepcopy(FULL)
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return document


_MARK = "__wrong_value_here__"


def _check_read(path: Path, what: str) -> ConfigError | None:
    """Read `path`: a config, or one located ConfigError line; anything else fails."""
    try:
        read_config(path)
    except ConfigError as error:
        message = str(error)
        assert "\n" not in message and message.startswith(str(path)), (what, message)
        return error
    except BaseException as error:  # what escapes is the finding
        pytest.fail(f"{what}: {type(error).__name__} escaped the reader: {error}"[:500])
    return None


def _check_parse(document: Any, what: str) -> ConfigError | None:
    """`parse_document` on a decoded value: a config, or one located ConfigError line."""
    try:
        parse_document(document, "SOURCE")
    except ConfigError as error:
        message = str(error)
        assert "\n" not in message and message.startswith("SOURCE"), (what, message)
        return error
    except BaseException as error:  # what escapes is the finding
        pytest.fail(f"{what}: {type(error).__name__} escaped the parser: {error}"[:500])
    return None


def _value_at(path: tuple[Any, ...]) -> Any:
    value: Any = FULL
    for key in path:
        value = value[key]
    return value


def test_a_wrong_type_at_every_level_is_one_located_line(tmp_path: Path) -> None:
    refused = 0
    for where in _paths(FULL):
        for value in WRONG:
            refused += _check_parse(_replaced(where, value), f"{where}={value!r}") is not None
    assert refused > 500  # most replacements are mistakes the reader must name
    # Numbers JSON can write but no setting can hold, through the file reader.
    path = tmp_path / ".mcp.json"
    numeric = [where for where in _paths(FULL) if isinstance(_value_at(where), int | float)]
    for where in [(), *numeric]:
        if isinstance(_value_at(where), bool):
            continue
        for text in WRONG_TEXT:
            document = json.dumps(_replaced(where, _MARK))
            path.write_text(document.replace(json.dumps(_MARK), text))
            assert _check_read(path, f"{where}={text[:12]}") is not None, (where, text[:12])


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[" * DEEP + "]" * DEEP, "nest"),
        ('{"mcpServers": {"a": {"command": "x", "env": ' + "[" * DEEP + "]" * DEEP + "}}}", "nest"),
        ('{"mcpServers":' + '{"a":' * 5000 + "1" + "}" * 5001, "nest"),
        ('{"mcpServers": {"a": {"command": "x", "note": ' + "[" * 900 + "]" * 900 + "}}}", "nest"),
        ('{"mcpServers": {"a": {"command": "x", "idle_timeout_sec": NaN}}}', "not valid JSON"),
        ('{"mcpServers": {"a": {"command": "x", "idle_timeout_sec": 1e400}}}', "not valid JSON"),
        ('{"mcpServers": {"a": {"command": "x", "restart": {"max_restarts": 1e300}}}}', "number"),
        ('{"mcpServers": {"a": {"command": "x", "startup_timeout_sec": ' + "9" * 5000 + "}}}", ""),
        ('{"mcpServers": {"a": {"command": "\\ud800"}}}', "not valid JSON"),
        ('{"mcpServers": {"a": {"command": "/bin/ca\\u0000t"}}}', "NUL"),
        ('{"mcpServers": {"a": {"command": "cat", "args": ["a\\u0000"]}}}', "NUL"),
        ('{"mcpServers": {"a": {"command": "cat", "cwd": "a\\u0000"}}}', "NUL"),
        ('{"mcpServers": {"a": {"command": "cat", "env": {"A=B": "x"}}}}', "name"),
        ('{"mcpServers": {"a": {"command": "cat", "env": {"": "x"}}}}', "name"),
        ('{"mcpServers": {"a": {"command": "cat", "env": {"A": "x\\u0000"}}}}', "NUL"),
        ('{"mcpServers": ["cat"]}', "must be an object"),
        ('{"mcpServers": {"a\\nb\\u001b[2J": "cat"}}', "must be an object"),
        ('{"mcpServers": "cat"}', "must be an object"),
        ('{"mcpServers": {"a": "cat"}}', "must be an object"),
        ('{"mcpServers": {"a": {"command": "cat", "args": "-v"}}}', "list of strings"),
        ('{"mcpServers": {"a": {"command": "cat", "env": {"A": ["x"]}}}}', "must be a string"),
    ],
    ids=lambda value: str(value)[:40],
)
def test_a_malformed_file_is_one_located_line(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    error = _check_read(path, text[:60])
    assert error is not None, f"{text[:60]} was accepted"
    assert says in str(error), str(error)


def test_a_huge_file_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    padding = "x" * HUGE
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "cat", "description": padding}}}))
    error = _check_read(path, "huge")
    assert error is not None and "bytes" in str(error), error


@pytest.mark.parametrize(
    "text",
    [
        "[" * DEEP + "]" * DEEP,
        '{"mcpServers": {"a": {"command": "/bin/ca\\u0000t"}}}',
        '{"mcpServers": {"a": {"command": "cat", "env": {"A=B": "x"}}}}',
        '{"mcpServers": {"a": {"command": "cat", "restart": {"max_restarts": Infinity}}}}',
    ],
    ids=["deep", "nul-command", "env-name", "infinity"],
)
def test_a_bad_file_stops_the_start_with_one_line(tmp_path: Path, text: str) -> None:
    config = tmp_path / ".mcp.json"
    config.write_text(text)
    done = subprocess.run(
        [PY, CMD_MCP], env=gateway_env(config), stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and str(config) in lines[0], done.stderr[-2000:]
    assert done.stdout == ""


def _listening(client: Client) -> list[str]:
    """Every list_changed notification the client gets, in order."""
    heard: list[str] = []

    def on_notification(method: str, _params: object) -> None:
        if method.endswith("/list_changed"):
            heard.append(method)

    client.session.notification_handlers.append(on_notification)
    return heard


async def _names(client: Client) -> list[str]:
    return [tool.name for tool in await client.list_tools(cache=False)]


@pytest.mark.slow
async def test_a_bad_file_on_reload_keeps_the_servers_and_the_watcher(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"one": stdio(BROKEN, "--tools", "echo")})
    errlog = Lines()
    client = gateway(config, errlog=errlog)
    heard = _listening(client)
    async with client:
        pid = (await status(client))["one"]["pid"]
        gateway_pid = client.transport.process.pid  # type: ignore[attr-defined]
        bad = [
            "[" * DEEP + "]" * DEEP,
            '{"mcpServers": {"one": {"command": "x", "env": ' + "{" * DEEP,
            '{"mcpServers": {"one": {"command": "cat", "env": {"A=B": "x"}}}}',
            "[]" + " " * HUGE,
        ]
        for number, text in enumerate(bad, 1):
            config.write_text(text)
            os.kill(gateway_pid, signal.SIGHUP)  # and the poll sees it too
            await until(lambda n=number: errlog.text().count("config not reloaded") >= n)
            assert (await client.call_tool("one__echo", {"message": "up"}, retries=0)).text == "up"
            assert (await status(client))["one"]["pid"] == pid
        assert "Traceback" not in errlog.text() and not heard
        # The watcher is alive: the next good file is applied, by the poll and by SIGHUP.
        write_config(tmp_path, {"two": stdio(BROKEN, "--tools", "echo")})
        await until(lambda: "notifications/tools/list_changed" in heard)
        assert await _names(client) == ["two__echo", "gateway_status"]
        write_config(tmp_path, {"three": stdio(BROKEN, "--tools", "echo")})
        os.kill(gateway_pid, signal.SIGHUP)
        await until(lambda: heard.count("notifications/tools/list_changed") >= 2)
        assert await _names(client) == ["three__echo", "gateway_status"]
        assert (await client.call_tool("three__echo", {"message": "b"}, retries=0)).text == "b"


@pytest.mark.slow
async def test_a_sighup_storm_or_a_touch_that_changes_nothing_reloads_nothing(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, {"one": stdio(BROKEN, "--tools", "echo", "--name", "aaa")})
    errlog = Lines()
    client = gateway(config, "--log-level", "info", errlog=errlog)
    heard = _listening(client)
    async with client:
        pid = (await status(client))["one"]["pid"]
        gateway_pid = client.transport.process.pid  # type: ignore[attr-defined]
        for round_ in range(3):
            config.write_text(config.read_text())  # rewritten, the same
            os.utime(config, ns=(round_ * 10**9, (round_ + 10) * 10**9))  # touched
            for _ in range(500):
                os.kill(gateway_pid, signal.SIGHUP)
            await asyncio.sleep(0)
        # A real change after the storm, by SIGHUP: applied, and the only news clients get.
        config.write_text(config.read_text().replace('"aaa"', '"bbb"'))
        for _ in range(500):
            os.kill(gateway_pid, signal.SIGHUP)
        await until(lambda: "notifications/tools/list_changed" in heard)
        await until(lambda: _restarted(errlog))

        async def replaced() -> bool:
            return (await status(client))["one"]["pid"] not in (None, pid)

        await until(replaced)
        # One reload told clients the lists changed (its `resources` news: the child's own
        # coming up tells of its tools only).
        assert heard.count("notifications/resources/list_changed") == 1, heard
        assert errlog.text().count("config reloaded") == 1, errlog.text()[-3000:]
        assert (await client.call_tool("one__echo", {"message": "b"}, retries=0)).text == "b"


def _restarted(errlog: Lines) -> bool:
    return "config reloaded: 1 restarted (one)" in errlog.text()


@pytest.mark.slow
async def test_a_sighup_that_changes_nothing_still_starts_a_child_that_gave_up(
    tmp_path: Path,
) -> None:
    """Its command was missing, so it is not restarted; once the user installs it, a SIGHUP
    (the file unchanged, so nothing else reloads) starts it."""
    command = tmp_path / "late-server"
    config = write_config(tmp_path, {"late": {"command": str(command)}})
    client = gateway(config)
    heard = _listening(client)
    async with client:
        gateway_pid = client.transport.process.pid  # type: ignore[attr-defined]

        async def state() -> str:
            return str((await status(client))["late"]["state"])

        await until(lambda: _equals(state(), "not found"))
        script = f"#!/bin/sh\nexec {' '.join(map(str, BROKEN))} --tools echo\n"
        command.write_text(script)
        command.chmod(0o755)
        os.kill(gateway_pid, signal.SIGHUP)
        await until(lambda: _equals(state(), "ready"))
        assert (await client.call_tool("late__echo", {"message": "b"}, retries=0)).text == "b"
        assert "notifications/resources/list_changed" not in heard  # no reload to tell of


async def _equals(value: Any, expected: str) -> bool:
    return bool(await value == expected)
