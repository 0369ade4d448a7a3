"""fastmcp's proxy in front of one stdio server, served over stdio: the gateway case's peer.

python fastmcp_proxy.py COMMAND [ARGS...]

`create_proxy` with the server's command, as fastmcp's documentation recommends.
"""

import sys

from fastmcp.server import create_proxy

command, *args = sys.argv[1:]
proxy = create_proxy(
    {"mcpServers": {"child": {"command": command, "args": args}}}, name="fastmcp-proxy"
)
proxy.run(show_banner=False)
