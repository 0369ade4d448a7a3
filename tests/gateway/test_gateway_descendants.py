"""What a child starts outside its process group (`setsid`, a double-forked daemon) is stopped
with the child, on every stop the gateway makes: its own exit (stdin's end, SIGTERM), a
reload that removes the child, an idle stop, and the restart after the child died; and
nothing the gateway did not start is touched (specs/gateway.md, "No child outlives the
gateway").

Each child is `servers/spawning_server.py`, which leaves three `sleep`s behind before it
serves: one in a session of its own (`setsid`), one double-forked away (`daemon`: the
gateway adopts it), one with an environment of its own (`bare`: no gateway tag), and one a
shell left running (`orphan`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.polling import until_sync

from .gateway_helpers import CMD_MCP, PY, SERVERS, alive, gateway_env, write_config

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc"),
    pytest.mark.slow,  # a gateway subprocess per test, its children's children waited for
]

SPAWNING = str(SERVERS / "spawning_server.py")
LEFT = ("setsid", "daemon", "bare", "orphan")


def spawning(pids: Path, **extra: Any) -> dict[str, Any]:
    return {"command": PY, "args": [SPAWNING, str(pids), "--tools", "echo"], **extra}


def left_behind(pids: Path, which: tuple[str, ...] = LEFT) -> list[int]:
    """The processes a spawning child left (waits for its file)."""
    until_sync(lambda: pids.exists() and pids.read_text(), 20, f"{pids} written")
    found = json.loads(pids.read_text())
    return [found[name] for name in which]


def gone(pids: list[int], timeout: float = 10) -> None:
    until_sync(
        lambda: not any(alive(pid) for pid in pids),
        timeout,
        lambda: f"still running: {[pid for pid in pids if alive(pid)]}",
    )


class Gateway:
    """`codex-mcp` on a config, spoken to on raw pipes."""

    def __init__(self, config: Path) -> None:
        self.process = subprocess.Popen(
            [PY, CMD_MCP],
            env=gateway_env(config, WRAPPER_SUMMARY="0"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self._id = 0
        self.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})  # fmt: skip
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def ask(self, method: str, params: dict[str, Any] | None = None) -> Any:
        assert self.process.stdout is not None
        self._id += 1
        self._send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params or {}})
        while True:
            answer = json.loads(self.process.stdout.readline())
            if answer.get("id") == self._id:
                return answer.get("result")

    def servers(self) -> dict[str, dict[str, Any]]:
        result = self.ask("tools/call", {"name": "gateway_status", "arguments": {}})
        return {s["name"]: s for s in result["structuredContent"]["servers"]}

    def wait_ready(self, *names: str) -> dict[str, dict[str, Any]]:
        return until_sync(
            lambda: (s := self.servers()) and all(s[n]["state"] == "ready" for n in names) and s,
            20,
            lambda: self.servers(),
            every=0.1,
        )

    def stop(self, how: str) -> None:
        if how == "eof":
            assert self.process.stdin is not None
            self.process.stdin.close()
        else:
            self.process.send_signal(signal.SIGTERM)
        self.process.wait(30)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def leftovers() -> Iterator[list[int]]:
    """Every pid a test saw left behind, killed at its end whatever happened."""
    seen: list[int] = []
    yield seen
    for pid in seen:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("how", ["eof", "sigterm"])
def test_a_graceful_stop_stops_what_its_children_started(
    tmp_path: Path, leftovers: list[int], how: str
) -> None:
    pids = tmp_path / "left.json"
    gateway = Gateway(write_config(tmp_path, {"spawner": spawning(pids)}))
    try:
        gateway.wait_ready("spawner")
        left = left_behind(pids)
        leftovers.extend(left)
        assert all(alive(pid) for pid in left)
        gateway.stop(how)
        gone(left)
    finally:
        gateway.kill()


def test_a_reload_that_removes_a_child_stops_what_it_started_and_only_that(
    tmp_path: Path, leftovers: list[int]
) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    config = write_config(tmp_path, {"a": spawning(a), "b": spawning(b)})
    gateway = Gateway(config)
    try:
        gateway.wait_ready("a", "b")
        left_a, left_b = left_behind(a), left_behind(b)
        leftovers.extend([*left_a, *left_b])
        # Not the gateway's: a process outside it carrying a's tag.
        tag = json.loads(a.read_text())["tag"]
        assert tag, "the gateway gives each child a tag of its own"
        stranger = subprocess.Popen(
            ["sleep", "300"], env={**os.environ, "CODEX_MCP_GATEWAY_CHILD": tag}
        )
        leftovers.append(stranger.pid)
        write_config(tmp_path, {"b": spawning(b)})
        gateway.process.send_signal(signal.SIGHUP)
        gone(left_a)
        assert all(alive(pid) for pid in left_b), "b's were not a's"
        assert stranger.poll() is None, "a process the gateway did not start"
        gateway.stop("eof")
        gone(left_b)
        assert stranger.poll() is None
    finally:
        gateway.kill()
        if "stranger" in locals():
            stranger.kill()
            stranger.wait()


def test_an_idle_stop_stops_what_the_child_started(tmp_path: Path, leftovers: list[int]) -> None:
    pids = tmp_path / "left.json"
    gateway = Gateway(write_config(tmp_path, {"dozy": spawning(pids, idle_timeout_sec=0.5)}))
    try:
        gateway.wait_ready("dozy")
        left = left_behind(pids)
        leftovers.extend(left)
        gone(left)  # stopped for want of calls, and what it started with it
        assert gateway.servers()["dozy"]["state"] == "idle"
    finally:
        gateway.kill()


def test_a_dead_childs_adopted_leftovers_are_stopped_before_it_restarts(
    tmp_path: Path, leftovers: list[int]
) -> None:
    pids = tmp_path / "left.json"
    entry = spawning(pids, restart={"backoff_initial_sec": 0.2})
    gateway = Gateway(write_config(tmp_path, {"crashy": entry}))
    try:
        first = gateway.wait_ready("crashy")["crashy"]["pid"]
        left = left_behind(pids)
        leftovers.extend(left)
        pids.unlink()
        os.kill(first, signal.SIGKILL)
        leftovers.extend(left_behind(pids))  # the restarted child's: it is back
        # Dead before anything could look at its processes: what carries its tag is found
        # among the processes the gateway adopted (`bare` carries none: see the spec).
        gone([left[0], left[1], left[3]])
        gateway.stop("eof")
    finally:
        gateway.kill()


def test_an_orphan_the_gateway_adopted_is_reaped_when_it_exits(
    tmp_path: Path, leftovers: list[int]
) -> None:
    pids = tmp_path / "left.json"
    gateway = Gateway(write_config(tmp_path, {"spawner": spawning(pids)}))
    try:
        gateway.wait_ready("spawner")
        (orphan,) = left_behind(pids, ("orphan",))
        leftovers.append(orphan)
        stat = Path(f"/proc/{orphan}/stat").read_text()
        assert int(stat.rsplit(")", 1)[1].split()[1]) == gateway.process.pid, "adopted"
        os.kill(orphan, signal.SIGKILL)
        # Not left a zombie of the gateway's: reaped, so gone from /proc.
        until_sync(lambda: not Path(f"/proc/{orphan}").exists(), 10, f"{orphan} reaped")
    finally:
        gateway.kill()
