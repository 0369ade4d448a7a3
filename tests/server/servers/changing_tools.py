"""Tools that change the tool list: `burst` adds `count` tools in one call (on the event
loop), `burst_in_thread` the same from a worker thread (a plain function), `noop` nothing."""

from codex_mcp import Server

server = Server("changing-tools")
_added: list[str] = []


def _add(count: int) -> str:
    for _ in range(count):
        name = f"added_{len(_added) + 1}"
        _added.append(name)

        def added() -> str:
            return "added"

        server.add_tool(added, name=name, read_only=True, description="Added by a call.")
    return f"{len(_added)} added"


@server.tool(read_only=True)
async def burst(count: int) -> str:
    """Adds `count` tools (at most 1000)."""
    return _add(min(count, 1000))


@server.tool(read_only=True)
def burst_in_thread(count: int) -> str:
    """Adds `count` tools (at most 1000), from a worker thread."""
    return _add(min(count, 1000))


@server.tool(read_only=True)
async def noop() -> str:
    """Changes nothing."""
    return "nothing changed"
