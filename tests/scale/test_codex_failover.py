"""What the real Codex CLI (0.171, in .tools) sees of a Redis failover and of a replica's
death, behind the shipped nginx configuration with sessions on Sentinel. Codex answers a
404 on its session by initializing again and replaying the call, so a lost session can make
a tool run twice; a tool that records each run in a file is the witness. Its model is the
fake Responses provider on 127.0.0.1, which calls the tool three times in one turn."""

from __future__ import annotations

import asyncio
import collections
import os
import re
import signal
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from http_process import ROOT
from interop import fake_responses_provider as fake
from interop.fake_responses_provider import FakeProvider, codex_config
from nginx_proxy import NginxProxies
from scale_setup import SERVERS, wait_ready
from support.polling import until
from test_nginx_config import rendered
from test_sentinel import serve
from topologies import SentinelGroup

CODEX = Path(os.environ.get("CODEX_BIN") or ROOT / ".tools/npm/node_modules/.bin/codex")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.interop,
    pytest.mark.skipif(not CODEX.exists(), reason=f"no Codex CLI at {CODEX}: scripts/setup.sh"),
]
SERVER = "scale"  # Codex's name for our server: its tools are in namespace mcp__scale


@pytest.fixture
async def model() -> AsyncIterator[tuple[FakeProvider, int]]:
    provider = FakeProvider()
    runner = web.AppRunner(provider.app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield provider, port
    provider.release()
    await runner.cleanup()


def three_calls(held: Path) -> fake.Responder:
    """`record` one, two (held in flight until the file `held` exists), three; then done."""

    def respond(body: dict[str, Any], number: int) -> list[fake.Item]:
        done = fake.function_outputs(body)
        step = len(done) + 1
        if step > 3:
            return [fake.message("All three recorded.", number)]
        arguments: dict[str, Any] = {"tag": ("one", "two", "three")[step - 1]}
        if step == 2:
            arguments["wait_for"] = str(held)
        item = fake.function_call("record", arguments, f"call_{step}", number)
        item["namespace"] = f"mcp__{SERVER}"
        return [item]

    return respond


class Setting:
    """Sentinel, two replicas of ours behind the shipped nginx config, a Codex home."""

    def __init__(self, root: Path, model_port: int) -> None:
        binary = SERVERS["redis"]
        assert binary is not None, "redis-server is not installed: scripts/setup.sh"
        self.sentinels = SentinelGroup(root / "sentinel", binary)
        self.runs = root / "runs"
        self.runs.touch()
        env = {**os.environ, "CODEX_MCP_TEST_RUNS": str(self.runs)}
        self.ours = serve(self.sentinels.url, 2, "--log-level", "debug", env=env)
        self.proxies = NginxProxies(root)
        self.url = self.proxies.start(rendered(self.ours))
        self.home = root / "codex-home"
        self.home.mkdir()
        tables = f'[mcp_servers.{SERVER}]\nurl = "{self.url}"\nrequired = true\n'
        top = 'approval_policy = "never"\nsandbox_mode = "danger-full-access"\n'
        config = codex_config(model_port, top=top, tables=tables + "tool_timeout_sec = 120\n")
        (self.home / "config.toml").write_text(config)

    def ran(self) -> list[tuple[str, str]]:
        return [tuple(line.split()) for line in self.runs.read_text().splitlines()]  # type: ignore[misc]

    def opened(self) -> int:
        """Sessions initialized on our replicas (a lost one would be opened again)."""
        return sum(len(re.findall(r"session opened", r.stderr)) for r in self.ours)

    def not_found(self) -> int:
        return sum(r.stderr.count("Session not found") for r in self.ours)

    def stop(self) -> None:
        self.proxies.stop()
        for replica in self.ours:
            replica.stop()
        self.sentinels.stop()


async def codex_exec(setting: Setting, root: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        str(CODEX), "exec", "--strict-config", "--skip-git-repo-check", "Record three",
        cwd=root,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "CODEX_HOME": str(setting.home), "FAKE_PROVIDER_KEY": "not-a-key"},
    )  # fmt: skip


async def run_codex_through(
    setting: Setting, root: Path, fault: Callable[[], Any]
) -> tuple[int, str]:
    """Codex's whole turn; `fault` runs while the second call is in flight."""
    codex = await codex_exec(setting, root)
    output = asyncio.ensure_future(codex.communicate())
    try:
        await until(lambda: any(tag == "two" for tag, _ in setting.ran()), 90, setting.ran)
        result = fault()
        if asyncio.iscoroutine(result):
            await result
        out, _ = await asyncio.wait_for(output, 120)
    finally:
        if codex.returncode is None:
            codex.kill()
    assert codex.returncode is not None
    return codex.returncode, out.decode()


async def test_codex_goes_on_across_the_redis_primarys_death(
    model: tuple[FakeProvider, int], tmp_path: Path
) -> None:
    provider, port = model
    held = tmp_path / "release-two"
    provider.responder = three_calls(held)
    setting = Setting(tmp_path, port)
    try:

        async def kill_the_primary() -> None:
            setting.sentinels.current().kill()
            await until(
                lambda: setting.sentinels.primary_port() == setting.sentinels.replica.port, 60
            )
            await asyncio.to_thread(lambda: [wait_ready(r) for r in setting.ours])
            held.touch()  # the second call ends after the promotion; the third follows

        code, output = await run_codex_through(setting, tmp_path, kill_the_primary)
    finally:
        setting.stop()
    assert code == 0, output
    ran = collections.Counter(tag for tag, _ in setting.ran())
    outputs = {k: str(v) for k, v in fake.function_outputs(provider.requests[-1]).items()}
    assert ran == {"one": 1, "two": 1, "three": 1}, (setting.ran(), outputs)  # none twice
    for step, tag in enumerate(("one", "two", "three"), 1):  # each answered, the session on
        assert f"'text': '{tag}'" in outputs[f"call_{step}"], outputs
    assert setting.opened() == 1 and setting.not_found() == 0  # the one session, never lost
    assert "All three recorded." in output


async def test_a_call_on_a_killed_replica_errs_once_and_is_not_run_again(
    model: tuple[FakeProvider, int], tmp_path: Path
) -> None:
    provider, port = model
    provider.responder = three_calls(tmp_path / "never")
    setting = Setting(tmp_path, port)
    try:

        def kill_the_replica_running_two() -> None:
            [pid] = [int(p) for tag, p in setting.ran() if tag == "two"]
            os.kill(pid, signal.SIGKILL)

        code, output = await run_codex_through(setting, tmp_path, kill_the_replica_running_two)
    finally:
        setting.stop()
    assert code == 0, output
    ran = collections.Counter(tag for tag, _ in setting.ran())
    assert ran == {"one": 1, "two": 1, "three": 1}, setting.ran()  # two was not run again
    outputs = {k: str(v) for k, v in fake.function_outputs(provider.requests[-1]).items()}
    assert "'text': 'one'" in outputs["call_1"], outputs
    assert "HTTP 502" in outputs["call_2"], outputs  # it erred, once: Codex did not retry it
    assert "'text': 'three'" in outputs["call_3"], outputs  # and the session went on
    home = {p for tag, p in setting.ran() if tag == "three"} - {
        p for tag, p in setting.ran() if tag == "two"
    }
    assert home, setting.ran()  # the session went on on the other replica
    assert setting.not_found() == 0
