"""Hostile callers against the policy (specs/policy.md): what a policy hides is refused
by every other way to name it (the namespaced name, the child's raw name, case variants,
a 2026-07-28 call, a task-augmented call, a direct method, resources/read, prompts/get,
completion), a mistaken policy stops the start with one line, and an external decision
point that is down, slow, redirecting or answering garbage (or too much) denies. Real
processes on 127.0.0.1: `codex-mcp-http` serving the child, a gateway of it, and an
aiohttp decision point in the test."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from codex_mcp.policy import Caller as Who
from codex_mcp.policy import PolicyError, Target, parse_policy
from codex_mcp.policy.config import HookConfig
from codex_mcp.policy.hook import CACHE_ENTRIES, DecisionHook, HookFailed
from support.polling import until
from support.processes import CMD_HTTP, HttpProcess, StdioServer
from support.raw_session import open_session

from .policy_helpers import (
    CHILD,
    Caller,
    called,
    gateway_server,
    plain_server,
    refused,
    write_policy,
)

#: Hides one tool, one task-capable tool, one resource and one prompt.
HIDING = {
    "default": "allow",
    "rules": [
        {"effect": "deny", "kind": "tool", "tool": ["rm", "job"]},
        {"effect": "deny", "kind": "resource", "tool": "mem://secret"},
        {"effect": "deny", "kind": "prompt", "tool": "secret_*"},
    ],
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, HttpProcess]]:
    """The child served directly, and through a gateway whose entry hides `admin_reset`
    by its own setting (`disabled_tools`), the policy file hiding the rest."""
    directory = tmp_path_factory.mktemp("hostile")
    policy = write_policy(directory, HIDING)
    plain = plain_server(policy)
    try:
        gateway = gateway_server(directory, policy, {"kid": {"disabled_tools": ["admin_reset"]}})
    except BaseException:
        plain.stop()
        raise
    yield {"plain": plain, "gateway": gateway}
    plain.stop()
    gateway.stop()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def _caller(http: aiohttp.ClientSession, server: HttpProcess, gateway: bool) -> Caller:
    caller = await Caller(http, server.url).open()
    if gateway:  # the child starts in the background: wait for its tools

        async def up() -> bool:
            return "kid__get_time" in await caller.listed("tools")

        await until(up, 30, "the gateway's child listed")
    return caller


#: For each server: the hidden tools by every name a client might try.
HIDDEN_NAMES = {
    "plain": ["rm", "RM", "Rm", "job", "JOB", "rm ", "kid__rm"],
    "gateway": [
        "kid__rm", "rm", "KID__RM", "Kid__rm", "kid__RM", "kid__job", "job",
        "kid__admin_reset", "admin_reset", "kid__Admin_Reset", "kid___rm", "kid__rm\u200b",
    ],
}  # fmt: skip


@pytest.mark.parametrize("kind", ["plain", "gateway"])
async def test_a_hidden_tool_is_refused_by_every_name_and_in_either_era(
    served: dict[str, HttpProcess], http: aiohttp.ClientSession, kind: str
) -> None:
    gateway = kind == "gateway"
    caller = await _caller(http, served[kind], gateway)
    prefix = "kid__" if gateway else ""
    listed = await caller.listed("tools")
    assert f"{prefix}get_time" in listed and f"{prefix}echo" in listed, listed
    for hidden in ("rm", "job", *(["admin_reset"] if gateway else [])):
        assert f"{prefix}{hidden}" not in listed, listed
    for name in HIDDEN_NAMES[kind]:
        legacy = await caller.ask("tools/call", {"name": name, "arguments": {}})
        assert refused(legacy) and not any(called(legacy, t) for t in ("rm", "job")), (name, legacy)
        # A 2026-07-28 call, from a client with the tasks extension: `job` would become a
        # task; refused before any task exists (no task handle, an error).
        fresh = await caller.stateless("tools/call", {"name": name, "arguments": {}}, name)
        assert refused(fresh), (name, fresh)
        assert "taskId" not in str(fresh), fresh
        # A direct method (the tool's name as the method).
        direct = await caller.ask(name, {})
        assert refused(direct) and not called(direct, "rm"), (name, direct)
    # A visible tool still answers in either era, and a long one becomes a task: what a
    # refused `job` would have become (through the gateway too: the child, dual-revision,
    # is spoken to in the front's 2026-07-28 and makes one; the front gets the gateway's).
    task = await caller.stateless("tools/call", {"name": f"{prefix}report"}, f"{prefix}report")
    assert task.get("result", {}).get("resultType") == "task", task
    assert task["result"]["taskId"], task
    assert called(await caller.ask("tools/call", {"name": f"{prefix}get_time"}), "get_time")
    fresh = await caller.stateless("tools/call", {"name": f"{prefix}echo"}, f"{prefix}echo")
    assert called(fresh, "echo"), fresh


@pytest.mark.parametrize("kind", ["plain", "gateway"])
async def test_a_hidden_resource_or_prompt_is_refused_by_every_method(
    served: dict[str, HttpProcess], http: aiohttp.ClientSession, kind: str
) -> None:
    gateway = kind == "gateway"
    caller = await _caller(http, served[kind], gateway)
    secret = "mem://kid/secret" if gateway else "mem://secret"
    visible = "mem://kid/open" if gateway else "mem://open"
    prompt = "kid__secret_prompt" if gateway else "secret_prompt"
    assert await caller.listed("resources") == [visible]
    assert await caller.listed("prompts") == ["kid__greet" if gateway else "greet"]
    for uri in (secret, secret.upper(), "mem://secret", "mem://kid/secret"):
        read = await caller.ask("resources/read", {"uri": uri})
        assert refused(read) and "secret note" not in str(read), (uri, read)
        fresh = await caller.stateless("resources/read", {"uri": uri}, uri)
        assert refused(fresh) and "secret note" not in str(fresh), (uri, fresh)
    # A subscription to it is answered as one to an unknown URI is (and keeps nothing:
    # test_hostile_skills_listen.py hears no update of a hidden resource).
    unknown = secret.replace("secret", "sunken")
    subscribed = await caller.ask("resources/subscribe", {"uri": secret})
    assert (
        subscribed["result"]
        == (await caller.ask("resources/subscribe", {"uri": unknown}))["result"]
        == {}
    )
    assert "open note" in str(await caller.ask("resources/read", {"uri": visible}))
    for name in (prompt, "secret_prompt", prompt.upper()):
        got = await caller.ask("prompts/get", {"name": name})
        assert refused(got) and "the secret prompt" not in str(got), (name, got)
        fresh = await caller.stateless("prompts/get", {"name": name}, name)
        assert refused(fresh) and "the secret prompt" not in str(fresh), (name, fresh)
    # Completing its argument completes to nothing, as for an unknown prompt.
    completions = [
        await caller.ask(
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": name}, "argument": {"name": "x", "value": ""}},
        )
        for name in (prompt, prompt.replace("secret", "sunken"))
    ]
    assert (
        completions[0]["result"]
        == completions[1]["result"]
        == {"completion": {"values": [], "hasMore": False}}
    )


async def test_every_deny_is_one_audit_line_naming_its_rule(
    served: dict[str, HttpProcess], http: aiohttp.ClientSession
) -> None:
    server = served["gateway"]
    caller = await _caller(http, server, gateway=True)
    await caller.ask("tools/call", {"name": "kid__rm", "arguments": {}})
    line = server.wait_for_line(r"policy deny: action=call tool=kid__rm ", timeout=10)
    assert "child=kid own=rm" in line and "by=policy rules[0]" in line, line
    assert "session=" in line and "principal=-" in line, line
    await caller.ask("tools/call", {"name": "kid__admin_reset", "arguments": {}})
    line = server.wait_for_line(r"policy deny: action=call tool=kid__admin_reset ", timeout=10)
    assert ".mcp.json: mcpServers.kid.disabled_tools" in line, line
    # A name sent with a line break and a terminal escape cannot start a line of its own.
    # (`secret_*` matches it: the rule's pattern spans the line break.)
    await caller.ask("prompts/get", {"name": "kid__secret_\nINFO forged\x1b[2J"})
    line = server.wait_for_line(r"policy deny: action=call prompt=kid__secret_\\n", timeout=10)
    assert "\x1b" not in line and not any(
        each.startswith("INFO forged") for each in server.lines
    ), line


# -- a mistaken policy never starts ----------------------------------------------------

BAD_POLICIES: dict[str, Any] = {
    "not JSON": "{default: allow",
    "a list": [],
    "no default": {"rules": []},
    "default open": {"default": "open"},
    "default true": {"default": True},
    "unknown key": {"default": "deny", "rule": []},
    "rules an object": {"default": "deny", "rules": {"effect": "deny"}},
    "rule a string": {"default": "deny", "rules": ["deny rm"]},
    "unknown rule key": {"default": "allow", "rules": [{"effect": "deny", "tools": "rm"}]},
    "effect permit": {"default": "allow", "rules": [{"effect": "permit", "tool": "rm"}]},
    "tool a number": {"default": "allow", "rules": [{"effect": "deny", "tool": 5}]},
    "tool empty list": {"default": "allow", "rules": [{"effect": "deny", "tool": []}]},
    "tool empty string": {"default": "allow", "rules": [{"effect": "deny", "tool": ""}]},
    "tool nested list": {"default": "allow", "rules": [{"effect": "deny", "tool": [["rm"]]}]},
    "kind tools": {"default": "allow", "rules": [{"effect": "deny", "kind": "tools"}]},
    "require no scopes": {"default": "allow", "rules": [{"effect": "require", "tool": "x"}]},
    "deny with scopes": {"default": "allow", "rules": [{"effect": "deny", "scopes": ["a"]}]},
    "hook a string": {"default": "allow", "hook": "http://127.0.0.1:1/"},
    "hook ftp": {"default": "allow", "hook": {"url": "ftp://127.0.0.1/"}},
    "hook plain http off loopback": {"default": "allow", "hook": {"url": "http://opa.example/"}},
    "hook concurrency zero": {
        "default": "allow",
        "hook": {"url": "http://127.0.0.1:1/", "max_concurrent": 0},
    },
    "hook concurrency huge": {
        "default": "allow",
        "hook": {"url": "http://127.0.0.1:1/", "max_concurrent": 100000},
    },
    "hook concurrency a float": {
        "default": "allow",
        "hook": {"url": "http://127.0.0.1:1/", "max_concurrent": 4.0},
    },
    "hook timeout a string": {
        "default": "allow",
        "hook": {"url": "http://127.0.0.1:1/", "timeout_sec": "1"},
    },
    "hook timeout negative": {
        "default": "allow",
        "hook": {"url": "http://127.0.0.1:1/", "timeout_sec": -1},
    },
    "hook timeout a bool": {
        "default": "allow",
        "hook": {"url": "http://127.0.0.1:1/", "timeout_sec": True},
    },
    "hook limit a float": {
        "default": "allow",
        "hook": {"url": "http://127.0.0.1:1/", "max_response_bytes": 1.5},
    },
    "hook unknown key": {
        "default": "allow",
        "hook": {"url": "http://127.0.0.1:1/", "fail": "open"},
    },
}


@pytest.mark.parametrize("case", sorted(BAD_POLICIES))
def test_a_policy_with_a_mistake_is_refused_whole(case: str) -> None:
    document = BAD_POLICIES[case]
    if isinstance(document, str):
        return  # not JSON: only a file can say that (the start-up tests below)
    with pytest.raises(PolicyError) as refusal:
        parse_policy(document)
    assert "\n" not in str(refusal.value)


@pytest.mark.parametrize(
    ("case", "command"),
    [
        ("not JSON", [CMD_HTTP, "--port", "0"]),
        ("tool a number", [CMD_HTTP, "--port", "0"]),
        ("hook timeout a string", [str(Path(CMD_HTTP).with_name("mcp"))]),
        ("unknown rule key", [str(Path(CMD_HTTP).with_name("mcp"))]),
    ],
)
def test_a_mistaken_policy_stops_the_start_with_one_line(
    tmp_path: Path, case: str, command: list[str]
) -> None:
    policy = write_policy(tmp_path, BAD_POLICIES[case])
    done = subprocess.run(
        [sys.executable, *command, "--serve", str(CHILD), "--policy", str(policy)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(policy) in lines[0], done.stderr
    assert done.stdout == ""


def test_a_missing_policy_file_stops_the_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, CMD_HTTP, "--port", "0", "--policy", str(tmp_path / "nope.json")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1, done.stderr


# -- a hostile decision point ------------------------------------------------------------


class DecisionPoint:
    """An aiohttp decision point on 127.0.0.1 whose answer the test picks per path."""

    def __init__(self) -> None:
        self.runner: web.AppRunner | None = None
        self.url = ""
        self.inputs: list[Any] = []

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/{mode}", self.decide)
        app.router.add_post("/{mode}/{rest:.*}", self.decide)
        # A client that went away (a hook that gave up, a cancelled listing) ends its
        # question here too, as a real decision point would not be kept waiting on.
        self.runner = web.AppRunner(app, handler_cancellation=True)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = self.runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"

    async def decide(self, request: web.Request) -> web.StreamResponse:
        mode = request.match_info["mode"]
        self.inputs.append(await request.json())
        if mode == "allow":
            return web.json_response({"result": True})
        if mode == "garbage":
            return web.Response(text="allow", content_type="application/json")
        if mode == "string":
            return web.json_response({"result": "true"})
        if mode == "error":
            return web.json_response({"result": True}, status=500)
        if mode == "redirect":
            raise web.HTTPTemporaryRedirect(f"{self.url}/allow")
        if mode == "slow":
            await asyncio.sleep(5)
            return web.json_response({"result": True})
        if mode == "huge":  # valid JSON that goes on and on
            response = web.StreamResponse(headers={"Content-Type": "application/json"})
            await response.prepare(request)
            await response.write(b'{"result": true, "pad": "')
            for _ in range(64):
                await response.write(b"x" * 65536)
            await response.write(b'"}')
            return response
        return web.json_response({"result": {"allow": False}})

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()


@pytest.fixture
async def decision_point() -> AsyncIterator[DecisionPoint]:
    point = DecisionPoint()
    await point.start()
    yield point
    await point.stop()


WHO = Who(principal="sha256:0123456789abcdef", scopes=None, session="abcd1234")
WHAT = Target("tool", "kid__rm", "kid", "rm")


@pytest.mark.parametrize(
    "mode", ["garbage", "string", "error", "redirect", "slow", "huge", "deny", "down"]
)
async def test_a_hook_that_gives_no_clear_yes_denies(
    decision_point: DecisionPoint, mode: str
) -> None:
    url = "http://127.0.0.1:9/" if mode == "down" else f"{decision_point.url}/{mode}"
    hook = DecisionHook(HookConfig(url, timeout_sec=0.5, max_response_bytes=4096))
    try:
        if mode == "deny":
            assert await hook.allows(WHO, WHAT, "call") is False
            return
        with pytest.raises(HookFailed):
            await asyncio.wait_for(hook.allows(WHO, WHAT, "call"), 10)
    finally:
        await hook.close()
    if mode == "redirect":  # the redirect was not followed to the allowing endpoint
        assert [each["input"]["tool"] for each in decision_point.inputs] == ["rm"]


async def test_the_hook_is_told_who_and_what_never_a_token(decision_point: DecisionPoint) -> None:
    hook = DecisionHook(HookConfig(f"{decision_point.url}/allow", cache_ttl_sec=30))
    try:
        assert await hook.allows(WHO, WHAT, "list")
        assert await hook.allows(WHO, WHAT, "list")  # kept: asked once
        other = Who(principal="sha256:fedcba9876543210", session="ffff0000")
        assert await hook.allows(other, WHAT, "list")  # another caller: asked again
    finally:
        await hook.close()
    assert len(decision_point.inputs) == 2
    assert decision_point.inputs[0] == {
        "input": {
            "principal": "sha256:0123456789abcdef",
            "subject": None,
            "scopes": None,
            "session": "abcd1234",
            "kind": "tool",
            "name": "kid__rm",
            "child": "kid",
            "tool": "rm",
            "action": "list",
        }
    }


# -- a 2025-11-25 task-augmented call through the gateway --------------------------------

TASK_SERVER = Path(__file__).resolve().parents[1] / "gateway" / "servers" / "task_server.py"


async def test_a_hidden_tool_gets_no_2025_task_through_the_gateway(tmp_path: Path) -> None:
    """`params.task` on tools/call is its own way into the gateway (relay/front_tasks.py):
    a tool the policy hides is refused there too, no task made at the child; the same call
    to a visible tool makes one (so the refusal is not the path missing)."""
    policy = write_policy(
        tmp_path, {"default": "allow", "rules": [{"effect": "deny", "tool": "maybe"}]}
    )
    task_child = {"command": sys.executable, "args": [str(TASK_SERVER)]}
    server = gateway_server(
        tmp_path,
        policy,
        {"hidden": {**task_child, "disabled_tools": ["work"]}, "open": task_child},
        lines=None,
    )
    try:
        async with aiohttp.ClientSession() as http:
            caller = Caller(http, server.url)
            caller.headers = await open_session(http, server.url, "2025-11-25")

            async def up() -> bool:
                return "open__work" in await caller.listed("tools")

            await until(up, 30, "the task children listed")
            listed = await caller.listed("tools")
            assert "hidden__work" not in listed and "hidden__maybe" not in listed, listed
            task = {"ttl": 60_000}
            made = await caller.ask(
                "tools/call", {"name": "open__work", "arguments": {"seconds": 0.1}, "task": task}
            )
            assert "task" in made.get("result", {}), made  # the path exists
            for name in ("hidden__work", "hidden__maybe", "HIDDEN__WORK", "work"):
                refused_call = await caller.ask(
                    "tools/call", {"name": name, "arguments": {"seconds": 0.1}, "task": task}
                )
                assert refused(refused_call) and "task" not in str(refused_call.get("result")), (
                    name,
                    refused_call,
                )
            listing = await caller.ask("tasks/list")
            assert len(listing["result"]["tasks"]) == 1, listing  # open__work's only
            server.wait_for_line(r"policy deny: action=call tool=hidden__work .*disabled_tools")
    finally:
        server.stop()


async def test_the_hooks_cache_is_bounded_and_keeps_no_failure(
    decision_point: DecisionPoint,
) -> None:
    hook = DecisionHook(HookConfig(f"{decision_point.url}/allow", cache_ttl_sec=600))
    try:
        for n in range(CACHE_ENTRIES + 50):  # as many callers as a busy server has
            assert await hook.allows(Who(session=f"s{n}"), WHAT, "call")
        assert len(hook._cache) == CACHE_ENTRIES  # oldest dropped first
        asked = len(decision_point.inputs)
        assert await hook.allows(Who(session=f"s{CACHE_ENTRIES + 49}"), WHAT, "call")
        assert len(decision_point.inputs) == asked  # the newest is kept
    finally:
        await hook.close()
    failing = DecisionHook(HookConfig(f"{decision_point.url}/error", cache_ttl_sec=600))
    try:
        for _ in range(2):  # a failure is asked again, never kept as a deny (or an allow)
            with pytest.raises(HookFailed):
                await failing.allows(WHO, WHAT, "call")
        assert not failing._cache
    finally:
        await failing.close()


def test_over_stdio_the_policy_hides_and_refuses_alike(tmp_path: Path) -> None:
    """`codex-mcp --policy` (stdio, the local user: no principal): the same decision."""
    peer = StdioServer("--serve", str(CHILD), "--policy", str(write_policy(tmp_path, HIDING)))
    try:
        peer.initialize()
        listed = [t["name"] for t in peer.call(2, "tools/list", {})["result"]["tools"]]
        assert "rm" not in listed and "job" not in listed and "get_time" in listed, listed
        refusal = peer.call(3, "tools/call", {"name": "rm", "arguments": {}})
        assert refusal["error"]["message"] == "Unknown tool: rm", refusal
        read = peer.call(4, "resources/read", {"uri": "mem://secret"})
        assert "error" in read and "secret note" not in str(read), read
    finally:
        peer.stop()
