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

from codex_mcp.bench.stdio_load import StdioPeer, spawn

ROOT = Path(__file__).resolve().parents[1]
WARM_UP_CALLS = 500
ECHO = {"name": "echo", "arguments": {"message": "hi"}}


async def calls(peer: StdioPeer, count: int, window: int) -> None:
    """`count` echo calls, `window` of them sent before their answers are read."""
    done = 0
    while done < count:
        batch = min(window, count - done)
        for _ in range(batch):
            peer.send("tools/call", ECHO)
        for _ in range(batch):
            answer = await asyncio.wait_for(peer.response(), 600)
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


async def measure(root: Path, count: int, window: int) -> float:
    """Instructions the gateway spends per relayed call with `window` calls in flight."""
    python = sys.executable
    with tempfile.TemporaryDirectory() as scratch:
        out_file = Path(scratch) / "callgrind.out"
        command = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={out_file}",
            python,
            str(root / "cmd/mcp"),
            "--",
            python,
            str(ROOT / "cmd/mcp"),
        ]
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root / "pkg"), "HOME": scratch}
        peer, _ = await spawn(command, env)
        process = peer.process
        assert process.stdin is not None
        await calls(peer, WARM_UP_CALLS, window)
        _control(process.pid, "-i", "on")
        await calls(peer, count, window)
        _control(process.pid, "-i", "off")
        _control(process.pid, "-d")
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 300)
        return _instructions(out_file) / count


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
