"""Our examples server (examples/everything_server.py) speaking 2026-07-28 only, over stdio:
`initialize` is refused as a 2026-07-28-only server refuses it, with -32022 and the versions
it speaks (`--refuse`, the default), or is not there at all (`--stateless`: -32601, a server
that never had a handshake); over stdio, or Streamable HTTP with `--http` (`--port=N`). Its tools make tasks, ask with input-required rounds, and ask
inside tasks: what a gateway in front of it must carry to a client of either era."""

from __future__ import annotations

import asyncio
import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "pkg"))

from codex_mcp import Context  # noqa: E402
from codex_mcp.core.errors import McpError  # noqa: E402
from codex_mcp.core.extensions import Extension  # noqa: E402
from codex_mcp.core.jsonrpc import METHOD_NOT_FOUND, JsonObject  # noqa: E402
from codex_mcp.core.methods.table import MethodEntry, inline  # noqa: E402
from codex_mcp.core.request_meta import UNSUPPORTED_PROTOCOL_VERSION  # noqa: E402


def refuse_initialize(_session: object, params: JsonObject, _ctx: object) -> JsonObject:
    raise McpError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version: this server speaks 2026-07-28 only",
        {"supported": ["2026-07-28"], "requested": params.get("protocolVersion")},
    )


def no_initialize(_session: object, params: JsonObject, _ctx: object) -> JsonObject:
    raise McpError(METHOD_NOT_FOUND, "Method not found: initialize")


class NoHandshake(Extension):
    """`initialize` refused (`--refuse`) or unknown (`--stateless`)."""

    replaces = frozenset({"initialize"})

    def methods(self) -> dict[str, MethodEntry]:
        unknown = "--stateless" in sys.argv[1:]
        return {"initialize": inline(no_initialize if unknown else refuse_initialize)}


async def where(ctx: Context) -> str:
    """Waits a moment, then says whether it ran as a task (for a client that declared tasks)
    or as a plain call."""
    await asyncio.sleep(0.01)
    return "task" if ctx.in_task else "call"


async def long_job(ctx: Context) -> str:
    """Runs until cancelled (as a task), and says on stderr that it was."""
    try:
        await asyncio.sleep(600)
    except asyncio.CancelledError:
        print("stateless_only: long_job cancelled", file=sys.stderr, flush=True)
        raise
    return "finished"


if __name__ == "__main__":
    server = runpy.run_path(str(ROOT / "examples/everything_server.py"))["server"]
    server.tool(read_only=True, task="optional")(where)
    server.tool(read_only=True, task="required")(long_job)
    server.core.extend(NoHandshake())
    if "--http" in sys.argv[1:]:  # Streamable HTTP on 127.0.0.1, a free port or --port=N
        ports = [a.removeprefix("--port=") for a in sys.argv[1:] if a.startswith("--port=")]
        server.run("http", port=int(ports[0]) if ports else 0)
    else:
        server.run()
