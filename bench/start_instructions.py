"""The work of a cold start, counted by callgrind: instructions from exec to the first answer.

    python bench/start_instructions.py [--root CHECKOUT] [--kinds stdio,http,gateway,floor]

Wall-clock and CPU cold starts move by 2x on a shared machine; the instructions a start
executes hold to ~1% (hash seed fixed, bytecode compiled first). Each server runs under
`valgrind --tool=callgrind`: stdio (`codex-mcp`) to its initialize answer, the gateway
(`codex-mcp -- <our echo server>`, the child outside valgrind) to its initialize answer,
HTTP (`codex-mcp-http`) and the bare aiohttp floor to the answers to initialize and
initialized. The counters are dumped then (`callgrind_control -d`), so shutdown is not
counted. `--root` measures another checkout (a `git worktree` or `git archive` of the commit
before a change) with the same interpreter. Needs valgrind (Debian `valgrind`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from codex_mcp.bench import http_load
from codex_mcp.bench.stdio_load import spawn
from harness import BENCH, ROOT, compiled, free_port

KINDS = ("stdio", "gateway", "http", "floor")


def _dumped(pid: int, out_file: Path) -> int:
    """Instructions so far: callgrind dumps its counters, the largest total is the run's."""
    subprocess.run(["callgrind_control", "-d", str(pid)], check=True, capture_output=True)
    total = 0
    for part in out_file.parent.glob(out_file.name + "*"):
        for line in part.read_text(errors="replace").splitlines():
            found = re.match(r"(?:summary|totals): (\d+)", line)
            if found:
                total = max(total, int(found.group(1)))
    return total


async def _http_ready(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 600
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"exited with {process.returncode}")
            with contextlib.suppress(aiohttp.ClientError, OSError):
                await http_load.HttpSession(http, url).open()
                return
            await asyncio.sleep(0.05)
    raise RuntimeError("did not answer within 600 s")


def count(kind: str, root: Path, keep: str | None = None) -> int:
    python = sys.executable
    command = {
        "stdio": [python, str(root / "cmd/mcp")],
        "gateway": [python, str(root / "cmd/mcp"), "--", python, str(ROOT / "cmd/mcp")],
        "http": [python, str(root / "cmd/http"), "--port", "{port}"],
        "floor": [python, str(BENCH / "floors/http_floor.py"), "{port}"],
    }[kind]
    with tempfile.TemporaryDirectory() as scratch:
        out_file = Path(keep or scratch) / f"callgrind.{kind}.out"
        valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"]
        env = {
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(root / "pkg"),
            "HOME": scratch,
            "PYTHONHASHSEED": "0",
        }
        if kind in ("http", "floor"):
            port = free_port()
            argv = [*valgrind, *(c.replace("{port}", str(port)) for c in command)]
            process = subprocess.Popen(
                argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            try:
                asyncio.run(_http_ready(f"http://127.0.0.1:{port}/mcp", process))
                return _dumped(process.pid, out_file)
            finally:
                process.terminate()
                process.wait(60)

        async def stdio() -> int:
            peer, _ = await spawn([*valgrind, *command], env)
            try:
                return _dumped(peer.process.pid, out_file)
            finally:
                assert peer.process.stdin is not None
                peer.process.stdin.close()
                await asyncio.wait_for(peer.process.wait(), 120)

        return asyncio.run(stdio())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to start")
    parser.add_argument(
        "--keep", metavar="DIR", help="leave callgrind's files here (for callgrind_annotate)"
    )
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"some of {', '.join(KINDS)}")
    options = parser.parse_args()
    root = options.root.resolve()
    compiled(root)
    compiled(ROOT)  # the gateway's child and the floor run from this checkout
    for kind in options.kinds.split(","):
        print(
            f"{root} {kind}: {count(kind.strip(), root, options.keep) / 1e6:.1f}M instructions",
            flush=True,
        )


if __name__ == "__main__":
    main()
