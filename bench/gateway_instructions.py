"""The gateway's own work per relayed call, counted by callgrind: the figure that holds still
on a shared machine where wall-clock and /proc CPU move by 2x between runs.

    python bench/gateway_instructions.py [--root CHECKOUT] [--calls 4000]

`codex-mcp -- <our echo server>` runs under `valgrind --tool=callgrind` with instrumentation
off; after a warm-up, `callgrind_control` turns it on for N echo calls (32 in flight, then one
at a time) and off again, and the instructions counted between are divided by N. The child
runs outside valgrind, so only the gateway is counted. `--root` measures another checkout
(a `git worktree` of the commit before a change) with the same child and the same driver.
Needs valgrind (Debian `valgrind`).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
WARM_UP_CALLS = 500

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "gateway-instructions", "version": "1"},
    },
}


class Driver:
    """Echo calls over the gateway's stdin/stdout, `window` written at once, all answered."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.next_id = 0

    async def answer(self) -> dict[str, object]:
        while True:
            line = await asyncio.wait_for(self.stdout.readline(), 600)
            if not line:
                raise ConnectionError("the gateway closed its stdout")
            message = orjson.loads(line)
            if "id" in message and "method" not in message:
                return message  # type: ignore[no-any-return]

    async def calls(self, count: int, window: int) -> None:
        done = 0
        while done < count:
            batch = min(window, count - done)
            lines = []
            for _ in range(batch):
                self.next_id += 1
                lines.append(
                    orjson.dumps(
                        {
                            "jsonrpc": "2.0",
                            "id": self.next_id,
                            "method": "tools/call",
                            "params": {"name": "echo", "arguments": {"message": "hi"}},
                        }
                    )
                )
            self.stdin.write(b"\n".join(lines) + b"\n")
            for _ in range(batch):
                answer = await self.answer()
                if "result" not in answer:
                    raise RuntimeError(f"a call failed: {answer}")
            done += batch


def _control(pid: int, *flags: str) -> None:
    subprocess.run(["callgrind_control", *flags, str(pid)], check=True, capture_output=True)


def _instructions(out_file: Path) -> int:
    """The Ir total of the last dump written to callgrind's output files for this run."""
    total = 0
    for part in sorted(out_file.parent.glob(out_file.name + "*")):
        for line in part.read_text(errors="replace").splitlines():
            found = re.match(r"(?:summary|totals): (\d+)", line)
            if found:
                total = max(total, int(found.group(1)))
    return total


async def measure(root: Path, calls: int, window: int) -> float:
    """Instructions the gateway spends per relayed call with `window` calls in flight."""
    python = sys.executable
    with tempfile.TemporaryDirectory() as scratch:
        out_file = Path(scratch) / "callgrind.out"
        process = await asyncio.create_subprocess_exec(
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={out_file}",
            python,
            str(root / "cmd/mcp"),
            "--",
            python,
            str(ROOT / "cmd/mcp"),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root / "pkg"), "HOME": scratch},
            limit=64 * 1024 * 1024,
        )
        assert process.stdin is not None
        driver = Driver(process)
        process.stdin.write(orjson.dumps(INITIALIZE) + b"\n")
        await driver.answer()
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        await driver.calls(WARM_UP_CALLS, window)
        _control(process.pid, "-i", "on")
        await driver.calls(calls, window)
        _control(process.pid, "-i", "off")
        _control(process.pid, "-d")
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 300)
        return _instructions(out_file) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose gateway runs")
    parser.add_argument("--calls", type=int, default=4000, help="calls counted at each window")
    options = parser.parse_args()
    for window, words in ((32, "32 in flight"), (1, "one at a time")):
        per_call = asyncio.run(measure(options.root.resolve(), options.calls, window))
        print(f"{options.root}: {per_call / 1000:.1f}k instructions per relayed call, {words}")


if __name__ == "__main__":
    main()
