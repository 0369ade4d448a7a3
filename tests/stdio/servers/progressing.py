"""A `count` tool that reports progress `steps` times, then answers at once: the last
progress notification and the result leave the server back to back."""

from codex_mcp import Context, Server

server = Server("progressing")


@server.tool(read_only=True)
async def count(steps: int, ctx: Context) -> str:
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    return f"counted {steps}"
