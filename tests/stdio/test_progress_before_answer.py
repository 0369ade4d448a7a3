"""A call's last progress notification reaches the client before its answer, in an
earlier read: the TypeScript SDK drops a progress notification it reads in the same chunk
as the answer (specs/performance.md, "Progress before the answer")."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from .conftest import ROOT, SERVERS, StdioServer

PROGRESSING = str(SERVERS / "progressing.py")
TS_CLIENT = Path(__file__).parent / "ts_progress_client.mjs"
#: The TypeScript SDK 1.x (its client) and the 2.x client package (.ci/node-tools.sh).
TS_SDKS = {
    "sdk-1.x": ROOT / ".tools/npm/node_modules/@modelcontextprotocol/sdk",
    "client-2.x": ROOT / ".tools/ts-client/node_modules/@modelcontextprotocol/client",
}


def _run_ts_client(sdk: Path, steps: int, rounds: int, parallel: int) -> tuple[list[Any], str]:
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH")
    if not (sdk / "package.json").exists():
        pytest.skip(f"{sdk} is missing: run .ci/node-tools.sh")
    done = subprocess.run(
        [
            "node",
            str(TS_CLIENT),
            str(sdk),
            str(steps),
            str(rounds),
            str(parallel),
            sys.executable,
            str(ROOT / "cmd" / "mcp"),
            "--serve",
            PROGRESSING,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()], done.stderr


@pytest.mark.interop
@pytest.mark.parametrize("sdk", sorted(TS_SDKS))
@pytest.mark.parametrize(("rounds", "parallel"), [(10, 1), (5, 4)])
def test_the_typescript_client_receives_every_progress(
    sdk: str, rounds: int, parallel: int
) -> None:
    steps = 20
    calls, stderr = _run_ts_client(TS_SDKS[sdk], steps, rounds, parallel)
    assert len(calls) == rounds * parallel
    for call in calls:
        assert call["text"] == f"counted {steps}"
        assert call["seen"] == list(range(1, steps + 1)), call
    assert "unknown token" not in stderr


def _call_count(peer: StdioServer, request_id: int, steps: int) -> None:
    peer.request(
        request_id,
        "tools/call",
        {"name": "count", "arguments": {"steps": steps}, "_meta": {"progressToken": request_id}},
    )


def _wait_readable(peer: StdioServer, timeout: float = 10.0) -> int:
    assert peer.process.stdout is not None
    fd = peer.process.stdout.fileno()
    assert select.select([fd], [], [], timeout)[0], "nothing from the server in time"
    return fd


def _read_chunk(peer: StdioServer) -> bytes:
    return os.read(_wait_readable(peer), 1 << 20)


def _messages(data: bytes) -> list[Any]:
    return [orjson.loads(line) for line in data.splitlines() if line]


def test_the_answer_comes_in_a_later_read_than_its_progress(spawn: Any) -> None:
    peer: StdioServer = spawn("--serve", PROGRESSING)
    peer.initialize()
    for request_id in (1, 2, 3):
        _call_count(peer, request_id, 3)
        # A client slow to read: everything the server would write together is written
        # by the time it reads.
        fd = _wait_readable(peer)
        time.sleep(0.2)
        messages = _messages(os.read(fd, 1 << 20))  # the call's progress, not its answer
        assert [m["params"]["progress"] for m in messages] == [1, 2, 3]
        assert all(m["params"]["progressToken"] == request_id for m in messages)
        answer = _messages(_read_chunk(peer))
        assert [m["id"] for m in answer] == [request_id]
        assert answer[0]["result"]["content"][0]["text"] == "counted 3"


def test_a_client_that_does_not_read_still_gets_every_answer(spawn: Any) -> None:
    """The wait is bounded: answers are written while the client reads nothing at all,
    each once, after its call's progress."""
    peer: StdioServer = spawn("--serve", PROGRESSING)
    peer.initialize()
    for request_id in range(1, 6):
        _call_count(peer, request_id, 2)
    fd = _wait_readable(peer)
    time.sleep(2.0)  # the client reads nothing for four times the longest wait
    written = b""
    while select.select([fd], [], [], 0)[0]:  # what is in the pipe, without waiting more
        written += os.read(fd, 1 << 20)
    seen = _messages(written)
    assert sorted(m["id"] for m in seen if "id" in m) == [1, 2, 3, 4, 5]
    for request_id in range(1, 6):
        order = [
            "answer" if "id" in m else m["params"]["progress"]
            for m in seen
            if m.get("id") == request_id or m.get("params", {}).get("progressToken") == request_id
        ]
        assert order == [1, 2, "answer"]
    peer.assert_alive()
