"""One of several replicas: its tools say which process served them."""

import os

from codex_mcp import Context, Server

server = Server("replica")


@server.tool(read_only=True)
def whoami() -> str:
    """This process's id."""
    return str(os.getpid())


@server.tool(read_only=True)
async def ask_across(ctx: Context) -> str:
    """Asks a name; says which process asked (remembered in the requestState) and which
    one got the answer."""
    asked_by = await ctx.once("asked_by", os.getpid)
    answer = await ctx.elicit(
        "Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="name"
    )
    return f"{answer['content']['name']} asked by {asked_by}, answered to {os.getpid()}"
