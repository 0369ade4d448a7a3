"""An `echo` that says which protocol revision its request came in: the one in the
request's own _meta (2026-07-28), or the one its session negotiated at initialize."""

from codex_mcp import Context, Server
from codex_mcp.core.stateless_context import StatelessContext

server = Server("era-echo")


@server.tool(read_only=True)
def echo(message: str, ctx: Context) -> str:
    """Echo a message back, with the protocol revision of the request."""
    if isinstance(ctx, StatelessContext):
        era = f"stateless {ctx.request_meta.protocol_version}"
    else:
        era = f"session {ctx.session.protocol_version}"
    return f"{message} [{era}]"
